"""The rules of attention, with an injected clock: a state counts once it held for the quiet period, a change is
told once, a flicker tells nobody, "done" needs a turn of work; and which source of the state is believed."""

from __future__ import annotations

from polter.protocol import AgentState, StateReport
from polter.host.transitions import AttentionEvent, Reading, Transitions, current_reading

WORKING, WAITING, IDLE = AgentState.WORKING, AgentState.WAITING, AgentState.IDLE


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run(transitions: Transitions, clock: Clock, steps: list[tuple[float, Reading]], pane: str = "p1") -> list[str]:
    """Observe each reading at its time (seconds from the start), also every 0.5 s in between as the host does;
    the events told, as ``"<time> <event>"``."""
    told: list[str] = []
    start = clock.now
    for index, (at, reading) in enumerate(steps):
        until = steps[index + 1][0] if index + 1 < len(steps) else at + 5
        moment = at
        while moment < until:
            clock.now = start + moment
            transition = transitions.observe(pane, reading)
            if transition is not None:
                told.append(f"{moment:g} {transition.event.value}")
            moment += 0.5
    return told


def screen(state: AgentState | None) -> Reading:
    return Reading(state, "screen" if state else None)


def test_a_wait_is_told_once_after_the_quiet_period() -> None:
    clock = Clock()
    told = run(Transitions(quiet=1.0, clock=clock), clock, [(0, screen(IDLE)), (2, screen(WAITING))])
    assert told == ["3 waiting"]  # seen at 2, held until 3: told once, never again while it waits


def test_a_flicker_shorter_than_the_quiet_period_tells_nobody() -> None:
    clock = Clock()
    steps = [(0, screen(IDLE)), (2, screen(WAITING)), (2.5, screen(IDLE)), (3, screen(WORKING)), (3.5, screen(IDLE))]
    assert run(Transitions(quiet=1.0, clock=clock), clock, steps) == []


def test_done_needs_a_turn_of_work_that_settled() -> None:
    clock = Clock()
    steps = [(0, screen(IDLE)), (1, screen(WORKING)), (4, screen(IDLE))]
    assert run(Transitions(quiet=1.0, clock=clock), clock, steps) == ["5 done"]
    clock = Clock()
    blip = [(0, screen(IDLE)), (1, screen(WORKING)), (1.5, screen(IDLE))]  # output for half a second: no turn
    assert run(Transitions(quiet=1.0, clock=clock), clock, blip) == []


def test_each_change_is_told_once_and_a_new_wait_is_a_new_change() -> None:
    clock = Clock()
    steps = [
        (0, screen(IDLE)),
        (1, screen(WORKING)),
        (3, screen(WAITING)),  # a permission dialog
        (6, screen(WORKING)),  # answered, it works on
        (8, screen(WAITING)),  # the next one
        (11, screen(IDLE)),  # its turn ends
    ]
    assert run(Transitions(quiet=1.0, clock=clock), clock, steps) == ["4 waiting", "9 waiting", "12 done"]


def test_work_before_the_human_typed_is_no_turn() -> None:
    """A CLI drawing its start screen for seconds is not a finished turn when it settles at its prompt."""
    clock = Clock()
    transitions = Transitions(quiet=1.0, clock=clock)
    told = []
    for moment, state in [(0, WORKING), (1, WORKING), (2, WORKING), (3, IDLE), (4, IDLE), (5, IDLE)]:
        clock.now = 100 + moment
        if (transition := transitions.observe("p1", screen(state), typed=False)) is not None:
            told.append(transition.event)
    assert told == []


def test_a_short_turn_the_cli_reported_is_done_all_the_same() -> None:
    """The CLI's own hooks do not flicker: a turn it announced and ended counts even if shorter than the quiet
    period; the words it reported come along."""
    clock = Clock()
    steps = [
        (0, screen(IDLE)),
        (1, Reading(WORKING, "cli", event="UserPromptSubmit")),
        (1.5, Reading(IDLE, "cli", "All tests pass.", "Stop", turn_ended=True)),
    ]
    transitions = Transitions(quiet=1.0, clock=clock)
    assert run(transitions, clock, steps) == ["2.5 done"]
    assert transitions.waiting_since("p1") is None


def test_the_wait_is_dated_from_when_it_began_and_ends_when_the_pane_moves_on() -> None:
    clock = Clock()
    transitions = Transitions(quiet=1.0, clock=clock)
    clock.now = 10.0
    transitions.observe("p1", Reading(WAITING, "cli", "asks to use Bash"))
    assert transitions.waiting_since("p1") is None  # not settled yet
    clock.now = 11.0
    transition = transitions.observe("p1", Reading(WAITING, "cli", "asks to use Bash"))
    assert transition is not None and transition.event is AttentionEvent.WAITING
    assert (transition.why, transition.since, transitions.waiting_since("p1")) == ("asks to use Bash", 10.0, 10.0)
    clock.now = 12.0
    transitions.observe("p1", screen(WORKING))
    clock.now = 13.5
    transitions.observe("p1", screen(WORKING))
    assert transitions.waiting_since("p1") is None
    transitions.forget("p1")
    assert transitions.waiting_since("p1") is None


def test_panes_are_told_apart() -> None:
    clock = Clock()
    transitions = Transitions(quiet=0.0, clock=clock)
    assert transitions.observe("p1", screen(WAITING)) is not None
    assert transitions.observe("p2", screen(WAITING)) is not None
    assert transitions.observe("p1", screen(WAITING)) is None


# -- which source is believed -----------------------------------------------------------------------------


def test_an_ask_beats_everything_then_the_fresh_report_then_the_screen() -> None:
    stop = StateReport(state=IDLE, event="Stop", message="Done.", turn_ended=True)
    asked = current_reading(screen=WORKING, report=stop, reported_at=5.0, last_input=1.0, asks=["asks to use a/b"])
    assert (asked.state, asked.source, asked.why) == (WAITING, "ask", "asks to use a/b")
    two = current_reading(
        screen=None, report=None, reported_at=0, last_input=0, asks=["asks to use a/b", "asks to use c/d"]
    )
    assert two.why == "asks to use a/b (and 1 more)"
    fresh = current_reading(screen=WORKING, report=stop, reported_at=5.0, last_input=1.0, asks=[])
    assert (fresh.state, fresh.source, fresh.why, fresh.event, fresh.turn_ended) == (IDLE, "cli", "Done.", "Stop", True)


def test_a_report_goes_stale_once_the_human_types() -> None:
    """Answering a dialog moves the CLI on: after a key, the screen says where to until the CLI reports again."""
    waiting = StateReport(state=WAITING, event="PermissionRequest", message="Claude Code asks permission to use Bash")
    stale = current_reading(screen=WORKING, report=waiting, reported_at=5.0, last_input=6.0, asks=[])
    assert (stale.state, stale.source) == (WORKING, "screen")
    question = current_reading(screen=WAITING, report=None, reported_at=0, last_input=0, asks=[])
    assert (question.state, question.source, question.why) == (WAITING, "screen", "a question on its screen")
    assert current_reading(screen=None, report=None, reported_at=0, last_input=0, asks=[]) == Reading(None)
