"""Agents that work together: the session host's part that carries out the team calls the gateway decided.

The gateway decides every team tool call by the caller's role (:mod:`polter.gateway.team_tools`) and hands the
host what to do as a ``team`` event; this part does it and answers. It keeps, per pane, who gave it its current
task, who opened it, and the messages queued for it:

- a message is typed into the pane's program as a paste and Enter, marked ``[from pane N · role]``, never
  through the pane's typed line: it is not the human's input, so no keyword gate opens and no phase starts on it
  (the human's words reach the gateway only from a window's keys, :meth:`SessionHost._submit`). Control
  characters are dropped, so a message cannot end a bracketed paste or send keys of its own;
- it is typed only when the agent is idle, nothing of the human's is half typed in the pane and no ask of it
  waits, and the turn the last message started is over (:meth:`Team.turn_over`); otherwise it waits in the
  pane's queue, in order;
- a pane that waits for the human (its CLI asks, or an ask of its calls is pending) is never typed into;
- a pane that closes, whose program ends or restarts drops its queue and ends the waits on it with an error
  saying so: nothing is typed into a restarted CLI without a new send;
- only a program that reads what is typed as an agent's prompt is typed into (:func:`reads_prompts`): an agent
  CLI, or the bundled scripted agent. A shell, or any other program a pane runs, would run a message as a
  command (a shell pane may even run outside the sandbox), so ``send`` to it and ``open`` of it are refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from polter.adapters import Adapter
from polter.errors import GatewayError, PolterError, SessionError
from polter.gateway.models import TeamMember, TeamReply, TeamRequest
from polter.host.attention import Attention
from polter.host.pane import HostPane
from polter.host.panes import Panes
from polter.host.windows import Window
from polter.launch.config import PaneSetup
from polter.protocol import AgentState
from polter.tasks import BackgroundTasks
from polter.wire import methods
from polter.wire.messages import PaneState

if TYPE_CHECKING:
    from polter.host.call_table import CallTable

__all__ = ["SCRIPTED_AGENT", "SETTLE", "Team", "not_a_prompt", "reads_prompts"]

logger = logging.getLogger(__name__)

SETTLE: Final = 1.0
"""A turn the agent's state never showed as work (an answer drawn at once) is over once its screen has been quiet
this long after the message was typed. A turn that showed as work is over when the agent is idle again, and one
its CLI's hooks said ended is over at once."""
ENTER_AFTER: Final = 0.15
"""Seconds between a message's paste and its Enter: a CLI that tells a paste by its speed (Codex) takes an Enter that
follows at once as a newline in the paste, and the prompt is never submitted."""
SHOWN_TAIL: Final = 24
"""How much of a message's end (its spaces aside, as a prompt box wraps it) must be on the pane's screen before the
Enter follows."""
SHOWN_WITHIN: Final = 3.0
"""Seconds after which the Enter follows even if the message's end was not seen drawn."""
REPORT_GRACE: Final = 5.0
"""Seconds a pane whose CLI has reported through its hooks (since its program started) has to report a turn typed
into it, before its screen alone may say the turn is over (a hook that never comes does not hold a queue for
ever)."""
TICK: Final = 0.05
"""How often queues and waits look at their panes while any is pending."""
MAX_WAIT_LINES: Final = 500
SCRIPTED_AGENT: Final = ("-m", "polter.demo.agent")
"""The bundled scripted agent's arguments after its Python (``polter --demo``'s agents)."""
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def clean_message(text: str) -> str:
    """The message as it may be typed: no control characters (escape sequences lose their escape)."""
    return _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n").replace("\t", "    "))


@dataclass
class _Message:
    sender: str
    label: str
    text: str


@dataclass
class _Wait:
    caller: str
    until: str
    started_pushed: int
    started_at: float
    seen_working: bool = False
    future: asyncio.Future[TeamReply] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


