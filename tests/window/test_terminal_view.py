"""The terminal widget with real programs: full-screen apps, scrollback, paste, focus and mouse reports,
synchronized output. One pane in a bare Textual app; the multiplexer has its own tests in tests/window."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from support.keys import type_keys
from support.panes import bash_spec, runs_in_foreground, screen_text, wait_for_prompt, wait_for_text
from support.privates import rendered_strips
from support.session import host_pane, hosted, window
from support.waiting import wait_until
from textual import events
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import Static

from polter.host import hosted_terminal as hosted_module
from polter.host.hosted_terminal import HostedTerminal, TypingClock
from polter.terminal.launch import LaunchSpec
from polter.host.pty import PtyProcess
from support.local_terminal import LocalTerminal
from polter.window.terminal_view import TerminalView


def local_view(spec: LaunchSpec, *, typing: TypingClock | None = None, id: str | None = None) -> TerminalView:
    """A view of a program run in this process (the session's panes are tested in tests/window)."""
    return TerminalView(LocalTerminal(HostedTerminal(spec, typing=typing)), id=id)


def hosted_terminal(terminal: TerminalView) -> HostedTerminal:
    """The program behind a view: in-process, or the session host's pane for a view in a window."""
    source = terminal.source
    if isinstance(source, LocalTerminal):
        return source.terminal
    return _SESSION_PANES[id(terminal)].terminal


def program(terminal: TerminalView) -> PtyProcess | None:
    return hosted_terminal(terminal).process


_SESSION_PANES: dict[int, object] = {}


class OnePane(App[None]):
    """A terminal and a focusable neighbour (to move the focus away)."""

    def __init__(self, spec: LaunchSpec) -> None:
        super().__init__()
        self.spec = spec

    def compose(self) -> ComposeResult:
        yield local_view(self.spec)
        yield Static("neighbour", id="neighbour")

    def on_mount(self) -> None:
        self.query_one("#neighbour", Static).can_focus = True
        self.query_one(TerminalView).focus()


@asynccontextmanager
async def one_pane(
    spec: LaunchSpec | None = None, size: tuple[int, int] = (80, 24), *, through_session: bool = False
) -> AsyncIterator[tuple[TerminalView, Pilot[None]]]:
    """One pane: in-process, or (``through_session``) a session host's pane in a window, its screen
    mirrored from frames and its scrollback fetched from the host."""
    if not through_session:
        app = OnePane(spec or bash_spec())
        async with app.run_test(size=size) as pilot:
            terminal = app.query_one(TerminalView)
            await wait_for_prompt(terminal)
            yield terminal, pilot
        return
    async with hosted([spec or bash_spec()]) as host, window(host, size=(size[0], size[1] + 1)) as (app, pilot):
        pane = app.session_screen.grid.panes[0]
        _SESSION_PANES[id(pane.terminal)] = host_pane(host, pane)
        try:
            await wait_for_prompt(pane.terminal)
            yield pane.terminal, pilot
        finally:
            _SESSION_PANES.pop(id(pane.terminal), None)


async def type_line(pilot: Pilot[None], text: str) -> None:
    await type_keys(pilot, text, enter=True)


async def wheel(pilot: Pilot[None], terminal: TerminalView, *, up: bool) -> None:
    """One step of the mouse wheel over the terminal."""
    event_type = events.MouseScrollUp if up else events.MouseScrollDown
    terminal.post_message(event_type(terminal, 2, 2, 0, -1 if up else 1, 0, False, False, False))
    await pilot.pause()


def rendered(terminal: TerminalView) -> str:
    """What the user sees of the terminal right now (from the composed screen), as text."""
    region = terminal.region
    strips = rendered_strips(terminal.app.screen)[region.y : region.bottom]
    return "\n".join(strip.crop(region.x, region.right).text.rstrip() for strip in strips)


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_less_uses_the_alternate_screen_and_the_shell_screen_comes_back(
    tmp_path: Path, through_session: bool
) -> None:
    numbers = tmp_path / "numbers.txt"
    numbers.write_text("".join(f"line {n}\n" for n in range(1, 201)))
    async with one_pane(through_session=through_session) as (terminal, pilot):
        await type_line(pilot, "echo before-less")
        await wait_for_text(terminal, "before-less\n")
        await type_line(pilot, f"less {numbers}")
        await wait_until(lambda: terminal.screen_model is not None and terminal.screen_model.alternate_screen)
        await wait_for_text(terminal, "line 22")
        assert "before-less" not in screen_text(terminal)
        page = terminal.size.height - 1  # less keeps the last row for its prompt
        await pilot.press("space")  # a page down, as typed
        await wait_until(lambda: screen_text(terminal).startswith(f"line {page + 1}\n"))
        await pilot.press("q")
        await wait_until(lambda: not terminal.screen_model.alternate_screen)  # type: ignore[union-attr]
        await wait_for_text(terminal, "before-less")
        assert f"line {page + 1}" not in screen_text(terminal)


async def test_vi_edits_a_file_full_screen(tmp_path: Path) -> None:
    target = tmp_path / "note.txt"
    async with one_pane(LaunchSpec(argv=bash_spec().argv, env={"PS1": "$ ", "HOME": str(tmp_path)}, cwd=tmp_path)) as (
        terminal,
        pilot,
    ):
        await type_line(pilot, "vi -u NONE -N note.txt")
        await wait_until(lambda: terminal.screen_model is not None and terminal.screen_model.alternate_screen)
        await pilot.press("i", *"hello from vi", "escape")
        await wait_for_text(terminal, "hello from vi")
        await type_keys(pilot, ":wq", enter=True)
        await wait_until(lambda: not terminal.screen_model.alternate_screen)  # type: ignore[union-attr]
        await wait_until(lambda: target.exists() and target.read_text() == "hello from vi\n")
        await wait_for_text(terminal, "$ vi -u NONE -N note.txt\n")  # the shell's screen is back


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_the_wheel_on_the_alternate_screen_sends_arrow_keys(tmp_path: Path, through_session: bool) -> None:
    numbers = tmp_path / "numbers.txt"
    numbers.write_text("".join(f"line {n}\n" for n in range(1, 201)))
    async with one_pane(through_session=through_session) as (terminal, pilot):
        await type_line(pilot, f"less {numbers}")
        await wait_for_text(terminal, "line 22")
        assert screen_text(terminal).startswith("line 1\n")
        await wheel(pilot, terminal, up=False)
        await wait_until(lambda: screen_text(terminal).startswith("line 4\n"), message=lambda: screen_text(terminal))


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_scrollback_by_keys_and_wheel_then_back_to_live_on_typing(through_session: bool) -> None:
    async with one_pane(size=(60, 12), through_session=through_session) as (terminal, pilot):
        await type_line(pilot, "seq 1 500")
        # Until the window has drawn the end, not only the screen engine read it: the frame still on its way
        # would move the history by what it adds (the view keeps the lines being read in place).
        await wait_until(lambda: "500\n$" in rendered(terminal), message=lambda: rendered(terminal))
        assert terminal.screen_model is not None and terminal.screen_model.history_size >= 490
        assert "480" not in rendered(terminal)
        page = terminal.size.height - 1  # a page keeps one line of context
        await pilot.press("shift+pageup")
        assert terminal.history_offset == page
        await wait_until(lambda: "$ seq 1 500" not in rendered(terminal) and "500" not in rendered(terminal))
        assert f"{500 - page}\n" in rendered(terminal)
        await wheel(pilot, terminal, up=True)
        assert terminal.history_offset == page + 3
        await pilot.press("shift+pagedown")
        assert terminal.history_offset == 3
        await pilot.press("x")  # typing goes to the program and shows the live screen again
        assert terminal.history_offset == 0
        await wait_until(lambda: "$ x" in rendered(terminal))


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_ten_thousand_lines_of_scrollback_reached_by_keys_and_the_wheel(through_session: bool) -> None:
    async with one_pane(size=(60, 12), through_session=through_session) as (terminal, pilot):
        await type_line(pilot, "seq 1 12000")
        await wait_for_text(terminal, "12000\n$")
        screen = terminal.screen_model
        assert screen is not None and screen.history_size == 10_000 == hosted_terminal(terminal).scrollback
        # Lines 0 ("$ seq 1 12000") to 12001 (the prompt) were written; the live rows and the 10,000
        # lines before them are kept, so the oldest kept line is the number 12002 - rows - 10,000.
        rows = terminal.size.height
        oldest = 12_002 - rows - 10_000
        terminal.enter_scroll_mode()
        await pilot.press("home")
        assert terminal.history_offset == 10_000
        await wait_until(
            lambda: rendered(terminal).startswith(f"{oldest}\n{oldest + 1}\n"), message=lambda: rendered(terminal)
        )
        await wheel(pilot, terminal, up=False)
        await wait_until(lambda: rendered(terminal).startswith(f"{oldest + 3}\n"), message=lambda: rendered(terminal))
        await wheel(pilot, terminal, up=True)
        await wheel(pilot, terminal, up=True)  # at the top: stays there
        assert terminal.history_offset == 10_000
        await pilot.press("pagedown", "down")  # a page keeps one line of context
        assert terminal.history_offset == 10_000 - (rows - 1) - 1
        await wait_until(
            lambda: rendered(terminal).startswith(f"{oldest + rows}\n"), message=lambda: rendered(terminal)
        )
        await pilot.press("end")
        assert terminal.history_offset == 0
        await wait_until(lambda: "12000\n$" in rendered(terminal))


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_scroll_mode_keys(through_session: bool) -> None:
    async with one_pane(size=(60, 12), through_session=through_session) as (terminal, pilot):
        await type_line(pilot, "seq 1 100")
        # Until the window has drawn the end (a frame still on its way would move the history being read).
        await wait_until(lambda: "100\n$" in rendered(terminal), message=lambda: rendered(terminal))
        history = terminal.screen_model.history_size  # type: ignore[union-attr]
        terminal.enter_scroll_mode()
        await pilot.press("up", "k")
        assert terminal.history_offset == 2
        await pilot.press("g")
        assert terminal.history_offset == history
        await wait_until(lambda: rendered(terminal).startswith("seq 1 100") or "$ seq 1 100" in rendered(terminal))
        await pilot.press("j", "pagedown")
        assert terminal.history_offset == history - 1 - (terminal.size.height - 1)
        await pilot.press("q")
        assert not terminal.scroll_mode and terminal.history_offset == 0
        await pilot.press("x")
        await wait_for_text(terminal, "$ x")


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_new_output_does_not_move_the_history_being_read(tmp_path: Path, through_session: bool) -> None:
    trigger = tmp_path / "go"
    async with one_pane(size=(60, 12), through_session=through_session) as (terminal, pilot):
        await type_line(pilot, f"seq 1 100; until [ -e {trigger} ]; do sleep 0.01; done; seq 101 130")
        await wait_for_text(terminal, "99\n100")
        await pilot.press("shift+pageup")
        offset, view = terminal.history_offset, rendered(terminal)
        trigger.touch()
        await wait_for_text(terminal, "129\n130\n$")
        await wait_until(lambda: terminal.history_offset == offset + 30)  # it grew with the history
        # (in a window, rows that scrolled into the history are fetched from the host: a moment later)
        await wait_until(lambda: rendered(terminal) == view, message=lambda: f"{rendered(terminal)!r} != {view!r}")


async def test_bracketed_paste_only_when_the_program_enabled_it() -> None:
    async with one_pane() as (terminal, pilot):
        await type_line(pilot, "stty -echoctl; cat -v")
        await wait_until(lambda: runs_in_foreground(program(terminal), "cat"))
        terminal.post_message(_paste("plain"))
        await pilot.press("enter")
        await wait_for_text(terminal, "plain\nplain")  # the tty's echo, then cat's output
        await pilot.press("ctrl+c")
        await type_line(pilot, r"printf '\e[?2004h'; cat -v")
        await wait_until(lambda: terminal.screen_model is not None and terminal.screen_model.bracketed_paste)
        terminal.post_message(_paste("wrapped"))
        await pilot.press("enter")
        await wait_for_text(terminal, "^[[200~wrapped^[[201~")


def _paste(text: str) -> events.Paste:
    return events.Paste(text)


async def test_focus_changes_are_reported_only_when_asked() -> None:
    async with one_pane() as (terminal, pilot):
        await type_line(pilot, "cat -v")
        await wait_until(lambda: runs_in_foreground(program(terminal), "cat"))
        terminal.app.set_focus(terminal.app.query_one("#neighbour"))
        terminal.focus()
        await type_keys(pilot, "x", enter=True)
        await wait_for_text(terminal, "x\nx")
        assert "[O" not in screen_text(terminal)
        await pilot.press("ctrl+c")
        await type_line(pilot, r"printf '\e[?1004h'; cat -v")
        await wait_until(lambda: terminal.screen_model is not None and terminal.screen_model.focus_events)
        terminal.app.set_focus(terminal.app.query_one("#neighbour"))
        await pilot.pause()
        terminal.focus()
        await pilot.pause()
        await pilot.press("enter")
        await wait_for_text(terminal, "^[[O^[[I")


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_mouse_events_are_encoded_when_the_program_enables_tracking(through_session: bool) -> None:
    async with one_pane(through_session=through_session) as (terminal, pilot):
        await type_line(pilot, "cat -v")
        await wait_until(lambda: runs_in_foreground(program(terminal), "cat"))
        await pilot.click(terminal, offset=(10, 5))
        await pilot.press("ctrl+c")
        assert "[<" not in screen_text(terminal)  # no tracking: the click was Textual's, not the program's
        await type_line(pilot, r"printf '\e[?1000h\e[?1006h'; cat -v")
        await wait_until(lambda: terminal.screen_model is not None and terminal.screen_model.mouse_tracking == 1000)
        await pilot.click(terminal, offset=(10, 5))
        await pilot.press("enter")
        await wait_for_text(terminal, "^[[<0;11;6M^[[<0;11;6m")
        await pilot.press("ctrl+c")
        await type_line(pilot, r"printf '\e[?9h'; cat -v")  # X10: presses only
        await wait_until(lambda: terminal.screen_model is not None and terminal.screen_model.mouse_tracking == 9)
        await pilot.click(terminal, offset=(10, 5), control=True)  # no modifiers in X10 reports
        await pilot.press("x", "enter")
        await wait_for_text(terminal, "^[[<0;11;6Mx\n")


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_arrows_follow_the_programs_cursor_key_mode(through_session: bool) -> None:
    async with one_pane(through_session=through_session) as (terminal, pilot):
        await type_line(pilot, "cat -v")
        await wait_until(lambda: runs_in_foreground(program(terminal), "cat"))
        await pilot.press("up", "home", "enter")
        await wait_for_text(terminal, "^[[A^[[H\n")
        await pilot.press("ctrl+c")
        await type_line(pilot, r"printf '\e[?1h'; cat -v")  # DECCKM: application cursor keys
        await wait_until(lambda: terminal.screen_model is not None and terminal.screen_model.application_cursor_keys)
        await pilot.press("up", "home", "ctrl+up", "enter")
        await wait_for_text(terminal, "^[OA^[OH^[[1;5A\n")  # modified arrows keep the CSI form, as in xterm


async def test_a_frame_repaints_only_the_rows_that_changed() -> None:
    async with one_pane() as (terminal, pilot):
        await wait_until(lambda: not hosted_terminal(terminal).frame_pending and "$" in rendered(terminal))
        await pilot.pause()  # the prompt's frame is composed
        painted: list[int] = []
        render_line = terminal.render_line

        def recording_render_line(y: int) -> Strip:
            painted.append(y)
            return render_line(y)

        terminal.render_line = recording_render_line  # type: ignore[method-assign]
        hosted_terminal(terminal)._on_output(b"\x1b7\x1b[10;5Hchanged\x1b8")  # as if the program wrote it: row 9
        await wait_until(lambda: "changed" in rendered(terminal), message=lambda: rendered(terminal))
        assert terminal.screen_model is not None
        assert set(painted) <= {9, terminal.screen_model.cursor.y} and 9 in painted, painted


async def test_frames_are_paced_and_a_flooding_pane_draws_at_the_busy_rate() -> None:
    async with one_pane() as (terminal, pilot):
        await type_line(pilot, "yes flooding")
        source = hosted_terminal(terminal)
        await wait_until(lambda: source._busy)
        loop = asyncio.get_running_loop()
        frames: list[tuple[float, bool, bool]] = []  # (when, busy before it, after the output paused)
        on_frame = source.on_frame

        slack = 0.002  # timer granularity

        def recording_frame(dirty: set[int] | None) -> None:
            now = loop.time()
            # a busy frame sent early because the output paused for QUIET (a loaded machine can pause `yes`)
            quiet = now - source._output_at >= hosted_module.QUIET - slack
            frames.append((now, source._busy and not quiet, source._busy and quiet))
            on_frame(dirty)

        source.on_frame = recording_frame
        await wait_until(lambda: len(frames) >= 12)
        terminal.send(b"\x03")
        gaps = [(later[0] - earlier[0], *later[1:]) for earlier, later in zip(frames, frames[1:], strict=False)]
        frame = 1 / hosted_module.FRAME_RATE
        assert all(gap >= frame - slack for gap, _, paused in gaps if not paused), gaps
        # after a pause, the frame that may be the flood's last waits one frame less the pause it waited out
        assert all(gap >= frame - hosted_module.QUIET - slack for gap, _, paused in gaps if paused), gaps
        assert all(gap >= 1 / hosted_module.BUSY_FRAME_RATE - slack for gap, busy, _ in gaps if busy), gaps


async def test_a_busy_panes_last_screen_goes_out_within_one_frame_of_its_output_stopping() -> None:
    async with one_pane() as (terminal, pilot):
        source = hosted_terminal(terminal)
        frames: list[tuple[float, float, bool]] = []  # (when it was due, the latest output then, busy before it)
        on_frame = source.on_frame

        def recording_frame(dirty: set[int] | None) -> None:  # loop.time() is time.monotonic(), as last_output
            frames.append((source._frame_due, source.last_output, source._busy))
            on_frame(dirty)

        source.on_frame = recording_frame
        await type_line(pilot, "seq 1 200000; echo flood-over")
        await wait_until(lambda: "flood-over" in rendered(terminal) and not source.frame_pending, timeout=60)
        busy = [frame for frame in frames if frame[2]]
        assert len(busy) >= 2, frames  # it flooded (frames at the busy rate)
        due, output_at, _ = frames[-1]  # the frame with the prompt after the flood
        # Due one frame at most after the last output, not at the busy rate's 1/10 s (a timer can be late: slack).
        assert due - output_at <= max(hosted_module.QUIET, 1 / hosted_module.FRAME_RATE) + 0.02, frames[-3:]


async def test_synchronized_output_holds_the_repaint_until_the_update_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hosted_module, "SYNC_TIMEOUT", 60.0)
    async with one_pane() as (terminal, pilot):
        command = r"printf '\e[?2026hheld\055back'; read; printf 're\154eased\e[?2026l'"
        await type_keys(pilot, command)
        await wait_until(lambda: command in rendered(terminal))  # the echo drawn before the update begins
        await pilot.press("enter")
        await wait_for_text(terminal, "held-back")  # in the screen model...
        await pilot.pause()
        assert "held-back" not in rendered(terminal)  # ...but not drawn yet
        await pilot.press("enter")
        await wait_until(lambda: "released" in rendered(terminal), message=lambda: rendered(terminal))


