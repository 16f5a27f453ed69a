"""The app's gateway: ``polter gateway`` as a child process, restarted when it dies, its events followed.

The gateway is its own process (it imports nothing of the UI, and a crash in one does not take the
other down). The supervisor starts it on 127.0.0.1, learns its URL from the line it prints and its
admin token from ``gateway.json`` (mode 0600, checked to belong to this child), and then follows
``/control/events``: while it does, the app is a *controller* and asks wait for the human. The
gateway's stdin is a pipe the app never writes to (``--stop-with-stdin``): if the app dies, even
by SIGKILL or a closed terminal, the pipe closes and the gateway stops with it.

When the gateway dies, the supervisor starts it again **on the same port**, so every pane's
``POLTER_GATEWAY_URL`` and every CLI's config stay valid, and calls ``on_up`` again so the panes are
re-registered with the tokens they already hold. Restarts back off (0.5 s doubling to 10 s) so a
gateway that cannot start does not spin.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from polter.children import ChildOutput, stop
from polter.errors import GatewayError, GatewayUnavailable, PolterError
from polter.gateway.client import GatewayClient, read_state
from polter.gateway.models import GatewayEvent
from polter.processes import describe_exit

__all__ = ["GatewayProcess", "GatewaySupervisor"]

logger = logging.getLogger(__name__)

START_TIMEOUT: Final = 60.0
"""Seconds a starting gateway may take (it starts every upstream server before it listens)."""
STOP_GRACE: Final = 5.0
BACKOFF_FIRST: Final = 0.5
BACKOFF_MAX: Final = 10.0
_LISTENING = re.compile(r"listening on (http://\S+)")


@dataclass(frozen=True)
class GatewayProcess:
    """One run of the gateway: its process, URL and a control client with its admin token."""

    process: asyncio.subprocess.Process
    url: str
    client: GatewayClient

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


class GatewaySupervisor:
    """Runs and restarts the gateway. Callbacks (all called on the event loop):

    - ``on_up(gateway, restarted)``: the gateway is ready (again); register the panes with it;
    - ``on_event(event)``: an event from ``/control/events`` (asks, audit rows, pane changes...);
    - ``on_down(reason)``: the gateway died; a restart follows.
    """

    def __init__(
        self,
        *,
        state_dir: Path,
        on_up: Callable[[GatewayProcess, bool], Awaitable[None]],
        on_event: Callable[[GatewayEvent], None],
        on_down: Callable[[str], None] = lambda reason: None,
        servers_file: Path | None = None,
        roles_dirs: Sequence[Path] = (),
        ask_timeout: float | None = None,
        pane_socket: Path | None = None,
        python: str = sys.executable,
    ) -> None:
        self.state_dir = state_dir
        self.pane_socket = pane_socket
        """The gateway's socket for the panes' sandboxes (it never serves the control API)."""
        self.servers_file = servers_file
        self.roles_dirs = list(roles_dirs)
        self.ask_timeout = ask_timeout
        self.python = python
        self.on_up, self.on_event, self.on_down = on_up, on_event, on_down
        self.current: GatewayProcess | None = None
        self.starts = 0
        self.output = ChildOutput()
        """Its output, and the tail of its stderr for error messages."""
        self._port = 0
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> GatewayProcess:
        """Start the gateway and wait until it is ready and registered (``on_up``). Raises
        :class:`GatewayError` with the gateway's own words when it cannot start."""
        gateway = await self._spawn()
        await self.on_up(gateway, False)
        self._task = asyncio.create_task(self._supervise(gateway), name="polter-gateway-supervisor")
        return gateway

    @property
    def client(self) -> GatewayClient:
        if self.current is None:
            raise GatewayUnavailable("the gateway is not running (it is starting or restarting)")
        return self.current.client

    @property
    def url(self) -> str | None:
        return self.current.url if self.current is not None else None

    async def aclose(self) -> None:
        """Stop following events and stop the gateway (SIGTERM, then SIGKILL after a grace period)."""
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self.current is not None:
            await stop(self.current.process, STOP_GRACE)
            await self.current.client.aclose()
            self.current = None
        self.output.cancel()

    # -- one run ---------------------------------------------------------------------------------

    def _argv(self) -> list[str]:
        argv = [
            self.python,
            "-m",
            "polter",
            "gateway",
            "--state-dir",
            str(self.state_dir),
            "--port",
            str(self._port),
            "--stop-with-stdin",
        ]
        if self.servers_file is not None:
            argv += ["--servers", str(self.servers_file)]
        for directory in self.roles_dirs:
            argv += ["--roles-dir", str(directory)]
        if self.ask_timeout is not None:
            argv += ["--ask-timeout", str(self.ask_timeout)]
        if self.pane_socket is not None:
            argv += ["--pane-socket", str(self.pane_socket)]
        return argv

    async def _spawn(self) -> GatewayProcess:
        process = await self.output.start(self._argv())
        assert process.stdout is not None
        try:
            url = await asyncio.wait_for(_listening_url(process.stdout), START_TIMEOUT)
        except (TimeoutError, EOFError):
            await stop(process, STOP_GRACE)
            await asyncio.sleep(0)  # let the stderr reader take the last lines
            raise GatewayError(self.output.failure("the gateway did not start")) from None
        self.output.follow(process.stdout, lambda line: None)
        try:
            state = read_state(self.state_dir)
        except PolterError as exc:
            await stop(process, STOP_GRACE)
            raise GatewayError(f"the gateway started but its state file is unusable: {exc}") from exc
        if state.pid != process.pid or state.url != url:
            await stop(process, STOP_GRACE)
            raise GatewayError(f"another gateway wrote {self.state_dir / 'gateway.json'} at the same time")
        self._port = int(url.rsplit(":", 1)[1])
        self.starts += 1
        self.current = GatewayProcess(process, url, GatewayClient(url, state.admin_token))
        return self.current

    # -- supervision -----------------------------------------------------------------------------

    async def _supervise(self, gateway: GatewayProcess) -> None:
        while not self._closing:
            await self._follow(gateway)
            if self._closing:
                return
            code = gateway.process.returncode
            reason = self.output.failure(f"the gateway {describe_exit(code) if code is not None else 'stopped'}")
            logger.warning("%s; restarting it", reason)
            await gateway.client.aclose()
            self.current = None
            self.on_down(reason)
            gateway = await self._restart()
            await self.on_up(gateway, True)

    async def _follow(self, gateway: GatewayProcess) -> None:
        """Follow the gateway's events until its process ends (re-connecting if only the stream drops)."""
        exited = asyncio.create_task(gateway.process.wait())
        delay = BACKOFF_FIRST
        stream: asyncio.Task[None] | None = None
        try:
            while not exited.done():
                stream = asyncio.create_task(self._events(gateway.client))
                await asyncio.wait({stream, exited}, return_when=asyncio.FIRST_COMPLETED)
                if exited.done():
                    return
                try:
                    stream.result()
                    delay = BACKOFF_FIRST  # a clean end of the stream: reconnect at once
                except GatewayError as exc:
                    logger.info("the gateway's event stream broke (%s); reconnecting", exc)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(exited), delay)
                delay = min(delay * 2, BACKOFF_MAX)
        finally:
            for task in (stream, exited):
                if task is not None and not task.done():
                    task.cancel()
            if stream is not None:
                with contextlib.suppress(asyncio.CancelledError, GatewayError):
                    await stream

    async def _events(self, client: GatewayClient) -> None:
        async for event in client.events():
            try:
                self.on_event(event)
            except Exception:
                logger.exception("handling the gateway event %s failed", event.type)

    async def _restart(self) -> GatewayProcess:
        delay = BACKOFF_FIRST
        failures = 0
        while True:
            await asyncio.sleep(delay)
            try:
                return await self._spawn()
            except GatewayError as exc:
                failures += 1
                logger.warning("restarting the gateway failed: %s", exc)
                if failures >= 3 and self._port:
                    logger.warning("port %s stays busy; the gateway moves to a new port", self._port)
                    self._port = 0  # panes must then be restarted to learn the new URL
                delay = min(delay * 2, BACKOFF_MAX)


async def _listening_url(stdout: asyncio.StreamReader) -> str:
    while line := await stdout.readline():
        match = _LISTENING.search(line.decode(errors="replace"))
        if match:
            return match.group(1)
    raise EOFError
