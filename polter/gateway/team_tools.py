"""The team tools of the ``polter`` floor server: ``panes``, ``read``, ``send``, ``wait``, ``open``, ``close``.

Each call is decided here, by the caller's role (:mod:`polter.roles.team`), before the session host is asked to
do anything (:mod:`polter.gateway.team_desk`): the pane's identity is its token, and a pane is named by its number
among the panes the role lets it see. A message is marked with its sender and typed into the other pane's CLI as
a prompt; it is never the human's input there (no keyword gate opens on it, no phase starts), and it cannot raise
what that pane may do. ``open`` gives a pane a role only when the engine shows that the role grants nothing the
opener's does not; otherwise the human is asked, with the difference listed (no escalation by proxy).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, NoReturn

import mcp_types as types

from polter.gateway.models import TeamMember, TeamReply
from polter.gateway.outcomes import Authorization, refusal
from polter.gateway.panes import RegisteredPane
from polter.gateway.tool_specs import ToolSpec
from polter.roles.engine import FLOOR_SERVER, CompiledRole, Verdict
from polter.roles.team import Member, TeamVerb, decide_open, decide_team, proxy_differences

if TYPE_CHECKING:
    from polter.gateway.core import Gateway

__all__ = ["MAX_MESSAGE_BYTES", "TEAM_TOOLS", "call_team_tool", "team_tools"]

MAX_MESSAGE_BYTES = 64 * 1024
"""The longest message ``send`` hands on (and ``open``'s task)."""
MAX_WAIT_SECONDS = 3600.0
MAX_READ_LINES = 2000
HOST_MARGIN = 5.0
"""How much longer than the call itself the gateway waits for the host's answer."""

_PANE = {"type": "integer", "minimum": 1, "description": "The pane's number, as `panes` lists it."}
_QUIET = True
"""Reads and waits: read-only and idempotent."""
_ACTS = False


def _tool(name: str, title: str, description: str, properties: dict[str, Any], required: list[str],
          quiet: bool) -> ToolSpec:  # fmt: skip
    return ToolSpec(name, title, description, properties, tuple(required), read_only=quiet, idempotent=quiet)


TEAM_TOOLS: dict[str, ToolSpec] = {
    tool.name: tool
    for tool in (
        _tool("panes", "The other panes", "The panes of this session your role lets you see: number, title, CLI, "
              "role, state (working, waiting, idle), worktree branch, who gave each its task.", {}, [], _QUIET),
        _tool("read", "Read a pane", "Another pane's screen and the last lines of its scrollback, as text.",
              {"pane": _PANE, "lines": {"type": "integer", "minimum": 0, "maximum": MAX_READ_LINES, "default": 40,
                                        "description": "Scrollback lines before the screen."}}, ["pane"], _QUIET),
        _tool("send", "Hand work to a pane", "Type a message into another pane's CLI as a prompt, marked as yours "
              "([from pane N · role]). Typed when that agent is idle, queued in order while it works; never typed "
              "into a pane waiting for the human. It is not the human's word there.",
              {"pane": _PANE, "message": {"type": "string", "minLength": 1}}, ["pane", "message"], _ACTS),
        _tool("wait", "Wait for a pane", "Return when another pane's agent is idle, done (worked, then idle) or "
              "waiting for the human, with the lines it wrote meanwhile.",
              {"pane": _PANE, "until": {"type": "string", "enum": ["idle", "done", "waiting"], "default": "done"},
               "timeout": {"type": "number", "minimum": 0, "maximum": MAX_WAIT_SECONDS, "default": 300}},
              ["pane"], _QUIET),
        _tool("open", "Open a pane", "A new pane in this session: a CLI under a role your role may give, started "
              "with `task` as its first prompt; returns its number.",
              {"adapter": {"type": "string", "description": "The CLI: claude-code, codex, gemini-cli, shell..."},
               "role": {"type": "string"}, "task": {"type": "string", "minLength": 1},
               "worktree": {"type": "boolean", "default": False, "description": "In a git worktree of its own."},
               "title": {"type": "string"}}, ["adapter", "role", "task"], _ACTS),
        _tool("close", "Close a pane", "Close a pane you opened.", {"pane": _PANE}, ["pane"], _ACTS),
    )
}  # fmt: skip

_VERB_OF_TOOL: dict[str, TeamVerb] = {"read": "read", "send": "send", "wait": "wait", "close": "close"}


def team_tools(role: CompiledRole | None) -> list[ToolSpec]:
    """The team tools listed to a pane: ``panes``, and each other one its role's [team] names anything for."""
    if role is None:
        return list(TEAM_TOOLS.values())  # the listing fails open; a call under no role is refused
    team = role.team
    return [tool for name, tool in TEAM_TOOLS.items() if name == "panes" or getattr(team, name)]


def _text(text: str, *, error: bool = False, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error, structured_content=structured)


def _member(member: TeamMember, role: str) -> Member:
    return Member(member.pane, role, number=member.number, sender=member.sender, opened_by=member.opened_by,
                  depth=member.depth)  # fmt: skip


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:80] + ("…" if len(line) > 80 else "")


