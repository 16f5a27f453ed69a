"""The multiplexer driven like a user would: real bash in real PTYs in a session host, keys through
Textual's Pilot in a window attached to it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from support.keys import type_keys
from support.dialogs import confirm_shown
from support.panes import bash_spec, runs_in_foreground, screen_text, wait_for_prompt, wait_for_text
from support.privates import notification_messages
from support.processes import process_running
from support.session import host_pane, hosted, window
from support.waiting import wait_until
from textual.pilot import Pilot

from polter.errors import ConfigError
from polter.host.session_host import SessionHost
from polter.launch.planning import Launch
from polter.terminal.launch import LaunchSpec
from polter.host.pty import PtyProcess, session_processes
from polter.window.terminal_view import TerminalView
from polter.window import SCREEN_FPS
from polter.window.app import PolterApp
from polter.window.leave_screen import LeaveScreen
from polter.window.session_screen import SessionScreen
from polter.window.pane import PaneWidget


@asynccontextmanager
async def polter(
    specs: list[LaunchSpec] | None = None, *, size: tuple[int, int] = (120, 36), **options: Any
) -> AsyncIterator[tuple[PolterApp, Pilot[None], SessionHost]]:
    """A session of four quiet bash panes (or ``specs``) and a window on it, each pane at its prompt."""
    launch = Launch(plans=[], **options) if options else None
    async with hosted(specs or [bash_spec() for _ in range(4)], launch=launch) as host:
        async with window(host, size=size) as (app, pilot):
            await wait_for_prompt(
                *(pane.terminal for pane in panes(app) if host_pane(host, pane).terminal.spec.argv[0].endswith("bash"))
            )
            yield app, pilot, host


def panes(app: PolterApp) -> list[PaneWidget]:
    return app.session_screen.grid.panes


def focused_pane(app: PolterApp) -> PaneWidget:
    focused = app.focused
    assert isinstance(focused, TerminalView), f"focus is on {focused!r}"
    assert isinstance(focused.parent, PaneWidget)
    return focused.parent


def process(host: SessionHost, pane: PaneWidget) -> PtyProcess | None:
    """The pane's program, as the session host runs it."""
    return host_pane(host, pane).terminal.process


async def type_line(pilot: Pilot[None], text: str) -> None:
    await type_keys(pilot, text, enter=True)


async def test_typing_into_a_pane_runs_the_command_in_bash() -> None:
    async with polter() as (app, pilot, host):
        first = panes(app)[0]
        assert focused_pane(app) is first
        await type_line(pilot, "echo $((6*7)) done")
        await wait_for_text(first.terminal, "42 done")
        assert "42" not in screen_text(panes(app)[1].terminal)


async def test_control_keys_reach_the_program() -> None:
    async with polter([bash_spec()]) as (app, pilot, host):
        terminal = panes(app)[0].terminal
        await type_line(pilot, "sleep 60")
        program = process(host, panes(app)[0])
        assert program is not None
        await wait_until(lambda: runs_in_foreground(program, "sleep"))
        await pilot.press("ctrl+c")
        await wait_until(lambda: program.foreground_process_group() == program.pid)
        await type_line(pilot, "echo status=$?")
        await wait_for_text(terminal, "status=130")
        await pilot.press("ctrl+d")  # on an empty line: bash exits
        await wait_until(lambda: not terminal.running)
        assert panes(app)[0].header.status == "exited 0"


async def test_shift_enter_is_a_new_line_for_the_program_not_a_submission() -> None:
    """A terminal with the kitty keyboard protocol tells shift+enter apart; the agent CLIs all take
    ``^J`` as "insert a newline", so that is what reaches the program (``^M`` would submit)."""
    reader = "import sys, tty; tty.setraw(0); print('raw', end='\\r\\n', flush=True); print('got', repr(sys.stdin.read(3)), end='\\r\\n')"
    async with polter([bash_spec()]) as (app, pilot, host):
        terminal = panes(app)[0].terminal
        await type_line(pilot, f'{sys.executable} -c "{reader}"')
        program = process(host, panes(app)[0])
        assert program is not None
        await wait_until(lambda: runs_in_foreground(program, Path(sys.executable).name))
        await wait_until(lambda: "raw" in screen_text(terminal).splitlines())  # keys typed before would be cooked
        await pilot.press("a", "shift+enter", "b")
        await wait_for_text(terminal, "got 'a\\nb'")


