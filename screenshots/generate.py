"""Regenerate the README's screenshots (SVG) by driving the real app headless: ``make screenshots``.

Each shot is an async function that gets a fresh app under ``run_test`` and returns when the
screen shows what it should; the SVG is written next to this file as ``<name>.svg``.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from textual.pilot import Pilot

from polter.terminal.launch import LaunchSpec
from polter.terminal.widget import TerminalView
from polter.ui.app import PolterApp
from polter.ui.multiplexer import MultiplexerScreen

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZE = (140, 40)
PROMPT = r"\[\e[1;36m\]~/polter\[\e[0m\] \[\e[1;32m\]$\[\e[0m\] "


def shell(title: str) -> LaunchSpec:
    bash = shutil.which("bash") or "/bin/bash"
    return LaunchSpec(argv=(bash, "--norc", "--noprofile"), env={"PS1": PROMPT}, cwd=ROOT, title=title)


async def until(condition: Callable[[], object], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the screen never showed what the screenshot needs")
        await asyncio.sleep(0.02)


def shows(terminal: TerminalView, text: str) -> bool:
    return terminal.screen_model is not None and text in "\n".join(terminal.screen_model.display())


async def type_line(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*text, "enter")


async def four_panes(app: PolterApp, pilot: Pilot[None]) -> None:
    """The default layout: four panes, one of them an exited program, one a full-screen pager."""
    one, two, three, four = (pane.terminal for pane in app.multiplexer.grid.panes)
    await until(lambda: all(shows(terminal, "$") for terminal in (one, two, four)))
    await type_line(pilot, "ls --color=always -p polter/terminal polter/ui")
    await until(lambda: shows(one, "widget.py"))
    await pilot.press("ctrl+b", "2")
    await type_line(pilot, "git log --color=always --format='%C(yellow)%h%Creset %<(52,trunc)%s' -14")
    await until(lambda: shows(two, "$ \n") or sum(line.startswith("~/polter") for line in two.screen_model.display()) >= 2)
    await pilot.press("ctrl+b", "4")
    await type_line(pilot, "less -R README.md")
    await until(lambda: four.screen_model is not None and four.screen_model.alternate_screen and shows(four, "Polter"))
    await until(lambda: three.returncode is not None)
    await pilot.press("ctrl+b", "1")
    await pilot.pause()


SHOTS: dict[str, tuple[Callable[[], PolterApp], Callable[[PolterApp, Pilot[None]], Awaitable[None]]]] = {
    "multiplexer": (
        lambda: PolterApp([
            shell("bash"),
            shell("bash"),
            LaunchSpec(argv=("sh", "-c", r"printf '412 passed, \033[1;31m2 failed\033[0m in 38.1s\n'; exit 1"),
                       cwd=ROOT, title="make test"),
            shell("bash"),
        ]),
        four_panes,
    ),
}


async def take(name: str) -> Path:
    make_app, drive = SHOTS[name]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: isinstance(app.screen, MultiplexerScreen))
        await drive(app, pilot)
        path = Path(app.save_screenshot(f"{name}.svg", str(HERE)))
    return path


def main(names: list[str]) -> int:
    for name in names or list(SHOTS):
        print(asyncio.run(take(name)).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