class _Refused(Exception):
    def __init__(self, auth: Authorization, subject: str) -> None:
        self.auth, self.subject = auth, subject


class _Call:
    """One team call: the caller, its role, and the panes of the session as the gateway knows their roles."""

    def __init__(self, gateway: Gateway, pane: RegisteredPane, name: str, arguments: dict[str, Any]) -> None:
        self.gateway, self.pane, self.name, self.arguments = gateway, pane, name, arguments
        self.desk = gateway.team
        role = gateway.policy.role(pane)
        if role is None:
            self._refuse(
                f"the role {pane.role!r} is not loaded: every call is refused until it is fixed", "polter:role"
            )
        self.role: CompiledRole = role
        self.members: list[tuple[TeamMember, Member]] = []
        self.me: Member | None = None

    def _refuse(self, reason: str, rule: str) -> NoReturn:
        raise _Refused(Authorization(False, "deny", rule, reason), f"{FLOOR_SERVER}/{self.name}")

    def _error(self, reason: str) -> NoReturn:
        raise _Refused(Authorization(False, "error", None, reason), f"{FLOOR_SERVER}/{self.name}")

    async def roster(self) -> None:
        reply = await self.desk.ask_host(10.0, action="roster", caller=self.pane.id)
        self._check(reply)
        for member in reply.members:
            registered = self.gateway.panes.get(member.pane)
            if registered is None:
                continue  # not an agent pane under a role the gateway knows: not part of any team
            self.members.append((member, _member(member, registered.role)))
        self.me = next((member for wire, member in self.members if wire.pane == self.pane.id), None)
        if self.me is None:
            self._error("this pane is not one of the session's panes (is it a pane of another session's gateway?)")

    def _check(self, reply: TeamReply) -> TeamReply:
        if reply.error is not None:
            self._error(reply.error)
        return reply

    def visible(self) -> list[tuple[TeamMember, Member]]:
        assert self.me is not None
        return [(wire, member) for wire, member in self.members
                if decide_team(self.role.name, self.role.team, "see", self.me, member).allowed]  # fmt: skip

    def target(self, verb: TeamVerb) -> tuple[TeamMember, Member, Verdict]:
        """The pane the call names, once the role allows ``verb`` on it."""
        assert self.me is not None
        number = self.arguments.get("pane")
        seen = self.visible()
        found = next(((wire, member) for wire, member in self.members if wire.number == number), None)
        listed = ", ".join(f"{wire.number} ({member.role})" for wire, member in seen) or "none"
        if not isinstance(number, int) or found is None or found not in seen:
            self._error(f"there is no pane {number!r} you can see; the panes you can see: {listed}")
        assert found is not None
        verdict = decide_team(self.role.name, self.role.team, verb, self.me, found[1])
        if not verdict.allowed:
            self._refuse(verdict.reason, verdict.rule)
        return found[0], found[1], Verdict("allow", verdict.rule, verdict.reason)


async def call_team_tool(
    gateway: Gateway, pane: RegisteredPane, name: str, arguments: dict[str, Any] | None
) -> tuple[types.CallToolResult, Authorization]:
    """Decide and carry out one team tool call; the result and what the audit row says of it."""
    try:
        call = _Call(gateway, pane, name, arguments or {})
        await call.roster()
        return await _HANDLERS[name](call)
    except _Refused as refused:
        auth = refused.auth
        if auth.decision == "error":
            return _text(f"{refused.subject} failed: {auth.reason}", error=True), auth
        return refusal(refused.subject, auth), auth


async def _panes(call: _Call) -> tuple[types.CallToolResult, Authorization]:
    shown = [wire.model_dump(mode="json", exclude={"pane", "depth"}) | {"you": wire.pane == call.pane.id,
             "role": member.role, "sender": _number(call, wire.sender), "opened_by": _number(call, wire.opened_by)}
             for wire, member in call.visible()]  # fmt: skip
    auth = Authorization(True, "allow", "team.see", f"{len(shown)} of {len(call.members)} panes listed")
    return _text(json.dumps(shown, indent=1, ensure_ascii=False), structured={"panes": shown}), auth


def _number(call: _Call, pane_id: str | None) -> int | None:
    return next((wire.number for wire, _member in call.members if wire.pane == pane_id), None)


async def _read(call: _Call) -> tuple[types.CallToolResult, Authorization]:
    wire, member, verdict = call.target("read")
    lines = min(max(int(call.arguments.get("lines", 40)), 0), MAX_READ_LINES)
    reply = call._check(await call.desk.ask_host(10.0, action="read", caller=call.pane.id, target=wire.pane,
                                                 lines=lines))  # fmt: skip
    auth = Authorization(True, "allow", verdict.rule, f"read {member.label}")
    return _text(reply.text or ""), auth