async def test_a_synchronized_update_that_never_ends_is_drawn_after_a_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hosted_module, "SYNC_TIMEOUT", 0.2)
    async with one_pane() as (terminal, pilot):
        await type_line(pilot, r"printf '\e[?2026hforgot\164en'; read")
        await wait_for_text(terminal, "forgotten")
        await wait_until(lambda: "forgotten" in rendered(terminal), message=lambda: rendered(terminal))


async def test_device_status_replies_reach_the_program() -> None:
    async with one_pane() as (terminal, pilot):
        await type_line(
            pilot, r"stty -echo; printf '\e[5;9H\e[6n'; read -rsdR reply; stty echo; echo \"got${reply#*[}\""
        )
        await wait_for_text(terminal, "got5;9")


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_colours_and_attributes_are_drawn(through_session: bool) -> None:
    async with one_pane(through_session=through_session) as (terminal, pilot):
        await type_line(pilot, r"printf '\e[1;31mRED\e[0m \e[7mREV\e[0m \e[38;2;1;2;3mRGB\e[0m\n'")
        await wait_for_text(terminal, "RED REV RGB")
        await pilot.pause()
        row = next(y for y in range(24) if "RED REV" in terminal.render_line(y).text)
        styles = {segment.text.strip(): segment.style for segment in terminal.render_line(row) if segment.text.strip()}
        assert styles["RED"].bold and styles["RED"].color.name == "red"
        base = terminal.rich_style
        assert styles["REV"].color == base.bgcolor and styles["REV"].bgcolor == base.color  # reverse of the defaults
        assert styles["RGB"].color.triplet == (1, 2, 3)


