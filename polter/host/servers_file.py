"""The servers file the session's gateway serves: the user's servers file (followed while the session runs)
plus the session's own servers (the config file's, the backends'), which win.

The host writes it into its run dir, whole (the gateway watches it and applies each version). When the
user's file changes it is written again; a broken user's file changes nothing and is reported with its
problems.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Final

import tomli_w

from polter.errors import ConfigError
from polter.gateway.models import ServersReload
from polter.servers import ServerConfig, check_servers, load_servers, watch_file

__all__ = ["SERVERS_FILE", "ServersFile"]

logger = logging.getLogger(__name__)

SERVERS_FILE: Final = "servers.toml"


class ServersFile:
    """The gateway's servers file in ``run_dir``. ``servers`` are the session's own; ``user_file`` the user's
    servers file (None or missing: no servers from it); ``on_problems`` hears of a broken version of it."""

    def __init__(
        self,
        run_dir: Path,
        servers: dict[str, ServerConfig],
        user_file: Path | None,
        *,
        on_problems: Callable[[ServersReload], None],
    ) -> None:
        self.path = run_dir / SERVERS_FILE
        self.servers = dict(servers)
        """The session's own servers; they win over the user's file's."""
        self.user_file = user_file
        self._from_file: dict[str, ServerConfig] = {}
        self._on_problems = on_problems

    async def read_user_file(self) -> None:
        """Take the user's file as it is now (raises :class:`ConfigError` with its file:line for a broken one)."""
        if self.user_file is not None:
            self._from_file = await asyncio.to_thread(load_servers, self.user_file, expand=False)

    def write(self) -> None:
        """Write the gateway's file: the user's servers and the session's (replaced whole: the gateway watches it)."""
        servers = {
            name: config.model_dump(exclude_defaults=True)
            for name, config in {**self._from_file, **self.servers}.items()
        }
        temporary = self.path.with_name(f"{SERVERS_FILE}.tmp")
        temporary.write_text(tomli_w.dumps({"servers": servers}), encoding="utf-8")
        temporary.chmod(0o600)
        temporary.replace(self.path)

    async def follow(self, known: Callable[[], list[str]]) -> None:
        """Take each version of the user's file into the gateway's, unless it has problems (``known()``: the
        names of the servers the gateway serves, which a broken version leaves as they are)."""
        path = self.user_file
        if path is None:
            return
        try:
            async for _written in watch_file(path):
                found, problems = await asyncio.to_thread(_read_servers, path)
                if problems:
                    self._on_problems(
                        ServersReload(
                            file=str(path),
                            applied=False,
                            unchanged=known(),
                            problems=[str(problem) for problem in problems],
                        )
                    )
                    continue
                self._from_file = found
                await asyncio.to_thread(self.write)
        except Exception:
            logger.exception("following %s stopped; restart Polter to apply its changes", path)


def _read_servers(path: Path) -> tuple[dict[str, ServerConfig], list[ConfigError]]:
    """The enabled servers of the user's file with ``${VAR}`` as written (the gateway expands them), and
    its problems, checked with ``${VAR}`` expanded as the gateway will. No file: no servers, as at the start."""
    if not path.exists():
        return {}, []
    problems = check_servers(path)[1]
    found = {} if problems else check_servers(path, expand=False)[0]
    return {name: config for name, config in found.items() if config.enabled}, problems