async def test_four_panes_form_a_two_by_two_grid() -> None:
    async with polter() as (app, _pilot, host):
        regions = [pane.region for pane in panes(app)]
        assert regions[0].x == regions[2].x < regions[1].x == regions[3].x
        assert regions[0].y == regions[1].y < regions[2].y == regions[3].y
        assert [pane.header.number for pane in panes(app)] == [1, 2, 3, 4]
        assert all(pane.header.status == "running" for pane in panes(app))


@pytest.mark.parametrize("mode", ["columns", "rows"])
async def test_columns_and_rows_layouts(mode: str) -> None:
    async with polter([bash_spec() for _ in range(3)], layout=mode) as (app, _pilot, host):
        regions = [pane.region for pane in panes(app)]
        if mode == "columns":
            assert len({region.y for region in regions}) == 1 and regions[0].x < regions[1].x < regions[2].x
        else:
            assert len({region.x for region in regions}) == 1 and regions[0].y < regions[1].y < regions[2].y


async def test_an_odd_pane_out_spans_the_last_row() -> None:
    async with polter([bash_spec() for _ in range(3)]) as (app, _pilot, host):
        first, _second, third = (pane.region for pane in panes(app))
        assert third.y > first.y and third.width > first.width * 1.5


async def test_the_terminal_size_follows_the_window_and_reaches_the_program() -> None:
    async with polter([bash_spec()], size=(100, 30)) as (app, pilot, host):
        terminal = panes(app)[0].terminal
        await type_line(pilot, "stty size")
        await wait_for_text(terminal, "29 100")  # one row is the header
        await pilot.resize_terminal(80, 20)
        await wait_until(lambda: terminal.screen_model is not None and terminal.screen_model.columns == 80)
        await type_line(pilot, "clear; stty size")
        await wait_for_text(terminal, "19 80")


async def test_prefix_arrows_and_numbers_move_the_focus() -> None:
    async with polter() as (app, pilot, host):
        one, two, three, four = panes(app)
        await pilot.press("ctrl+b", "right")
        assert focused_pane(app) is two
        await pilot.press("ctrl+b", "down")
        assert focused_pane(app) is four
        await pilot.press("ctrl+b", "left")
        assert focused_pane(app) is three
        await pilot.press("ctrl+b", "left")  # at the edge: stays
        assert focused_pane(app) is three
        await pilot.press("ctrl+b", "up")
        assert focused_pane(app) is one
        await pilot.press("ctrl+b", "4")
        assert focused_pane(app) is four
        await pilot.press("ctrl+b", "o")
        assert focused_pane(app) is one
        assert one.has_pseudo_class("focus-within") and not four.has_pseudo_class("focus-within")
        await type_line(pilot, "echo in-one")  # the keys after a command go to the pane again
        await wait_for_text(one.terminal, "in-one")


async def test_keys_in_one_burst_with_the_prefix_go_to_the_pane_its_command_focused() -> None:
    """``ctrl+b 2 echo ...`` read from the terminal at once (a fast typist, a script, tmux's send-keys): the keys
    behind the command reached the prefix screen before its command ran, and went to the pane focused before."""
    from textual import events

    async with polter() as (app, pilot, host):
        one, two, _three, _four = panes(app)
        burst = [("ctrl+b", None), ("2", "2"), *((c, c) for c in "echo in-two"), ("enter", "\r")]
        for key, character in burst:  # posted at once, as the driver does for one read
            app.post_message(events.Key(key, character))
        await wait_for_text(two.terminal, "in-two")
        assert focused_pane(app) is two and "in-two" not in screen_text(one.terminal)


async def test_a_mouse_click_focuses_the_pane() -> None:
    async with polter() as (app, pilot, host):
        three = panes(app)[2]
        assert await pilot.click(three.terminal, offset=(5, 3))
        assert focused_pane(app) is three
        await pilot.click(panes(app)[1].header, offset=(3, 0))  # lands on a label inside the header
        assert focused_pane(app) is panes(app)[1]