@pytest.mark.parametrize("through_session", [False, True], ids=["in-process", "session"])
async def test_reverse_video_mode_swaps_the_default_colours(through_session: bool) -> None:
    async with one_pane(through_session=through_session) as (terminal, pilot):
        await type_line(pilot, r"printf '\e[?5h'; echo in-reverse")
        await wait_for_text(terminal, "in-reverse\n")
        await pilot.pause()
        blank = terminal.render_line(terminal.size.height - 1)
        base = terminal.rich_style
        assert all(segment.style.bgcolor == base.color for segment in blank if segment.style)


async def test_a_view_starts_its_program_at_its_first_size_and_a_restart_runs_a_new_spec() -> None:
    class Deferred(App[None]):
        def compose(self) -> ComposeResult:
            yield local_view(LaunchSpec(argv=("false",)))

    app = Deferred()
    async with app.run_test(size=(60, 10)) as pilot:
        terminal = app.query_one(TerminalView)
        source = hosted_terminal(terminal)
        await wait_until(lambda: source.returncode == 1, message="false to have run at the view's size")
        assert source.screen is not None and (source.screen.columns, source.screen.lines) == (60, 10)
        source.restart(bash_spec())
        await wait_for_prompt(terminal)
        assert source.spec.argv[0].endswith("bash") and source.last_output > 0 and source.status_text == "running"
        await type_keys(pilot, "echo typed", enter=True)
        await wait_for_text(terminal, "typed\n$")
        assert source.last_input > 0


