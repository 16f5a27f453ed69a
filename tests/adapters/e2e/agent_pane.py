"""A real AI CLI in a real pane: the adapter prepares it, Polter's PTY runs it, Polter's screen model draws it.

This is what the app does for one pane, minus the widget: ``prepare`` → runtime dir → ``PtyProcess`` →
``TerminalScreen`` (whose replies to terminal queries go back to the CLI, as Codex needs for ``CSI 6n``).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

from polter.adapters import Adapter, AgentState, PaneToPrepare, PreparedPane
from polter.adapters.plugins import RuntimeDir, write_pane_files
from polter.terminal.launch import LaunchSpec
from polter.host.pty import PtyProcess
from polter.terminal.screen import TerminalScreen

__all__ = ["Agent", "run_once"]


OFFLINE = {
    name: "http://127.0.0.1:9"  # nothing listens there: a CLI reaching for the internet fails at once
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
} | {"NO_PROXY": "127.0.0.1,localhost,::1", "no_proxy": "127.0.0.1,localhost,::1"}
"""Tests reach only 127.0.0.1: every other destination goes to a dead proxy."""


def with_home(spec: LaunchSpec, home: Path, path_dirs: list[Path]) -> LaunchSpec:
    """The launch spec with a throwaway HOME (the CLIs write into it), the test's CLIs on PATH, and no way out
    to the internet. Codex also gets a temporary folder of its own beside the home: its home (``CODEX_HOME``, in
    the pane's runtime dir) lies in the system's temporary folder here (the test's tmp_path), where Codex 0.171.0
    refuses to create its sandbox helper when a system bwrap is installed ("Refusing to create helper binaries
    under temporary dir"; every sandboxed command then fails), as it would for a user whose Polter state dir is
    there. (Not for the others: Claude Code puts its sandbox's sockets in it, whose paths must stay short.)"""
    path = os.pathsep.join([*(str(d) for d in path_dirs), os.environ.get("PATH", "/usr/bin:/bin")])
    env = {**spec.env, **OFFLINE, "HOME": str(home), "PATH": path, "LANG": "C.UTF-8"}
    if "CODEX_HOME" in spec.env:
        tmp = Path(home).with_name(f"{Path(home).name}-tmp")
        tmp.mkdir(exist_ok=True)
        env["TMPDIR"] = str(tmp)
    return spec.model_copy(update={"env": env})


def run_once(adapter: Adapter, pane: PaneToPrepare, extra_args: list[str], *, home: Path, path_dirs: list[Path],
             timeout: float = 240, before_args: list[str] | None = None,
             launch_args: bool = True) -> tuple[PreparedPane, subprocess.CompletedProcess[str]]:
    """Run the CLI non-interactively (``-p`` / ``exec``) with the pane's config and environment; return its
    output. ``launch_args=False`` drops the adapter's own arguments (for a CLI's inspection subcommands)."""
    prepared = adapter.prepare(pane)
    spec = with_home(prepared.launch, home, path_dirs)
    with RuntimeDir(pane.runtime_dir):
        write_pane_files(pane.runtime_dir, prepared.files, prepared.homes)
        argv = [spec.argv[0], *(before_args or []), *(spec.argv[1:] if launch_args else ()), *extra_args]
        result = subprocess.run(argv, env=spec.environment(), cwd=spec.cwd, capture_output=True, text=True,
                                timeout=timeout, stdin=subprocess.DEVNULL)
    return prepared, result


class Agent:
    """``async with Agent(adapter, pane, home=..., path_dirs=[...]) as agent: await agent.wait_for("…")``."""

    def __init__(self, adapter: Adapter, pane: PaneToPrepare, *, home: Path, path_dirs: list[Path],
                 columns: int = 120, lines: int = 40) -> None:
        self.adapter = adapter
        self.pane = pane
        self.home = home
        self.path_dirs = path_dirs
        self.columns, self.lines = columns, lines
        self.screen = TerminalScreen(columns, lines, reply=self._reply)
        self.output = bytearray()
        self.prepared: PreparedPane | None = None
        self._runtime = RuntimeDir(pane.runtime_dir)
        self._process: PtyProcess | None = None
        self._changed = asyncio.Event()

    # -- lifecycle ---------------------------------------------------------------------------------

    async def __aenter__(self) -> Agent:
        self.prepared = self.adapter.prepare(self.pane)
        self._runtime.__enter__()
        write_pane_files(self.pane.runtime_dir, self.prepared.files, self.prepared.homes)
        spec = with_home(self.prepared.launch, self.home, self.path_dirs)
        self._process = PtyProcess.spawn(spec, columns=self.columns, lines=self.lines,
                                         on_output=self._on_output, on_exit=lambda _code: self._changed.set())
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._process is not None:
            await self._process.aclose()
        self._runtime.remove()

    def _on_output(self, data: bytes) -> None:
        self.output += data
        self.screen.feed(data)
        self._changed.set()

    def _reply(self, data: bytes) -> None:
        if self._process is not None and self._process.running:
            self._process.write(data)

    # -- reading -----------------------------------------------------------------------------------

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display())

    async def wait_for(self, needle: str, timeout: float = 90.0) -> str:
        """Wait until ``needle`` is on the screen; the screen text."""
        await self.wait_until(lambda: needle in self.text(), f"{needle!r} to appear", timeout)
        return self.text()

    async def wait_for_state(self, state: AgentState, timeout: float = 60.0) -> None:
        """Wait until the adapter reads ``state`` from the screen."""
        await self.wait_until(lambda: self.adapter.state(self.screen) == state, f"the state {state.value!r}", timeout)

    async def wait_until(self, condition: Callable[[], bool], what: str, timeout: float) -> None:
        """Wait until ``condition()`` holds, checking each time the CLI draws."""
        deadline = asyncio.get_running_loop().time() + timeout
        while not condition():
            if self._process is not None and not self._process.running:
                raise AssertionError(f"the CLI exited ({self._process.returncode}) before {what}:\n{self.text()}")
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"waited {timeout}s for {what}; the screen:\n{self.text()}")
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), remaining)
            except TimeoutError:
                pass

    async def wait_until_quiet(self, quiet: float = 0.5, timeout: float = 30.0) -> None:
        """Wait until the CLI has drawn nothing for ``quiet`` seconds (it is waiting for us)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline:
            self._changed.clear()
            try:
                await asyncio.wait_for(self._changed.wait(), quiet)
            except TimeoutError:
                return

    # -- typing ------------------------------------------------------------------------------------

    async def type(self, text: str) -> None:
        """Type like a person: the text, then (once the CLI shows it) Enter."""
        assert self._process is not None
        self._process.write(text.encode())
        await self.wait_for(text[-20:], timeout=30)
        await self.wait_until_quiet(0.3)
        self._process.write(b"\r")

    def press(self, keys: bytes) -> None:
        assert self._process is not None
        self._process.write(keys)

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.running