async def test_a_header_loses_the_focused_look_with_the_focus() -> None:
    """Pane 1's status stayed in the focused header's colour after the focus left it (Textual restyled
    the header but not that label); every unfocused header must look alike."""
    async with polter() as (app, pilot, host):
        one, two, three, _ = panes(app)

        def look(pane: PaneWidget) -> tuple[str, str]:
            return str(pane.header.rich_style.bgcolor), str(pane.header.query_one("#pane-status").rich_style.color)

        await wait_until(lambda: app.focused is one.terminal)
        await pilot.pause()
        assert look(one) != look(three)  # the focused header stands out
        await pilot.press("ctrl+b", "2")
        await wait_until(lambda: app.focused is two.terminal)
        await wait_until(lambda: look(one) == look(three), message=lambda: f"{look(one)} against {look(three)}")
        app.set_focus(None)
        await wait_until(lambda: look(two) == look(three), message=lambda: f"{look(two)} against {look(three)}")


async def test_a_custom_prefix_key() -> None:
    async with polter(prefix="ctrl+a") as (app, pilot, host):
        await pilot.press("ctrl+a", "2")
        assert focused_pane(app) is panes(app)[1]
        await pilot.press("ctrl+b")  # now an ordinary key: goes to bash (backward-char), no prefix screen
        assert isinstance(app.screen, SessionScreen)


async def test_the_prefix_twice_sends_the_prefix_key_to_the_program() -> None:
    async with polter([bash_spec()]) as (app, pilot, host):
        terminal = panes(app)[0].terminal
        await type_line(pilot, "cat -v")
        await pilot.press("ctrl+b", "ctrl+b", "enter")
        await wait_for_text(terminal, "^B")


async def test_ctrl_p_reaches_the_program_and_the_prefix_then_colon_or_p_opens_the_palette() -> None:
    from textual.command import CommandPalette

    async with polter([bash_spec()]) as (app, pilot, host):
        terminal = panes(app)[0].terminal
        await type_line(pilot, "echo one-$((40+2))")
        await wait_for_text(terminal, "one-42\n$")
        await pilot.press("ctrl+p", "enter")  # bash: the previous command, run again
        await wait_until(lambda: screen_text(terminal).count("one-42") == 2, message=lambda: screen_text(terminal))
        assert isinstance(app.screen, SessionScreen)
        for key in ("colon", "p"):
            await pilot.press("ctrl+b", key)
            await wait_until(lambda: isinstance(app.screen, CommandPalette), message="the palette")
            await pilot.press("escape")
            await wait_until(lambda: isinstance(app.screen, SessionScreen))
        assert screen_text(terminal).count("one-42") == 2  # nothing of that reached bash


async def test_a_configured_palette_key_opens_the_palette_and_no_longer_reaches_the_program() -> None:
    from textual.command import CommandPalette

    async with polter([bash_spec()], palette_key="f2") as (app, pilot, host):
        assert app.session_screen.palette_hint == "f2"
        await pilot.press("f2")
        await wait_until(lambda: isinstance(app.screen, CommandPalette), message="the palette")
        await pilot.press("escape")
        await wait_until(lambda: isinstance(app.screen, SessionScreen))
        await pilot.press("ctrl+p")  # not the palette key any more: an ordinary key for bash
        assert isinstance(app.screen, SessionScreen)
    with pytest.raises(ConfigError, match="--palette-key: ctrl\\+b is already the prefix key"):
        Launch(plans=[], palette_key="ctrl+b")


async def test_zoom_fills_the_grid_with_one_pane_and_resizes_its_terminal() -> None:
    async with polter() as (app, pilot, host):
        one, two, *_ = panes(app)
        await pilot.press("ctrl+b", "2", "ctrl+b", "z")
        await pilot.pause()
        assert not one.display and two.display
        assert two.region.width == app.session_screen.grid.region.width
        await type_line(pilot, "stty size")
        await wait_for_text(two.terminal, "35 120")
        await pilot.press("ctrl+b", "z")
        await pilot.pause()
        assert one.display and two.region.width < 70
        await type_line(pilot, "clear; stty size")
        await wait_for_text(two.terminal, "17 60")