class TwoPanes(App[None]):
    def compose(self) -> ComposeResult:
        clock = TypingClock()
        yield local_view(bash_spec(), typing=clock, id="typing")
        yield local_view(bash_spec(), typing=clock, id="streaming")


async def test_a_streaming_pane_yields_to_typing_in_another_but_is_not_starved() -> None:
    app = TwoPanes()
    async with app.run_test(size=(80, 30)) as pilot:
        typing, streaming = app.query_one("#typing", TerminalView), app.query_one("#streaming", TerminalView)
        await wait_for_prompt(typing, streaming)
        streaming.send(b"yes streaming-line\r")
        source = hosted_terminal(streaming)
        await wait_until(lambda: source._busy)
        loop = asyncio.get_running_loop()
        frames: list[float] = []
        on_frame = source.on_frame

        def recording_frame(dirty: set[int] | None) -> None:
            frames.append(loop.time())
            on_frame(dirty)

        source.on_frame = recording_frame
        await wait_until(lambda: len(frames) >= 2)
        process = source.process
        assert process is not None
        await wait_until(lambda: process.reading)
        typed_at = loop.time()
        typing.send(b"x")
        assert source._hold_until >= typed_at + hosted_module.YIELD_TO_TYPING * 0.9  # its frames wait for the echo
        assert not process.reading  # and its reading: the echo is parsed first
        await wait_until(lambda: process.reading)  # only briefly
        await wait_until(lambda: any(when >= typed_at for when in frames))
        first_after = next(when for when in frames if when >= typed_at)
        assert first_after - typed_at >= hosted_module.YIELD_TO_TYPING * 0.9 or first_after >= source._hold_until
        count = len(frames)
        for _ in range(30):  # typing without pause still lets it stream
            typing.send(b"x")
            await pilot.pause(0.01)
        assert len(frames) > count
        streaming.send(b"\x03")