async def _send(call: _Call) -> tuple[types.CallToolResult, Authorization]:
    message = str(call.arguments.get("message", ""))
    size = len(message.encode())
    if size > MAX_MESSAGE_BYTES:
        call._error(f"the message is {size} bytes; the limit is {MAX_MESSAGE_BYTES} bytes (64 KB)")
    if not message.strip():
        call._error("the message is empty")
    wire, member, verdict = call.target("send")
    limit = call.role.team.messages_per_minute
    if call.desk.sent_recently(call.pane.id) >= limit:
        call._refuse(f"this pane sent {limit} messages in the last minute, the most the role {call.role.name} allows "
                     f"(team.messages_per_minute)", "team.messages_per_minute")  # fmt: skip
    call.desk.record_send(call.pane.id)
    assert call.me is not None
    reply = call._check(await call.desk.ask_host(
        10.0, action="send", caller=call.pane.id, target=wire.pane, message=message,
        sender_label=f"pane {call.me.number} · {call.role.name}"))  # fmt: skip
    said = f'to {member.label}: "{_first_line(message)}" ({len(message)} characters)'
    return _text(reply.text or "sent"), Authorization(True, "allow", verdict.rule, said)


async def _wait(call: _Call) -> tuple[types.CallToolResult, Authorization]:
    wire, member, verdict = call.target("wait")
    until = call.arguments.get("until", "done")
    if until not in ("idle", "done", "waiting"):
        call._error(f"until must be idle, done or waiting, not {until!r}")
    timeout = min(max(float(call.arguments.get("timeout", 300)), 0.0), MAX_WAIT_SECONDS)
    cycle = call.desk.wait_cycle(call.pane.id, wire.pane)
    if cycle is not None:
        named = " waits on ".join(f"pane {_number(call, pane)}" for pane in cycle)
        call._refuse(f"a cycle of waits: {named}; nobody would ever return", "team.wait-cycle")
    call.desk.waiting[call.pane.id] = wire.pane
    try:
        reply = await call.desk.ask_host(timeout + HOST_MARGIN, action="wait", caller=call.pane.id, target=wire.pane,
                                         until=until, timeout=timeout)  # fmt: skip
    finally:
        call.desk.waiting.pop(call.pane.id, None)
    call._check(reply)
    auth = Authorization(True, "allow", verdict.rule, f"waited on {member.label} until {reply.state}")
    text = f"pane {wire.number} is {reply.state}. What it wrote meanwhile:\n{reply.text or ''}"
    return _text(text, structured={"state": reply.state, "text": reply.text or ""}), auth


async def _open(call: _Call) -> tuple[types.CallToolResult, Authorization]:
    assert call.me is not None
    arguments = call.arguments
    new_role, adapter, task = str(arguments.get("role", "")), str(arguments.get("adapter", "")), arguments.get("task")
    if not isinstance(task, str) or not task.strip():
        call._error("open needs a task: the new pane's first prompt")
    if len(task.encode()) > MAX_MESSAGE_BYTES:
        call._error(f"the task is over the limit of {MAX_MESSAGE_BYTES} bytes (64 KB)")
    verdict = decide_open(call.role.name, call.role.team, call.me, new_role)
    if not verdict.allowed:
        call._refuse(verdict.reason, verdict.rule)
    candidate = call.gateway.roles.get(new_role)
    if candidate is None:
        call._error(f"there is no role {new_role!r}; the roles: {', '.join(call.gateway.roles.names())}")
    assert candidate is not None
    differences = proxy_differences(call.role.describe(), candidate.describe())
    rule = verdict.rule
    if differences:
        asked = Verdict("ask", "team.open", f"The engine cannot show that the role {new_role} grants nothing the role "
                        f"{call.role.name} does not: " + "; ".join(differences) + ".")  # fmt: skip
        auth = await call.gateway.execution.authorize(
            call.pane, asked, kind="tool", server=FLOOR_SERVER, name="open",
            arguments={"adapter": adapter, "role": new_role, "task": _first_line(task), "differences": differences},
        )  # fmt: skip
        if not auth.allowed:
            raise _Refused(auth, f"{FLOOR_SERVER}/open")
        rule = "team.open (asked)"
    reply = call._check(await call.desk.ask_host(
        120.0, action="open", caller=call.pane.id, adapter=adapter, role=new_role, task=task,
        worktree=bool(arguments.get("worktree", False)), title=arguments.get("title"),
        sender_label=f"pane {call.me.number} · {call.role.name}"))  # fmt: skip
    said = f'pane {reply.number} as {new_role} ({adapter}): "{_first_line(task)}" ({len(task)} characters)'
    return _text(f"Opened pane {reply.number} ({adapter}, role {new_role}); its first prompt is your task.",
                 structured={"pane": reply.number}), Authorization(True, "allow", rule, said)  # fmt: skip


async def _close(call: _Call) -> tuple[types.CallToolResult, Authorization]:
    wire, member, verdict = call.target("close")
    call._check(await call.desk.ask_host(30.0, action="close", caller=call.pane.id, target=wire.pane))
    return _text(f"Closed pane {wire.number}."), Authorization(True, "allow", verdict.rule, f"closed {member.label}")


_HANDLERS = {"panes": _panes, "read": _read, "send": _send, "wait": _wait, "open": _open, "close": _close}