async def test_moving_the_focus_while_zoomed_unzooms() -> None:
    async with polter() as (app, pilot, host):
        await pilot.press("ctrl+b", "z", "ctrl+b", "3")
        await pilot.pause()
        assert app.session_screen.grid.zoomed is None
        assert focused_pane(app) is panes(app)[2]


async def test_new_pane_starts_a_shell_where_the_focused_pane_is(tmp_path: Path) -> None:
    async with polter([bash_spec()]) as (app, pilot, host):
        await type_line(pilot, f"cd {tmp_path}")
        await wait_until(lambda: _cwd(host, panes(app)[0]) == tmp_path)
        await pilot.press("ctrl+b", "c")
        await wait_until(lambda: len(panes(app)) == 2)
        new = panes(app)[1]
        assert focused_pane(app) is new
        await wait_until(lambda: new.terminal.running)
        assert new.header.number == 2
        await wait_until(lambda: _cwd(host, new) == tmp_path)


def _cwd(host: SessionHost, pane: PaneWidget) -> Path | None:
    program = process(host, pane)
    if program is None:
        return None
    return Path(os.readlink(f"/proc/{program.pid}/cwd"))


async def test_closing_a_running_pane_asks_first() -> None:
    async with polter() as (app, pilot, host):
        two = panes(app)[1]
        program = process(host, two)
        assert program is not None
        await pilot.press("ctrl+b", "2", "ctrl+b", "x")
        await wait_until(lambda: confirm_shown(app))
        await pilot.press("n")
        await wait_until(lambda: isinstance(app.screen, SessionScreen))
        assert two in panes(app) and two.running

        await pilot.press("ctrl+b", "x")
        await wait_until(lambda: confirm_shown(app))
        await pilot.press("y")
        await wait_until(lambda: len(panes(app)) == 3)
        assert not program.running and session_processes(program.pid) == []
        assert [pane.header.number for pane in panes(app)] == [1, 2, 3]
        assert focused_pane(app) is panes(app)[1]  # the pane that took its place


async def test_closing_an_exited_pane_needs_no_confirmation_and_the_last_one_quits() -> None:
    async with polter([bash_spec(), bash_spec()]) as (app, pilot, host):
        await type_line(pilot, "exit")
        await wait_until(lambda: not panes(app)[0].running)
        await pilot.press("ctrl+b", "x")
        await wait_until(lambda: len(panes(app)) == 1)
        assert isinstance(app.screen, SessionScreen)
        await type_line(pilot, "exit")
        await wait_until(lambda: not panes(app)[0].running)
        await pilot.press("ctrl+b", "x")
        await wait_until(lambda: app.return_code is not None or not app.is_running)


async def test_an_exited_pane_keeps_its_screen_shows_its_status_and_restarts() -> None:
    async with polter([bash_spec(), bash_spec()]) as (app, pilot, host):
        one = panes(app)[0]
        size = one.terminal.size
        assert not one.ended_hint.display
        await type_line(pilot, "echo last words; exit 3")
        await wait_until(lambda: one.header.status == "exited 3")
        assert one.header.status_kind == "exited"
        assert "last words" in screen_text(one.terminal)
        await wait_until(lambda: one.ended_hint.display, message="the hint on what to do with it")
        assert str(one.ended_hint.render()) == "exited 3 · ^b r restarts it · ^b x closes it"
        assert one.terminal.size == size  # the hint lies over the ended screen, which keeps its size
        await pilot.press(*"ignored")  # nothing to send to; no crash
        await pilot.press("ctrl+b", "r")
        await wait_until(lambda: one.terminal.running)
        await wait_until(lambda: not one.ended_hint.display, message="no hint once it runs again")
        # The old screen shows a prompt too: wait for the new screen's first frame, then its prompt.
        await wait_until(lambda: "last words" not in screen_text(one.terminal), message="a fresh screen")
        await wait_for_text(one.terminal, "$")
        assert one.header.status == "running"
        await type_line(pilot, "echo again")
        await wait_for_text(one.terminal, "again")


