"""The session host's side of the egress proxy: ``polter egress`` as a child process, restarted when it dies.

Without the proxy a sandboxed pane has no network at all (it fails closed), so the supervisor notices at
once (the process ends), tells the host (``on_down``, for a notice), and starts it again with backoff
(0.5 s doubling to 10 s), replaying every pane: the proxy re-creates each pane's socket at the same path,
and since a sandbox bind-mounts the socket's *folder*, the new socket is what the pane sees.

Like the gateway, the proxy's stdin is a pipe only this process writes to: when the session host ends,
however it ends, the pipe closes and the proxy stops with it. Commands are JSON lines on that pipe; the
proxy answers each on stdout (``pane_ready`` waits for the answer to a pane's ``add``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from polter.children import ChildOutput, stop
from polter.errors import EgressError
from polter.processes import describe_exit

__all__ = ["EgressSupervisor"]

logger = logging.getLogger(__name__)

READY_LINE: Final = "egress ready"
"""What the proxy prints once it takes commands (:data:`polter.sandbox.egress.READY_LINE`)."""
START_TIMEOUT: Final = 30.0
STOP_GRACE: Final = 3.0
BACKOFF_FIRST: Final = 0.5
BACKOFF_MAX: Final = 10.0


class EgressSupervisor:
    """Runs and restarts ``polter egress``; every method but ``start``/``aclose``/``pane_ready`` is sync and
    may be called whether or not the proxy runs right now (the panes are replayed when it is back).

    - ``on_down(reason)``: the proxy died; panes have no network until it is back (a restart follows);
    - ``on_up(restarted)``: the proxy listens again and every pane was replayed.
    """

    def __init__(
        self,
        *,
        on_down: Callable[[str], None] = lambda reason: None,
        on_up: Callable[[bool], None] = lambda restarted: None,
        python: str = sys.executable,
        test_hosts: Mapping[str, str] | None = None,
    ) -> None:
        self.on_down, self.on_up = on_down, on_up
        self.python = python
        self.test_hosts = dict(test_hosts or {})
        """Tests only: host names the proxy resolves to these addresses, exempt from its loopback refusal."""
        self.process: asyncio.subprocess.Process | None = None
        self.starts = 0
        self.output = ChildOutput()
        """Its output, and the tail of its stderr for error messages."""
        self._panes: dict[str, dict[str, Any]] = {}
        self._ready: dict[str, asyncio.Future[None]] = {}
        self._stats: asyncio.Future[dict[str, Any]] | None = None
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the proxy and wait until it takes commands; raises :class:`EgressError` with its words."""
        await self._spawn()
        self._task = asyncio.create_task(self._supervise(), name="polter-egress-supervisor")
        self.on_up(False)

    async def aclose(self) -> None:
        """Stop the proxy: its stdin closes (it removes its sockets and exits), then SIGTERM, then SIGKILL."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.process is not None:
            await stop(self.process, STOP_GRACE, stdin_first=True)
            self.process = None
        self.output.cancel()
        self._fail_waiters("the egress proxy was stopped")

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None and self.process.returncode is None else None

    # -- panes -----------------------------------------------------------------------------------

    def add_pane(
        self,
        pane_id: str,
        *,
        socket: str,
        token: str,
        gateway: str,
        project: str,
        role: str,
        model_hosts: Iterable[str] = (),
        loopback_ports: Iterable[int] = (),
    ) -> None:
        """Give a pane its socket (or update a known pane: its role, token, declared hosts)."""
        command = {
            "op": "add",
            "pane": pane_id,
            "socket": socket,
            "token": token,
            "gateway": gateway,
            "project": project,
            "role": role,
            "model_hosts": list(model_hosts),
            "loopback_ports": list(loopback_ports),
        }
        self._panes[pane_id] = command
        self._expect(pane_id)
        self._send(command)

    def rename_role(self, pane_id: str, role: str) -> None:
        """The pane switched roles: its refusals name the new one (the gateway decides by the new one already)."""
        command = self._panes.get(pane_id)
        if command is not None and command["role"] != role:
            command["role"] = role
            self._expect(pane_id)
            self._send(command)

    def remove_pane(self, pane_id: str) -> None:
        """Close a pane's socket and cut its open connections."""
        if self._panes.pop(pane_id, None) is not None:
            self._send({"op": "remove", "pane": pane_id})
        waiter = self._ready.pop(pane_id, None)
        if waiter is not None and not waiter.done():
            waiter.set_exception(EgressError(f"pane {pane_id} was removed"))
            waiter.exception()  # retrieved: nobody may be waiting

    def set_gateway(self, url: str) -> None:
        """The gateway moved (it restarted on another port): every pane's decisions go to ``url``. Commands
        apply in order, so any answer that follows (``pane_ready``, ``stats``) comes after this took effect."""
        for command in self._panes.values():
            command["gateway"] = url
        self._send({"op": "gateway", "url": url})

    async def pane_ready(self, pane_id: str, *, timeout: float = START_TIMEOUT) -> None:
        """Wait until the proxy listens on the pane's socket; raises :class:`EgressError` if it cannot."""
        waiter = self._ready.get(pane_id)
        if waiter is None:
            raise EgressError(f"pane {pane_id} was not added to the egress proxy")
        try:
            await asyncio.wait_for(asyncio.shield(waiter), timeout)
        except TimeoutError:
            raise EgressError(f"the egress proxy did not take pane {pane_id} within {timeout:.0f} s") from None

    async def stats(self, *, timeout: float = 10.0) -> dict[str, Any]:
        """The proxy's counts: panes, open connections, connections served and refused per pane."""
        self._stats = asyncio.get_running_loop().create_future()
        self._send({"op": "stats"})
        return await asyncio.wait_for(self._stats, timeout)

    # -- the process -----------------------------------------------------------------------------

    def _argv(self) -> list[str]:
        argv = [self.python, "-m", "polter", "egress"]
        for name, address in self.test_hosts.items():
            argv += ["--test-host", f"{name}={address}"]
        return argv

    async def _spawn(self) -> None:
        process = await self.output.start(self._argv())
        assert process.stdout is not None
        try:
            line = await asyncio.wait_for(process.stdout.readline(), START_TIMEOUT)
        except TimeoutError:
            line = b""
        if line.decode(errors="replace").strip() != READY_LINE:
            await stop(process, STOP_GRACE, stdin_first=True)
            await asyncio.sleep(0)  # let the stderr reader take the last lines
            raise EgressError(self.output.failure("the egress proxy did not start"))
        self.process = process
        self.starts += 1
        self.output.follow(process.stdout, self._on_reply)
        for pane_id, command in self._panes.items():
            self._expect(pane_id)
            self._send(command)

    def _send(self, command: dict[str, Any]) -> None:
        process = self.process
        if process is None or process.stdin is None or process.returncode is not None:
            return  # replayed when the proxy is back
        try:
            process.stdin.write((json.dumps(command) + "\n").encode())
        except (ConnectionError, RuntimeError) as exc:
            logger.info("the egress proxy's stdin is closed (%s); the command is replayed after its restart", exc)

    def _expect(self, pane_id: str) -> None:
        waiter = self._ready.get(pane_id)
        if waiter is None or waiter.done():
            self._ready[pane_id] = asyncio.get_running_loop().create_future()

    def _on_reply(self, line: str) -> None:
        try:
            reply = json.loads(line)
        except ValueError:
            logger.warning("the egress proxy printed %r", line[:200])
            return
        if reply.get("op") == "stats" and self._stats is not None and not self._stats.done():
            self._stats.set_result(reply.get("stats", {}))
        if reply.get("op") != "add":
            if not reply.get("ok"):
                logger.warning("the egress proxy refused a command: %s", reply.get("error"))
            return
        waiter = self._ready.get(str(reply.get("pane")))
        if waiter is None or waiter.done():
            return
        if reply.get("ok"):
            waiter.set_result(None)
        else:
            waiter.set_exception(
                EgressError(f"the egress proxy cannot serve pane {reply.get('pane')}: {reply.get('error')}")
            )
            waiter.exception()  # retrieved here; pane_ready raises it again for whoever waits

    def _fail_waiters(self, reason: str) -> None:
        for waiter in self._ready.values():
            if not waiter.done():
                waiter.set_exception(EgressError(reason))
                waiter.exception()

    # -- supervision -----------------------------------------------------------------------------

    async def _supervise(self) -> None:
        while not self._closing:
            assert self.process is not None
            code = await self.process.wait()
            if self._closing:
                return
            await asyncio.sleep(0)  # let the stderr reader take the last lines
            reason = self.output.failure(f"the egress proxy {describe_exit(code)}")
            logger.warning("%s; restarting it", reason)
            self.process = None
            self.on_down(reason)
            await self._restart()
            self.on_up(True)

    async def _restart(self) -> None:
        delay = BACKOFF_FIRST
        while True:
            await asyncio.sleep(delay)
            try:
                await self._spawn()
                return
            except (EgressError, OSError) as exc:
                logger.warning("restarting the egress proxy failed: %s", exc)
                delay = min(delay * 2, BACKOFF_MAX)
