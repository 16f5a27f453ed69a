"""Taking a changed servers file into a running gateway: ``POST /control/servers/reload``
(``polter servers reload``) and the file watcher.

A file with problems changes nothing: the servers keep running as they are and the problems are
reported (the watcher logs them and tells controllers). Otherwise new servers start and get their
``/mcp/<name>`` endpoint, removed ones stop (their calls in flight end with an error and their sessions
close), and a server whose entry changed is restarted with it on the same endpoint, its sessions kept.
Panes whose CLI was launched before a server was added learn its URL when they are launched again.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from polter.gateway.core import Gateway
from polter.gateway.endpoint_set import EndpointSet
from polter.gateway.models import ServersReload
from polter.servers import check_servers, watch_file

__all__ = ["NoServersFile", "reload_servers", "watch_servers"]

logger = logging.getLogger(__name__)


class NoServersFile(LookupError):
    """The gateway was given its servers directly, not by a file it could read again."""


async def reload_servers(gateway: Gateway, endpoints: EndpointSet) -> ServersReload:
    path = gateway.config.servers_file
    if path is None:
        raise NoServersFile("this gateway was started without a servers file; there is nothing to reload")
    async with endpoints.changing:  # the watcher and a reload command may come at once
        return await _reload(gateway, endpoints, path)


async def _reload(gateway: Gateway, endpoints: EndpointSet, path: Path) -> ServersReload:
    found, problems = await asyncio.to_thread(check_servers, path)  # a missing file is a problem, not "no servers"
    if problems:
        report = ServersReload(
            file=str(path), applied=False, unchanged=gateway.pool.names, problems=[str(problem) for problem in problems]
        )
        gateway.events.publish("servers", report)
        return report
    wanted = {name: config for name, config in found.items() if config.enabled}
    running = {name: upstream.config for name, upstream in gateway.pool.upstreams.items()}
    report = ServersReload(
        file=str(path),
        applied=True,
        added=[name for name in wanted if name not in running],
        removed=[name for name in running if name not in wanted],
        reconfigured=[name for name in wanted if name in running and running[name] != wanted[name]],
        unchanged=[name for name in wanted if name in running and running[name] == wanted[name]],
    )
    for name in report.removed:
        await endpoints.remove(name)  # new requests get 404 before the upstream goes
        await gateway.pool.remove(name)
        gateway.policy.forget(server=name)
    for name in report.reconfigured:
        upstream = gateway.pool.get(name)
        assert upstream is not None
        upstream.reconfigure(wanted[name])
    for name in report.added:
        gateway.pool.add(name, wanted[name])
        await endpoints.add(name)
    for line in report.changes():
        logger.info("servers: %s", line)
    gateway.events.publish("servers", report)
    return report


async def watch_servers(gateway: Gateway, endpoints: EndpointSet, path: Path) -> None:
    """Reload whenever the servers file is written."""
    try:
        async for _written in watch_file(path):
            report = await reload_servers(gateway, endpoints)
            for problem in report.problems:
                logger.warning("servers file not applied: %s", problem)
    except asyncio.CancelledError:
        raise
    except Exception:
        logger.exception("the servers-file watcher stopped; reload with `polter servers reload`")