async def test_restarting_a_running_pane_asks_first() -> None:
    async with polter([bash_spec()]) as (app, pilot, host):
        terminal = panes(app)[0].terminal
        old = process(host, panes(app)[0])
        await pilot.press("ctrl+b", "r")
        await wait_until(lambda: confirm_shown(app))
        await pilot.press("y")
        await wait_until(lambda: process(host, panes(app)[0]) is not old and terminal.running)
        assert old is not None and not old.running


async def test_a_command_that_cannot_start_shows_why_in_its_pane_and_the_rest_runs() -> None:
    broken = LaunchSpec(argv=("polter-no-such-program", "--flag"))
    bad_dir = LaunchSpec(argv=("sh",), cwd=Path("/nonexistent/place"))
    async with polter([broken, bash_spec(), bad_dir]) as (app, pilot, host):
        first, second, third = panes(app)
        await wait_for_text(first.terminal, "cannot start 'polter-no-such-program': command not found")
        await wait_for_text(third.terminal, "working directory '/nonexistent/place' does not exist")
        assert first.header.status == "failed to start" and first.header.status_kind == "failed"
        await wait_until(lambda: first.ended_hint.display)
        assert str(first.ended_hint.render()) == "failed to start · ^b r restarts it · ^b x closes it"
        assert first.header.title == "polter-no-such-program"
        await pilot.press("ctrl+b", "2")
        await type_line(pilot, "echo still-fine")
        await wait_for_text(second.terminal, "still-fine")


async def test_the_program_title_shows_in_the_header() -> None:
    async with polter([bash_spec()]) as (app, pilot, host):
        header = panes(app)[0].header
        assert header.title == "bash"
        await type_line(pilot, r"printf '\e]2;my build\a'")
        await wait_until(lambda: header.title == "my build")


async def test_ending_the_session_from_the_window_asks_and_ends_every_process() -> None:
    async with polter([bash_spec(), bash_spec()], size=(100, 30)) as (app, pilot, host):
        await type_line(pilot, "sleep 300 & bash -c 'trap \"\" HUP; exec sleep 301'")
        first = process(host, panes(app)[0])
        assert first is not None
        await wait_until(lambda: len(session_processes(first.pid)) >= 3)
        members = [pid for pane in panes(app) if (p := process(host, pane)) for pid in session_processes(p.pid)]
        await pilot.press("ctrl+b", "q")
        await wait_until(lambda: isinstance(app.screen, LeaveScreen))
        await pilot.press("e")
        await wait_until(lambda: host.ended.is_set() and not app.is_running, timeout=30)
    for pid in members:
        assert not process_running(pid), f"process {pid} survived"


async def test_the_window_going_away_detaches_and_the_programs_keep_running() -> None:
    async with hosted([bash_spec()]) as host:
        async with window(host, size=(100, 30)) as (app, pilot):
            terminal = panes(app)[0].terminal
            await wait_for_prompt(terminal)
            await type_line(pilot, "sleep 302 & echo started")
            await wait_for_text(terminal, "started\n")
            program = process(host, panes(app)[0])
            assert program is not None
            members = session_processes(program.pid)
            assert len(members) == 2
            app.exit()
        await wait_until(lambda: not any(window.attached for window in host.windows))
        assert all(process_running(pid) for pid in members) and not host.ended.is_set()
    for pid in members:
        assert not process_running(pid), f"process {pid} survived the end of the session"


async def test_prefix_d_detaches_and_another_window_finds_everything_as_it_was() -> None:
    async with polter([bash_spec(), bash_spec()], size=(100, 30)) as (app, pilot, host):
        await type_line(pilot, "echo before-detach")
        await wait_for_text(panes(app)[0].terminal, "before-detach\n$")
        await pilot.press("ctrl+b", "d")
        await wait_until(lambda: not app.is_running)
        assert host.panes[0].terminal.running and not host.ended.is_set()
        async with window(host, size=(100, 30)) as (again, pilot2):
            terminal = panes(again)[0].terminal
            await wait_for_text(terminal, "before-detach\n$")
            await pilot2.press(*"echo after-attach", "enter")
            await wait_for_text(terminal, "after-attach\n$")


