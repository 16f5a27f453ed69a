"""Regenerate the README's screenshots (SVG) by driving the real app headless: ``make screenshots``.

Each shot is an async function that gets a fresh app under ``run_test`` and returns when the
screen shows what it should; the SVG is written next to this file as ``<name>.svg``. The shots of
agents under roles are scripted runs of ``polter --demo`` (the real gateway, the Terraria server
and the TShock simulator; the agents are the demo's scripted ones, so no model is involved).
``python screenshots/generate.py NAME ...`` makes only those.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App
from textual.pilot import Pilot

from polter.terminal.launch import LaunchSpec
from polter.window.terminal_view import TerminalView
from polter.window.session_screen import SessionScreen

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.session import HostedApp  # noqa: E402  (the app with its session host in the same process)
from support.waiting import wait_until  # noqa: E402  (the tests' one way to wait: poll with a deadline)
from support.workspace_app import wait_until_settled  # noqa: E402

until = partial(wait_until, timeout=60)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZE = (160, 46)
PROMPT = r"\[\e[1;36m\]~/polter\[\e[0m\] \[\e[1;32m\]$\[\e[0m\] "


def shell(title: str) -> LaunchSpec:
    bash = shutil.which("bash") or "/bin/bash"
    return LaunchSpec(argv=(bash, "--norc", "--noprofile"), env={"PS1": PROMPT}, cwd=ROOT, title=title)


def shows(terminal: TerminalView, text: str) -> bool:
    return terminal.screen_model is not None and text in "\n".join(terminal.screen_model.display())


async def type_line(pilot: Pilot[None], text: str) -> None:
    await pilot.press(*text, "enter")


async def four_panes(app: HostedApp, pilot: Pilot[None]) -> None:
    """The default layout: four panes, one of them an exited program, one a full-screen pager."""
    one, two, three, four = (pane.terminal for pane in app.session_screen.grid.panes)
    await until(lambda: all(shows(terminal, "$") for terminal in (one, two, four)))
    await type_line(pilot, "ls --color=always -p polter/terminal polter/window")
    await until(lambda: shows(one, "terminal_view.py"))
    await pilot.press("ctrl+b", "2")
    await type_line(pilot, "git log --color=always --format='%C(yellow)%h%Creset %<(52,trunc)%s' -14")
    await until(lambda: shows(two, "$ \n") or sum(line.startswith("~/polter") for line in two.screen_model.display()) >= 2)
    await pilot.press("ctrl+b", "4")
    await type_line(pilot, "less -R README.md")
    await until(lambda: four.screen_model is not None and four.screen_model.alternate_screen and shows(four, "Polter"))
    [_, _, third, _] = app.session_screen.grid.panes
    await until(lambda: third.remote.state.status_kind == "exited")
    await pilot.press("ctrl+b", "1")
    await pilot.pause()


def demo_app() -> HostedApp:
    """``polter --demo`` with the human's shell as a quiet bash (the same prompt on every machine)."""
    from polter.adapters.plugins import discover
    from polter.demo.launch import demo_launch

    os.environ["PS1"] = PROMPT
    launch = demo_launch(discover(entry_points=False))
    shell = launch.plans[3]
    bash = shutil.which("bash") or "/bin/bash"
    launch.plans[3] = dataclasses.replace(shell, setup=shell.setup.model_copy(
        update={"command": [bash, "--norc", "--noprofile"], "cwd": ROOT}))
    return HostedApp(launch=launch)


async def demo_ready(app: HostedApp) -> list[Any]:
    await until(lambda: app._session_screen is not None and app.session_screen.ready, timeout=120)
    await until(lambda: len(app.session_screen.grid.panes) == 4)
    panes = app.session_screen.grid.panes
    for pane in panes[:3]:
        await until(lambda: shows(pane.terminal, "you>"), timeout=60)  # noqa: B023
    app.clear_notifications()
    return panes


async def say(pilot: Pilot[None], pane: Any, line: str) -> None:
    pane.terminal.focus()
    await pilot.pause()
    await type_line(pilot, line)


async def demo_story(app: HostedApp, pilot: Pilot[None]) -> list[Any]:
    """The admin asks for rain (the gate refuses the agent's hardmode), the moderator who is online, the
    researcher for rain (refused: its role only reads), and the human's own shell tries the same."""
    admin, moderator, researcher, shell = await demo_ready(app)
    await say(pilot, admin, "make it rain")
    await until(lambda: shows(admin.terminal, "Polter refused terraria/world_hardmode"), timeout=60)
    await say(pilot, moderator, "who is online")
    await until(lambda: shows(moderator.terminal, "online:"), timeout=60)
    await say(pilot, researcher, "make it rain")
    await until(lambda: "\n".join(researcher.terminal.screen_model.display()).count("Polter refused") >= 2, timeout=60)
    await say(pilot, shell, "polter call terraria/world_rain")
    await until(lambda: shows(shell.terminal, "Polter refused"), timeout=60)
    await wait_until_settled(app)
    admin.terminal.focus()
    await pilot.pause()
    return [admin, moderator, researcher, shell]