@dataclass
class _Membership:
    """What the host keeps of one pane's place in the team."""

    sender: str | None = None
    opened_by: str | None = None
    depth: int = 0
    queue: deque[_Message] = field(default_factory=deque)
    delivered: int = 0
    answered: int = 0
    """Deliveries a ``wait`` until done already returned for."""
    submitted_at: float = 0.0
    """When the last message's Enter was sent (its turn begins then; ``inf`` while its paste waits to be drawn)."""
    worked: bool = False
    """The agent's state showed work since the last message was typed."""
    finished: bool = False
    """The turn the last message started is over (its CLI's hooks said so, or it worked and went idle)."""
    pushed_at_delivery: int = 0
    waits: list[_Wait] = field(default_factory=list)


class Team:
    """The team calls for the session's panes. ``open_pane(setup, opener)`` and ``close_pane(pane)`` are the
    host's (opening and closing take several of its parts); ``answer(id, reply)`` sends the gateway the answer."""

    settle: float = SETTLE

    def __init__(
        self,
        *,
        panes: Panes,
        attention: Attention,
        tasks: BackgroundTasks,
        answer: Callable[[str, TeamReply], Awaitable[None]],
        open_pane: Callable[[PaneSetup, HostPane], Awaitable[HostPane]],
        close_pane: Callable[[HostPane], Awaitable[None]],
        asks_of: Callable[[str], list[str]],
    ) -> None:
        self._panes = panes
        self._attention = attention
        self._tasks = tasks
        self._answer = answer
        self._open_pane = open_pane
        self._close_pane = close_pane
        self._asks_of = asks_of
        self._members: dict[str, _Membership] = {}
        self._ticking: asyncio.Task[None] | None = None
        self.ticks = 0
        """Rounds of the ticker so far (a test can wait for the host to have looked again)."""

    def membership(self, pane: HostPane) -> _Membership:
        return self._members.setdefault(pane.id, _Membership())

    def queued(self, pane: HostPane) -> int:
        member = self._members.get(pane.id)
        return len(member.queue) if member is not None else 0

    def sender_of(self, pane: HostPane) -> str | None:
        member = self._members.get(pane.id)
        return member.sender if member is not None else None

    # -- the gateway's requests ---------------------------------------------------------------------------

    def register_calls(self, calls: CallTable) -> None:
        calls.register(methods.HandoffsParams, self._handoffs)

    async def _handoffs(self, window: Window, params: methods.HandoffsParams) -> PaneState:
        """The human lets agents hand work to and from a pane, mutes what they send it, or forbids both."""
        pane = self._panes.get(params.pane)
        if pane.agent is None:
            raise SessionError(f"pane {pane.id} runs no agent: nothing is handed to it")
        pane.handoffs = params.mode
        member = self.membership(pane)
        if params.mode == "forbidden" and member.queue:
            self.pane_gone(pane, f"the human forbade hand-offs to pane {self._panes.number(pane)}")
        self._show(pane, member)
        self._tick_soon()
        return pane.state()

    def _allowed(self, pane: HostPane, role: str) -> None:
        if pane.handoffs == "forbidden":
            raise SessionError(f"the human forbade hand-offs {role} pane {self._panes.number(pane)}")

    def handle(self, request: TeamRequest) -> None:
        self._tasks.run(self._serve(request), f"the team call {request.action} of {request.caller}")

    async def _serve(self, request: TeamRequest) -> None:
        try:
            reply = await self._carry_out(request)
        except PolterError as exc:
            reply = TeamReply(error=str(exc))
        try:
            await self._answer(request.id, reply)
        except GatewayError as exc:
            logger.warning("the answer to the team call %s did not reach the gateway: %s", request.id, exc)

    async def _carry_out(self, request: TeamRequest) -> TeamReply:
        match request.action:
            case "roster":
                return TeamReply(members=self.roster())
            case "read":
                return TeamReply(text=self.read(self._target(request), request.lines))
            case "send":
                target = self._target(request)
                self._allowed(self._panes.get(request.caller), "from")
                self._allowed(target, "to")
                return TeamReply(
                    text=self.send(target, request.caller, request.sender_label or "", request.message or "")
                )
            case "wait":
                return await self.wait(self._target(request), request.caller, request.until, request.timeout)
            case "open":
                self._allowed(self._panes.get(request.caller), "from")
                return await self._open(request)
            case "close":
                self._allowed(self._target(request), "to")
                await self._close_pane(self._target(request))
                return TeamReply(text="closed")
        raise SessionError(f"not a team action: {request.action}")

    def _target(self, request: TeamRequest) -> HostPane:
        pane = self._panes.find(request.target or "")
        if pane is None:
            raise SessionError(f"the pane {request.target} is gone (it was closed)")
        return pane

    # -- panes, read ----------------------------------------------------------------------------------------

    def roster(self) -> list[TeamMember]:
        """The agent panes inside the sandbox (a shell the human runs unconfined is theirs, never a team's)."""
        members = []
        for number, pane in enumerate(self._panes, start=1):
            agent = pane.agent
            if agent is None or agent.closed or not pane_confined(pane):
                continue
            member = self._members.get(pane.id) or _Membership()
            worktree = pane.worktree.worktree.branch if pane.worktree is not None else None
            members.append(
                TeamMember(
                    pane=pane.id,
                    number=number,
                    title=agent.title,
                    cli=agent.adapter.name,
                    role=agent.role,
                    state=self._state(pane),
                    branch=worktree,
                    sender=member.sender,
                    opened_by=member.opened_by,
                    depth=member.depth,
                    queued=len(member.queue),
                    handoffs=pane.handoffs,
                )
            )
        return members

    def _state(self, pane: HostPane) -> str | None:
        """``working``, ``waiting`` (for the human), ``done`` (idle after a turn: its CLI's hooks said the turn
        ended, or the task it was handed showed as work and is over) or ``idle``."""
        state = pane.agent_state
        if state is None:
            return None
        if state is AgentState.WAITING:
            return "waiting"
        member = self._members.get(pane.id)
        if state is AgentState.IDLE and (pane.reading.turn_ended or (member is not None and member.finished)):
            return "done"
        return state.value

    def turn_over(self, pane: HostPane, since: float, worked: bool, *, quiet: bool = True) -> bool:
        """Whether a turn begun at ``since`` is over. A CLI with hooks says so: the turn is over once it reported,
        since, that its agent is idle (the turn ended), and not while it reports work, however long its screen
        stalls. A program without hooks is read from its screen: idle after it showed as work (``worked``) since, or
        (``quiet``) after its screen was quiet for :attr:`settle` seconds since. A pane whose CLI reported before
        has :data:`REPORT_GRACE` to report the turn before its screen alone is believed; one whose last report (work,
        a dialog) was followed by the human's keys is read from its screen too."""
        if pane.agent_state is not AgentState.IDLE or since > time.monotonic():
            return False  # (a turn whose Enter is not sent yet has not begun)
        report = pane.report
        if report is not None and pane.reported_at >= since:
            if report.state is AgentState.IDLE:
                return True
        elif report is not None and time.monotonic() - since < REPORT_GRACE:
            return False
        return worked or (quiet and time.monotonic() - max(since, pane.terminal.last_output) >= self.settle)

    def _observe(self, pane: HostPane, member: _Membership) -> None:
        """Note what the agent's state shows of the turns the team follows (read every tick and on each report)."""
        working = pane.agent_state is AgentState.WORKING
        if working:
            member.worked = True
            for wait in member.waits:
                wait.seen_working = True
        if member.delivered and not member.finished:
            member.finished = self.turn_over(pane, member.submitted_at, member.worked, quiet=False)

    @staticmethod
    def read(pane: HostPane, lines: int) -> str:
        pane.terminal.catch_up()
        screen = pane.terminal.screen
        if screen is None:
            return ""
        first = -min(lines, screen.history_size)
        return _text([screen.text(y) for y in range(first, 0)] + screen.display())

    # -- send ------------------------------------------------------------------------------------------------

    def send(self, pane: HostPane, sender: str, label: str, message: str) -> str:
        """Queue the message for ``pane``; typed now if it is ready. What happened, for the sender."""
        agent = pane.agent
        if agent is None:
            raise SessionError(f"pane {self._panes.number(pane)} runs no agent")
        if not reads_prompts(agent.adapter, agent.setup.command):
            raise SessionError(not_a_prompt(agent.adapter, agent.setup.command, f"pane {self._panes.number(pane)}"))
        if pane.terminal.started and not pane.terminal.running:
            raise SessionError(f"the program of pane {self._panes.number(pane)} is not running")
        member = self.membership(pane)
        member.queue.append(_Message(sender, label, f"[from {label}] {clean_message(message)}"))
        if pane.terminal.running:
            self._attention.attend(pane)
            self._observe(pane, member)
        self._deliver(pane, member)
        self._show(pane, member)
        if member.queue:
            self._tick_soon()
            number, waiting = self._panes.number(pane), len(member.queue)
            return f"queued for pane {number} ({waiting} waiting): it is typed when the agent is idle"
        return f"typed into pane {self._panes.number(pane)}"

    def _ready(self, pane: HostPane, member: _Membership) -> bool:
        """Whether a message may be typed into the pane now: never before its CLI can take a pasted prompt (its
        adapter's :meth:`~polter.adapters.Adapter.ready_for_prompt`), nor while its screen shows a question; while it
        draws only if its CLI's hooks said it is idle (a last line drawn just before its Stop is no work)."""
        terminal = pane.terminal
        if not terminal.running or pane.typed.text or self._asks_of(pane.id) or pane.handoffs != "on":
            return False
        agent, shown = pane.agent, terminal.screen
        if agent is None or shown is None or agent.adapter.ready_for_prompt(shown) is False:
            return False  # (a CLI that has not taken the terminal yet: its empty screen reads idle)
        screen = pane.read_agent_state()
        if screen is AgentState.WAITING or (screen is not AgentState.IDLE and pane.reading.source != "cli"):
            return False
        return self.turn_over(pane, member.submitted_at, member.worked)

    def _deliver(self, pane: HostPane, member: _Membership) -> None:
        if not member.queue or not self._ready(pane, member):
            return
        message = member.queue.popleft()
        terminal = pane.terminal
        screen = terminal.screen
        bracketed = screen is not None and screen.bracketed_paste
        terminal.paste(message.text if bracketed else message.text.replace("\n", " "))  # one message, one prompt
        process = terminal.process

        loop = asyncio.get_running_loop()
        tail = "".join(message.text.split())[-SHOWN_TAIL:]
        shown_by = time.monotonic() + SHOWN_WITHIN

        def same_program() -> bool:
            return terminal.running and terminal.process is process

        def submit() -> None:  # not pane.key: the pane's typed line (the human's words) never sees it
            member.submitted_at = time.monotonic()  # (a program that ended takes no Enter: its screen tells the rest)
            member.worked = False  # (a paste drawn slowly is no work of the turn)
            if same_program():
                terminal.key("enter")

        def submit_once_shown() -> None:
            """The Enter goes ENTER_AFTER after the program drew the paste, not after Polter wrote it: a busy program
            reads the paste late, and an Enter read with it is a newline in the paste to Codex."""
            if not same_program():
                submit()
                return
            drawn = terminal.screen is not None and tail in "".join("".join(terminal.screen.display()).split())
            if drawn or time.monotonic() > shown_by:  # (a CLI that shows a long paste as a placeholder)
                loop.call_later(ENTER_AFTER, submit)
            else:
                loop.call_later(TICK, submit_once_shown)

        member.sender = message.sender
        member.delivered += 1
        member.submitted_at = math.inf
        member.worked = member.finished = False
        submit_once_shown()
        member.pushed_at_delivery = screen.history_pushed if screen is not None else 0
        pane.task_from = (message.sender, message.label)
        self._show(pane, member)

    def _show(self, pane: HostPane, member: _Membership) -> None:
        """The pane's header: who gave it its task, how many messages wait."""
        pane.queued = len(member.queue)
        self._panes.changed(pane)

    # -- wait ------------------------------------------------------------------------------------------------

    async def wait(self, pane: HostPane, caller: str, until: str, timeout: float) -> TeamReply:
        member = self.membership(pane)
        screen = pane.terminal.screen
        unanswered = member.delivered > member.answered
        started = member.pushed_at_delivery if unanswered else (screen.history_pushed if screen is not None else 0)
        wait = _Wait(caller, until, started, time.monotonic())
        member.waits.append(wait)
        self._attention.attend(pane)
        self._observe(pane, member)
        self._check_waits(pane, member)
        self._tick_soon()
        try:
            return await asyncio.wait_for(asyncio.shield(wait.future), timeout)
        except TimeoutError:
            return TeamReply(error=f"pane {self._panes.number(pane)} was not {until} within {timeout:g} s "
                                   f"(it is {self._state(pane)})")  # fmt: skip
        finally:
            with contextlib.suppress(ValueError):
                member.waits.remove(wait)

    def _check_waits(self, pane: HostPane, member: _Membership) -> None:
        """End the waits whose state the pane reached: ``waiting``; ``idle`` (nothing queued, the last message's
        turn over); ``done`` (the same, after a turn: the one a message not yet answered by a ``done`` started,
        else one begun since the wait did)."""
        for wait in list(member.waits):
            if wait.future.done():
                continue
            settled = not member.queue and self.turn_over(pane, member.submitted_at, member.worked)
            if wait.until == "waiting":
                reached = pane.agent_state is AgentState.WAITING
            elif wait.until == "idle" or member.delivered > member.answered:
                reached = settled
            else:
                reached = settled and self.turn_over(pane, wait.started_at, wait.seen_working, quiet=False)
            if reached:
                if wait.until == "done":
                    member.answered = member.delivered
                wait.future.set_result(TeamReply(state=wait.until, text=self._written_since(pane, wait.started_pushed)))

    @staticmethod
    def _written_since(pane: HostPane, pushed: int) -> str:
        pane.terminal.catch_up()  # (the agent's last words, written before the report that ended its turn)
        screen = pane.terminal.screen
        if screen is None:
            return ""
        since = max(-(screen.history_pushed - pushed), -screen.history_size)
        rows = [screen.text(y) for y in range(since, 0)] + screen.display()
        return _text(rows[-MAX_WAIT_LINES:])

    # -- open ------------------------------------------------------------------------------------------------

    async def _open(self, request: TeamRequest) -> TeamReply:
        opener = self._panes.get(request.caller)
        if opener.agent is None:
            raise SessionError("only an agent pane opens panes")
        caller = self.membership(opener)
        same_cli = opener.agent.adapter.name == request.adapter
        setup = PaneSetup(
            adapter=request.adapter,
            role=request.role,
            cwd=opener.terminal.working_directory() or opener.agent.setup.cwd,
            title=request.title,
            command=opener.agent.setup.command if same_cli else None,
            worktree=request.worktree,
        )
        pane = await self._open_pane(setup, opener)
        member = self.membership(pane)
        member.opened_by, member.depth = opener.id, caller.depth + 1
        label = request.sender_label or f"pane {self._panes.number(opener)}"
        member.queue.append(_Message(opener.id, label, f"[from {label}] {clean_message(request.task or '')}"))
        self._show(pane, member)
        member.submitted_at = time.monotonic()  # its CLI starts: the first prompt waits for its start screen
        self._tick_soon()
        return TeamReply(pane=pane.id, number=self._panes.number(pane))

    # -- panes that go --------------------------------------------------------------------------------------

    def pane_gone(self, pane: HostPane, why: str, *, closed: bool = False) -> None:
        """The pane closed, its program ended or restarts: its queue goes, its waits end with ``why``."""
        member = self._members.get(pane.id)
        if member is None:
            return
        dropped = len(member.queue)
        member.queue.clear()
        member.delivered = member.answered = 0  # no turn of it is followed any more
        member.finished = False
        pane.queued = 0
        text = why + (f"; {dropped} queued message(s) were not typed" if dropped else "")
        for wait in member.waits:
            if not wait.future.done():
                wait.future.set_result(TeamReply(error=text))
        if closed:
            self._members.pop(pane.id, None)

    @staticmethod
    def _following(member: _Membership) -> bool:
        """Whether the turn the last message started is still followed (``panes`` shows it ``done`` once over)."""
        return bool(member.delivered) and not member.finished

    def reported(self, pane: HostPane) -> None:
        """The pane's CLI just said through its hooks what its agent does (already read): a turn it ended ends the
        waits on it now, not at the next tick."""
        member = self._members.get(pane.id)
        if member is None or not (member.queue or member.waits or self._following(member)) or not pane.terminal.running:
            return
        self._observe(pane, member)
        self._deliver(pane, member)
        self._check_waits(pane, member)

    # -- the ticker -----------------------------------------------------------------------------------------

    def _tick_soon(self) -> None:
        if self._ticking is None or self._ticking.done():
            self._ticking = asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        """While any queue or wait is pending: read those panes again (the agent's state), type, end waits."""
        while True:
            self.ticks += 1
            busy = False
            for pane in self._panes:
                member = self._members.get(pane.id)
                if member is None or not (member.queue or member.waits or self._following(member)):
                    continue
                busy = True
                terminal = pane.terminal
                if terminal.started and not terminal.running:
                    self.pane_gone(pane, f"the program of pane {self._panes.number(pane)} ended")
                    continue
                if not terminal.running:
                    continue  # (a pane just opened: its program starts once a window gives it a size)
                self._attention.attend(pane)
                self._observe(pane, member)
                self._deliver(pane, member)
                self._check_waits(pane, member)
            if not busy:
                return
            await asyncio.sleep(TICK)