def test_options_build_the_launch_and_bad_values_are_named() -> None:
    from polter.cli import build_parser
    from polter.cli.app import plan

    def launch_for(*argv: str) -> Launch:
        return plan(build_parser().parse_args(list(argv)))

    launch = launch_for("--panes", "6", "--layout", "rows", "--prefix", "ctrl+a")
    assert len(launch.plans) == 6 and launch.prefix == "ctrl+a" and launch.layout == "rows"
    with pytest.raises(ConfigError, match="--panes: must be between 1 and 16, not 0"):
        launch_for("--panes", "0")
    with pytest.raises(ConfigError, match="--panes: must be between 1 and 16, not 40"):
        launch_for("--panes", "40")
    with pytest.raises(ConfigError, match="--prefix"):
        launch_for("--panes", "1", "--prefix", " ")


@pytest.mark.parametrize(("setting", "expected"), [(None, SCREEN_FPS), ("30", 30)])
def test_the_app_composes_at_polters_rate_unless_the_user_set_one(setting: str | None, expected: int) -> None:
    """In a fresh process as ``polter`` runs: the command line imports no Textual before ``polter.window``
    asks for its rate; the screen's timer uses it; the panes' programs do not inherit the setting."""
    script = """
import os, sys
from polter.cli import build_parser
build_parser()
assert "textual" not in sys.modules, "the command line imported Textual before polter.window"
from polter.window.app import PolterApp
from textual import constants, screen
print(constants.MAX_FPS, round(1 / screen.UPDATE_PERIOD), os.environ.get("TEXTUAL_FPS"))
"""
    env = {key: value for key, value in os.environ.items() if key != "TEXTUAL_FPS"}
    if setting is not None:
        env["TEXTUAL_FPS"] = setting
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(expected), str(expected), str(setting)]


async def test_dragging_over_a_panes_text_copies_it_unless_the_program_has_the_mouse() -> None:
    async with polter() as (app, pilot, host):
        one, two = panes(app)[:2]
        await type_line(pilot, "clear; echo alpha beta gamma")
        await wait_for_text(one.terminal, "alpha beta gamma\n$")
        row = screen_text(one.terminal).splitlines().index("alpha beta gamma")

        async def drag(pane: PaneWidget, start: int, end: int, **keys: bool) -> None:
            await pilot.mouse_down(pane.terminal, offset=(start, row), **keys)
            await pilot.hover(pane.terminal, offset=(end, row))
            await pilot.mouse_up(pane.terminal, offset=(end, row), **keys)
            await pilot.pause()

        await drag(one, 6, 15)
        await wait_until(lambda: app.clipboard == "beta gamma", message=lambda: f"the copy, not {app.clipboard!r}")
        assert any("Copied 10 characters." in message for message in notification_messages(app))
        assert one.terminal.text_selection is not None  # shown as selected until the next click

        # A double click takes the word under the pointer, a triple click the line; never the whole
        # scrollback (Textual's default for a widget).
        await pilot.double_click(one.terminal, offset=(8, row))
        await wait_until(lambda: app.clipboard == "beta", message=lambda: f"the word, not {app.clipboard!r}")
        await pilot.triple_click(one.terminal, offset=(8, row))
        await wait_until(
            lambda: app.clipboard == "alpha beta gamma", message=lambda: f"the line, not {app.clipboard!r}"
        )

        # A program that tracks the mouse gets the drag, and nothing is selected; shift+drag still selects.
        app.copy_to_clipboard("")
        await pilot.click(two.terminal)
        await type_line(pilot, r"clear; echo alpha beta gamma; printf '\e[?1000h'; sleep 30")
        await wait_until(
            lambda: two.terminal.screen_model is not None and two.terminal.screen_model.mouse_tracking,
            message="mouse tracking on",
        )
        await drag(two, 0, 4)
        await pilot.double_click(two.terminal, offset=(1, row))
        await pilot.pause()
        assert app.clipboard == "" and two.terminal.text_selection is None
        await drag(two, 0, 4, shift=True)
        await wait_until(
            lambda: app.clipboard == "alpha", message=lambda: f"the shift+drag copy, not {app.clipboard!r}"
        )