async def agents(app: HostedApp, pilot: Pilot[None]) -> None:
    await demo_story(app, pilot)
    app.clear_notifications()
    await pilot.pause()


async def palette(app: HostedApp, pilot: Pilot[None]) -> None:
    """The palette switching the researcher's role: the sub-palette of roles for pane 3."""
    from textual.command import CommandList, CommandPalette

    _admin, _moderator, researcher, _shell = await demo_story(app, pilot)
    researcher.terminal.focus()
    await pilot.pause()
    await pilot.press("ctrl+b", "colon")
    await until(lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*"switch the role of pane 3")
    hits = app.screen.query_one(CommandList)
    await until(lambda: hits.option_count and "pane 3" in str(hits.get_option_at_index(0).prompt))
    await pilot.press("down", "enter")
    await until(lambda: isinstance(app.screen, CommandPalette) and app.screen.query_one(CommandList).option_count >= 3)
    await pilot.press(*"terraria-mod")
    hits = app.screen.query_one(CommandList)
    await until(lambda: hits.option_count and "moderator" in str(hits.get_option_at_index(0).prompt))
    await pilot.press("down")
    await pilot.pause(0.3)


async def ask(app: HostedApp, pilot: Pilot[None]) -> None:
    """The human said "hardmode" in the admin's pane: now the gateway asks, over that pane."""
    from polter.window.ask_screen import AskScreen

    admin, *_ = await demo_story(app, pilot)
    await say(pilot, admin, "turn on hardmode")
    await until(lambda: isinstance(app.screen, AskScreen) and app.screen.armed, timeout=60)
    app.clear_notifications()
    await pilot.pause(1.1)  # the modal's countdown ticks once a second; let it settle


async def audit(app: HostedApp, pilot: Pilot[None]) -> None:
    """The audit log after the story, the hardmode ask answered."""
    from polter.window.ask_screen import AskScreen
    from polter.window.audit_screen import AuditScreen

    admin, *_ = await demo_story(app, pilot)
    await say(pilot, admin, "turn on hardmode")
    await until(lambda: isinstance(app.screen, AskScreen) and app.screen.armed, timeout=60)
    await pilot.press("a")
    await until(lambda: shows(admin.terminal, "Hardmode is now on"), timeout=60)
    app.session_screen.agents.show_audit()
    await until(lambda: isinstance(app.screen, AuditScreen))
    app.clear_notifications()
    await pilot.pause(0.3)


async def review_app() -> App[None]:
    """The review screen on a real worktree of a small repository made for the shot."""
    from polter.window.review_app import ReviewApp

    return ReviewApp(await example_worktree())


async def example_worktree() -> Any:
    """A repository in a temp dir whose pane committed a feature and has more work uncommitted."""
    import subprocess
    import tempfile

    from polter.worktrees import open_worktree

    def run(cwd: Path, script: str) -> None:
        subprocess.run(["sh", "-c", script], cwd=cwd, check=True, capture_output=True)

    repo = Path(tempfile.mkdtemp(prefix="polter-review-")) / "shop"
    repo.mkdir()
    run(repo, "git init -q -b main && git config user.name Ada && git config user.email ada@example.com")
    (repo / "shop").mkdir()
    (repo / "shop" / "cart.py").write_text(CART)
    (repo / "README.md").write_text("# shop\n\nA small shop.\n")
    run(repo, "git add . && git commit -qm 'first'")
    worktree = (await open_worktree(repo, title="coder")).worktree
    (worktree.path / "shop" / "cart.py").write_text(CART_WITH_DISCOUNT)
    (worktree.path / "shop" / "discounts.py").write_text(DISCOUNTS)
    run(worktree.path, "git add . && git commit -qm 'cart: discount codes'")
    never_negative = CART_WITH_DISCOUNT.replace("round(total, 2)", "max(round(total, 2), 0.0)")
    (worktree.path / "shop" / "cart.py").write_text(never_negative)
    (worktree.path / "tests").mkdir()
    (worktree.path / "tests" / "test_discounts.py").write_text(TEST_DISCOUNTS)
    return worktree


CART = """\
from dataclasses import dataclass, field


@dataclass
class Cart:
    items: dict[str, float] = field(default_factory=dict)

    def add(self, name: str, price: float) -> None:
        self.items[name] = price

    def total(self) -> float:
        total = sum(self.items.values())
        return round(total, 2)
"""
CART_WITH_DISCOUNT = """\
from dataclasses import dataclass, field

from shop.discounts import Discount, lookup


@dataclass
class Cart:
    items: dict[str, float] = field(default_factory=dict)
    discount: Discount | None = None

    def add(self, name: str, price: float) -> None:
        self.items[name] = price

    def apply(self, code: str) -> None:
        self.discount = lookup(code)

    def total(self) -> float:
        total = sum(self.items.values())
        if self.discount is not None:
            total -= self.discount.off(total)
        return round(total, 2)
"""
DISCOUNTS = """\
from dataclasses import dataclass


@dataclass(frozen=True)
class Discount:
    code: str
    percent: int

    def off(self, total: float) -> float:
        return total * self.percent / 100


CODES = {"SPRING10": Discount("SPRING10", 10)}


def lookup(code: str) -> Discount:
    return CODES[code.upper()]
"""
TEST_DISCOUNTS = """\
from shop.cart import Cart


def test_a_code_takes_its_percentage_off() -> None:
    cart = Cart()
    cart.add("tea", 20.0)
    cart.apply("spring10")
    assert cart.total() == 18.0
"""