def reads_prompts(adapter: Adapter, command: Sequence[str] | None) -> bool:
    """Whether a pane that runs ``command`` (None: the adapter's own CLI) reads what is typed into it as an agent's
    prompt: an agent CLI (its own program), or the bundled scripted agent. A shell, or any other program a pane's
    ``command`` names, is not: there a message would run as a command."""
    if command is None:
        return adapter.info.agent
    program = Path(command[0]).name
    if tuple(command[1:]) == SCRIPTED_AGENT and program.startswith("python"):
        return True
    return adapter.info.agent and program == Path(adapter.info.command).name


def not_a_prompt(adapter: Adapter, command: Sequence[str] | None, what: str) -> str:
    """Why nothing is typed into ``what`` (a pane that runs ``command``): for the agent's tool error."""
    program = Path(command[0]).name if command else adapter.executable()
    return (f"{what} runs {Path(program).name} ({adapter.display_name}), not an agent CLI: a message typed there would "
            f"run as a command, so agents send only to panes whose program is an agent CLI")  # fmt: skip


def pane_confined(pane: HostPane) -> bool:
    """Whether the pane runs in its sandbox (an agent CLI always; a shell unless its role lets it out)."""
    return pane.agent is not None and pane.agent.confined(pane.agent.builtins_at_launch)


def _text(rows: list[str]) -> str:
    lines = [row.rstrip() for row in rows]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)
