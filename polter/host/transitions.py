"""Knowing when an agent needs you: what each agent does, from the best source there is, and the changes worth
telling the human (it waits for you; its turn is done), each told once.

Pure rules on states and times (the clock is injected), so they are testable without a terminal:

- :func:`current_reading` picks the source: a pending Polter ask (the pane waits for your answer), else what the
  CLI's own hooks said while it is fresh (no key or paste from the human since: an answer to a dialog moves the
  CLI on, and the screen shows where to), else what the screen shows.
- :class:`Transitions` lets a state *settle* (hold for a quiet period) before it counts, so a flicker between
  states tells nobody, and reports a settled change once: to *waiting* (``waiting``), and back to idle after a
  turn of work (``done``). A turn is work that settled, or work the CLI itself reported (its hooks do not
  flicker), so a short turn the CLI announced and ended still counts.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final, Literal

from polter.protocol import AgentState, StateReport

__all__ = ["QUIET_SECONDS", "AttentionEvent", "Reading", "Transition", "Transitions", "current_reading"]

QUIET_SECONDS: Final = 1.0
"""How long a state must hold before it counts (the default of ``notify_quiet``)."""

StateSource = Literal["ask", "cli", "screen"]


class AttentionEvent(StrEnum):
    """A change worth telling the human about."""

    WAITING = "waiting"
    """The agent waits for you: its CLI's approval dialog or question, or a Polter ask."""
    DONE = "done"
    """Its turn is over: from working back to idle."""


@dataclass(frozen=True)
class Reading:
    """What a pane's agent does now, where that came from, and why in one line (a waiting pane's reason, a
    finished turn's last words)."""

    state: AgentState | None
    source: StateSource | None = None
    why: str = ""
    event: str = ""
    """The CLI's hook event the state came from (``Stop``, ``PermissionRequest``...), for the header's tooltip."""
    turn_ended: bool = False
    """The CLI said its turn is over."""


def current_reading(
    *, screen: AgentState | None, report: StateReport | None, reported_at: float, last_input: float, asks: list[str]
) -> Reading:
    """The state to believe: a pending ask, else the CLI's report while no input came after it, else the screen.
    ``asks`` are the pending asks' one-line descriptions, oldest first; times are ``time.monotonic()``."""
    if asks:
        why = asks[0] if len(asks) == 1 else f"{asks[0]} (and {len(asks) - 1} more)"
        return Reading(AgentState.WAITING, "ask", why)
    if report is not None and last_input <= reported_at:
        return Reading(report.state, "cli", report.message, report.event, report.turn_ended)
    if screen is None:
        return Reading(None)
    return Reading(screen, "screen", "a question on its screen" if screen is AgentState.WAITING else "")


@dataclass(frozen=True)
class Transition:
    """A settled change of pane ``pane``: ``event``, with ``why`` (one line) since ``since`` (clock time)."""

    pane: str
    event: AttentionEvent
    why: str
    since: float


@dataclass
class _Track:
    settled: AgentState | None = None
    candidate: AgentState | None = None
    since: float = 0.0
    why: str = ""
    worked: bool = False
    """A turn of work began since the agent was last idle (settled, or reported by the CLI)."""
    waiting_since: float | None = None


class Transitions:
    """Per pane: the state as it settles, and the changes worth telling (:class:`Transition`), each once."""

    def __init__(self, quiet: float = QUIET_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet = quiet
        self.clock = clock
        self._tracks: dict[str, _Track] = {}

    def observe(self, pane: str, reading: Reading, *, typed: bool = True) -> Transition | None:
        """Take the pane's current reading; the change it completes, if any. Called on every reading (the host
        reads each pane twice a second, and at once when its CLI reports): a state counts once it has held for
        the quiet period. ``typed``: the human has typed into the pane; before that, work on the screen (a CLI
        drawing its start screen) is no turn."""
        now = self.clock()
        track = self._tracks.setdefault(pane, _Track())
        if reading.state != track.candidate:
            track.candidate, track.since, track.why = reading.state, now, reading.why
        elif reading.why:
            track.why = reading.why  # the newest words for the same state (a longer last message)
        if reading.state is AgentState.WORKING and reading.source == "cli":
            track.worked = True  # the CLI's own word does not flicker
        if now - track.since < self.quiet:
            return None
        changed = track.candidate != track.settled
        track.settled = track.candidate
        if track.settled is AgentState.WORKING and typed:
            track.worked = True
        if track.settled is not AgentState.WAITING:
            track.waiting_since = None
        if track.settled is AgentState.WAITING and changed:
            track.waiting_since = track.since
            return Transition(pane, AttentionEvent.WAITING, track.why, track.since)
        if track.settled is AgentState.IDLE and track.worked:
            track.worked = False
            return Transition(pane, AttentionEvent.DONE, track.why, track.since)
        return None

    def waiting_since(self, pane: str) -> float | None:
        """When the pane's settled wait began (clock time), or None when it does not wait."""
        track = self._tracks.get(pane)
        return track.waiting_since if track is not None else None

    def forget(self, pane: str) -> None:
        self._tracks.pop(pane, None)