async def review(app: App[None], pilot: Pilot[None]) -> None:
    """The review of a pane's worktree, on the file with both committed and uncommitted changes."""
    from polter.window.worktree_screen import WorktreeReviewScreen

    await until(lambda: isinstance(app.screen, WorktreeReviewScreen) and app.screen.data is not None)
    await until(lambda: "uncommitted in the worktree" in app.screen.query_one("#review-diff").text)
    await pilot.pause(0.3)


def team_app() -> HostedApp:
    """A coder in a shell pane and a reviewer (bundled roles) running the scripted agent (messages go only to
    programs that read prompts), for the team tools (docs/team.md)."""
    from polter.adapters.plugins import discover
    from polter.launch.config import PaneSetup
    from polter.launch.planning import Launch, PanePlan

    os.environ["PS1"] = PROMPT
    registry = discover(entry_points=False)
    bash = shutil.which("bash") or "/bin/bash"
    commands = {"lead": [bash, "--norc", "--noprofile"], "review": [sys.executable, "-m", "polter.demo.agent"]}
    plans = [PanePlan(PaneSetup(adapter="shell", role=role, title=title, cwd=ROOT, command=commands[title]),
                      registry.get("shell"), "the screenshot") for role, title in (("coder", "lead"), ("reviewer", "review"))]
    return HostedApp(launch=Launch(plans, registry))


async def team_handoff(app: HostedApp, pilot: Pilot[None]) -> None:
    """Pane 1 (coder) hands pane 2 (reviewer) a task while it works: the header shows who sent it and the queue."""
    from polter.gateway.client import pane_client

    await until(lambda: app.host.ready and len(app.session_screen.grid.panes) == 2)
    lead, review = app.session_screen.grid.panes
    await until(lambda: shows(lead.terminal, "$") and shows(review.terminal, "you>"))
    token = app.host.panes[0].agent.token  # type: ignore[union-attr]
    async with pane_client("polter", url=app.host.workspace.url, token=token) as client:
        await client.call_tool("send", {"pane": 2, "message": "work 20"})
        await until(lambda: shows(review.terminal, "[from pane 1 · coder]"))
        await client.call_tool("send", {"pane": 2, "message": "Review polter/host/team.py; answer with send"})
    await until(lambda: review.remote.state.agent is not None and review.remote.state.agent.queued == 1)
    review.terminal.focus()
    await pilot.pause(0.5)


async def team_view(app: HostedApp, pilot: Pilot[None]) -> None:
    """The team view: the floor server's calls in the audit, live."""
    from polter.window.audit_screen import AuditScreen

    await team_handoff(app, pilot)
    app.session_screen.agents.show_team()
    await until(lambda: isinstance(app.screen, AuditScreen) and app.screen.shown >= 2)
    await pilot.pause(0.3)


SHOTS: dict[str, tuple[Callable[[], Any], Callable[[Any, Pilot[None]], Awaitable[None]]]] = {
    "team": (team_app, team_handoff),
    "team-view": (team_app, team_view),
    "agents": (demo_app, agents),
    "palette": (demo_app, palette),
    "ask": (demo_app, ask),
    "audit": (demo_app, audit),
    "multiplexer": (
        lambda: HostedApp([
            shell("bash"),
            shell("bash"),
            LaunchSpec(argv=("ls", "--color=always", "roles", "no-such-role.toml"), cwd=ROOT, title="ls roles"),
            shell("bash"),
        ]),
        four_panes,
    ),
    "worktree-review": (review_app, review),
}


async def take(name: str) -> Path:
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix=f"polter-screenshot-{name}-"))
    os.environ["POLTER_CONFIG_DIR"] = str(scratch / "config")  # the bundled roles only, no user servers
    os.environ["POLTER_STATE_DIR"] = str(scratch / "state")  # a fresh audit log for each shot
    os.environ["POLTER_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="pr-")  # the session's socket (a short path)
    os.environ["POLTER_WORKTREES_DIR"] = str(scratch / "worktrees")
    make_app, drive = SHOTS[name]
    app = make_app()
    if inspect.isawaitable(app):
        app = await app
    async with app.run_test(size=SIZE) as pilot:
        if isinstance(app, HostedApp):
            await until(lambda: isinstance(app.screen, SessionScreen), timeout=60)
            await until(lambda: len(app.session_screen.grid.panes) == len(app.host.panes) and app.host.panes, timeout=60)
        try:
            await drive(app, pilot)
        except TimeoutError:
            print(f"{name}: timed out; what the screen showed is in {app.save_screenshot(f'{name}-failed.svg', '/tmp')}")
            raise
        path = Path(app.save_screenshot(f"{name}.svg", str(HERE)))
    return path


def main(names: list[str]) -> int:
    for name in names or list(SHOTS):
        print(asyncio.run(take(name)).relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
