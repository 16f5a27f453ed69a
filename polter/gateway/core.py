"""The gateway's state and the operations every surface shares (MCP endpoints, ``/hook``, ``/control``).

``Gateway`` owns the pane registry, the policy door, the upstream pool, asks, audit and the per-pane
notification channels. The HTTP layers are thin: they authenticate, parse, and call a method here.

Every execution-layer path (``tools/call``, prompts, resources, the hook veto) goes through
:meth:`Gateway.authorize`, which decides with the engine, resolves an ask, and never turns a deny
into an allow. Listing paths go through :class:`~polter.gateway.policy.Policy`'s fail-open side.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from datetime import UTC, datetime
from typing import Any

import mcp_types as types
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from polter import __version__
from polter.errors import UpstreamError
from polter.gateway.asks import AskBroker
from polter.gateway.audit import AUDIT_FILE, AuditLog, digest_arguments
from polter.gateway.calls import CallAbandoned, CallInFlight, CallsInFlight
from polter.gateway.channels import ChangeKind, PaneChannels
from polter.gateway.config import GatewayConfig
from polter.gateway.events import EventHub
from polter.gateway.hook_payloads import FindTranslator, HookAdapters
from polter.gateway.models import (
    AskInfo,
    AskKind,
    AuditRow,
    Capabilities,
    GatewayStatus,
    Layer,
    PaneCreated,
    PaneInfo,
    PaneRegistration,
    Phase,
    RolesStatus,
    RoleSummary,
    ServerCapability,
    SkillCapability,
    ToolCapability,
)
from polter.gateway.panes import PaneRegistry, RegisteredPane
from polter.gateway.policy import Policy, annotations_of
from polter.gateway.routing import Router
from polter.gateway.server_requests import Elicitations, ServerRequests
from polter.gateway.team_desk import TeamDesk
from polter.gateway.upstreams import ListKind, UpstreamPool
from polter.protocol import HookAnswer, HookRequest
from polter.roles.engine import FLOOR_SERVER, Verdict
from polter.roles.library import ReloadReport, RoleLibrary

__all__ = ["Authorization", "Gateway", "PaneNotFound", "PhaseError"]

logger = logging.getLogger(__name__)

PREAPPROVAL_SECONDS = 120.0
"""How long an ask answered at the hook covers the identical gateway call that follows it."""
GATE_GRACE_SECONDS = 1.0
"""How long a call shut out by a keyword gate waits for a line the human may be submitting right now."""


class PaneNotFound(KeyError):
    pass


class PhaseError(ValueError):
    """A phase change the pane's role does not support."""


class Authorization:
    """The outcome of the execution layer for one request: allowed or not, and why."""

    __slots__ = ("allowed", "decision", "reason", "rule")

    def __init__(self, allowed: bool, decision: str, rule: str | None, reason: str) -> None:
        self.allowed, self.decision, self.rule, self.reason = allowed, decision, rule, reason


def _now() -> datetime:
    return datetime.now(UTC)


class Gateway:
    def __init__(self, config: GatewayConfig, roles: RoleLibrary, *, adapters: FindTranslator | None = None) -> None:
        self.config = config
        self.url = ""
        self.roles = roles
        self.panes = PaneRegistry()
        self.policy = Policy(roles, input_window=config.input_window)
        self.events = EventHub()
        self.asks = AskBroker(self.events, timeout=config.ask_timeout)
        self.asks.on_resolved = self._audit_ask
        self.audit = AuditLog(config.state_dir / AUDIT_FILE, keep_arguments=config.audit_arguments)
        self.audit.on_row = lambda row: self.events.publish("audit", row)
        self.channels = PaneChannels()
        self.calls = CallsInFlight()
        """What each upstream is serving for the panes right now."""
        self.router = Router(self)
        """What the upstreams send of their own accord, routed to the panes' sessions."""
        self.elicitations = Elicitations(self.events, timeout=config.ask_timeout)
        """Elicitations shown in Polter's window (the pane's CLI could not show them)."""
        self.server_requests = ServerRequests(self, self.channels.get_streams.__contains__)
        """The upstreams' sampling and elicitation requests, decided and routed."""
        self.team = TeamDesk(self.events)
        """The team tools' calls handed to the session host (docs/team.md)."""
        self.hook_adapters = HookAdapters(adapters)
        """The adapters that translate CLIs' hook payloads (``/hook/<adapter>/payload``), found by ``adapters``."""
        self.pool = UpstreamPool(
            config.servers,
            log_dir=config.state_dir / "upstreams",
            on_change=self._upstream_changed,
            listener=self.router,
        )
        self.ready = asyncio.Event()
        """Set once the app's lifespan has started everything."""
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- status ----------------------------------------------------------------------------------

    def status(self) -> GatewayStatus:
        return GatewayStatus(
            version=__version__,
            pid=os.getpid(),
            url=self.url,
            servers=self.pool.infos(),
            roles=self.roles_status(),
            panes=len(self.panes),
            controllers=self.events.controllers,
            pending_asks=len(self.asks.pending()),
        )

    def roles_status(self) -> RolesStatus:
        names = self.roles.names()
        return RolesStatus(
            names=names,
            problems=[str(problem) for problem in self.roles.problems],
            kept=sorted(self.roles.kept),
            roles=[self._role_summary(name) for name in names],
        )

    def _role_summary(self, name: str) -> RoleSummary:
        role, source = self.roles.get(name), self.roles.source(name)
        return RoleSummary(
            name=name,
            description=role.description if role is not None else "",
            phases=role is not None and role.has_phases,
            file=str(source.path) if source is not None else None,
            layer=source.layer if source is not None else None,
        )

    def reload_roles(self) -> RolesStatus:
        """Re-read role files now (the watcher does this by itself when files change)."""
        self.roles_reloaded(self.roles.reload())
        return self.roles_status()

    def roles_reloaded(self, report: ReloadReport) -> None:
        """Panes under a role that changed (or vanished) get ``list_changed`` and a notice."""
        for line in report.lines():
            logger.info("roles: %s", line)
        for pane in self.panes:
            if pane.role in report.affected:
                self._adopt_phase(pane)
                self._surface_changed(pane, f"the role {pane.role} changed on disk")
                self._spawn(self.router.drop_unreadable(pane))
        self.events.publish("roles", self.roles_status())

    # -- panes (control API) --------------------------------------------------------------------

    def pane_info(self, pane: RegisteredPane) -> PaneInfo:
        return pane.info(
            role_found=self.policy.role(pane) is not None,
            sessions=self.channels.count(pane.id),
            pending_asks=len(self.asks.pending(pane.id)),
        )

    def pane(self, pane_id: str) -> RegisteredPane:
        pane = self.panes.get(pane_id)
        if pane is None:
            raise PaneNotFound(pane_id)
        return pane

    def register(self, registration: PaneRegistration) -> PaneCreated:
        pane, token = self.panes.register(registration)
        self._adopt_phase(pane)
        info = self.pane_info(pane)
        self.events.publish("pane", info)
        return PaneCreated(pane=info, token=token)

    def remove(self, pane_id: str) -> PaneInfo:
        pane = self.pane(pane_id)
        info = self.pane_info(pane)
        self.panes.remove(pane_id)
        self.asks.deny_pane(pane_id, "the pane was removed")
        self.calls.abandon_pane(pane_id, "the pane was removed")
        self.router.forget_pane(pane_id)
        self.elicitations.cancel_pane(pane_id, "the pane was removed")
        self.channels.forget_pane(pane_id)
        self.policy.forget(pane_id)
        self.team.forget_pane(pane_id)
        self.events.publish("pane_removed", info)
        return info

    def set_role(self, pane_id: str, role: str) -> PaneInfo:
        pane = self.pane(pane_id)
        if role != pane.role:
            self.asks.deny_pane(pane_id, f"the pane switched to the role {role}")
            pane.role = role
            pane.grants.clear()
            pane.argument_grants.clear()
            pane.preapproved.clear()
            pane.phase = None
            self._adopt_phase(pane)
            self._surface_changed(pane, f"its role is now {role}")
            self._spawn(self.router.drop_unreadable(pane))
        return self._publish_pane(pane)

    def record_input(self, pane_id: str, text: str) -> PaneInfo:
        """A line the human typed: evidence for keyword gates, and a new research phase."""
        pane = self.pane(pane_id)
        pane.record_input(text)
        role = self.policy.role(pane)
        if role is not None and role.has_phases and pane.phase != "research":
            pane.phase = "research"
            self._surface_changed(pane, "a new request from the human started a research phase")
        return self._publish_pane(pane)

    async def set_phase(self, pane_id: str, phase: Phase, reason: str, *, by: str = "controller") -> PaneInfo:
        pane = self.pane(pane_id)
        self._change_phase(pane, phase)
        self._surface_changed(pane, f"the pane is now in the {phase} phase")
        await self._audit(
            pane,
            "phase",
            FLOOR_SERVER,
            "escalate" if phase == "action" else "reset",
            Authorization(True, "allow", "control", reason or f"set by the {by}"),
            0.0,
            None,
        )
        return self._publish_pane(pane)

    def set_skills(self, pane_id: str, skills: list[str]) -> PaneInfo:
        pane = self.pane(pane_id)
        pane.skills = sorted(set(skills))
        return self._publish_pane(pane)

    def _publish_pane(self, pane: RegisteredPane) -> PaneInfo:
        info = self.pane_info(pane)
        self.events.publish("pane", info)
        return info

    def _adopt_phase(self, pane: RegisteredPane) -> None:
        role = self.policy.role(pane)
        if role is None or not role.has_phases:
            pane.phase = None
        elif pane.phase is None:
            pane.phase = "research"

    def _change_phase(self, pane: RegisteredPane, phase: Phase) -> None:
        role = self.policy.role(pane)
        if role is None or not role.has_phases:
            raise PhaseError(f"the role {pane.role} has no phases")
        pane.phase = phase

    def _surface_changed(self, pane: RegisteredPane, why: str) -> None:
        """Tell the pane's sessions (``list_changed``) and the model (a notice on its next tool result)."""
        pane.notice = (
            f"[polter] This pane's tools changed: {why}. The tool list you saw earlier is out of "
            f"date; call whoami on the {FLOOR_SERVER} server to see what you may use now."
        )
        self._spawn(self.channels.notify(pane_id=pane.id, kinds=("tools", "prompts", "resources")))

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _upstream_changed(self, server: str, kind: ListKind) -> None:
        upstream = self.pool.get(server)
        if upstream is not None:
            self.events.publish("upstream", upstream.info())
        await self.channels.notify(endpoint=server, kinds=(kind,))

    # -- capabilities (whoami) ------------------------------------------------------------------

    async def capabilities(self, pane: RegisteredPane) -> Capabilities:
        """The pane's own surface. Waits (briefly) for upstreams still starting, so their tools show."""
        await asyncio.gather(*(upstream.wait_running() for upstream in self.pool.upstreams.values()))
        role = self.policy.role(pane)
        notes = []
        if role is None:
            notes.append(f"The role {pane.role!r} is not loaded: every call is refused until it is fixed.")
        elif role.has_phases:
            notes.append(
                f"Phase {pane.phase}: "
                + (
                    "only research tools can be used; call escalate on the polter server to act."
                    if pane.phase == "research"
                    else "a new line from the human starts a new research phase."
                )
            )
        servers = [self._floor_capability(pane)]
        for upstream in self.pool.upstreams.values():
            verdict = self.policy.decide_server(pane, upstream.name)
            visible = {
                tool.name
                for tool in self.policy.visible_tools(pane, upstream.name, upstream.tools, upstream.generation)
            }
            tools = [self._tool_capability(pane, upstream.name, tool, tool.name in visible) for tool in upstream.tools]
            servers.append(
                ServerCapability(
                    name=upstream.name,
                    decision=verdict.decision,
                    rule=verdict.rule,
                    reason=verdict.reason,
                    state=upstream.state,
                    tools=tools,
                )
            )
        skills = []
        for skill in pane.skills:
            verdict = self.policy.decide_skill(pane, skill)
            skills.append(
                SkillCapability(name=skill, decision=verdict.decision, rule=verdict.rule, reason=verdict.reason)
            )
        from polter.gateway.builtin_calls import builtins_policy, gateway_targets

        return Capabilities(
            builtins=builtins_policy(role, gateway_targets(self)) if role is not None else None,
            pane=pane.id,
            title=pane.title,
            role=pane.role,
            role_found=role is not None,
            description=role.description if role is not None else "",
            phase=pane.phase,
            servers=servers,
            skills=skills,
            notes=notes,
        )

    def _tool_capability(self, pane: RegisteredPane, server: str, tool: types.Tool, visible: bool) -> ToolCapability:
        verdict = self.policy.decide_tool(pane, server, tool.name, tool)
        read_only, destructive = annotations_of(tool)
        return ToolCapability(
            name=tool.name,
            decision=verdict.decision,
            visible=visible,
            rule=verdict.rule,
            reason=verdict.reason,
            read_only=bool(read_only),
            destructive=destructive is not False and not read_only,
        )

    def _floor_capability(self, pane: RegisteredPane) -> ServerCapability:
        from polter.gateway.floor import floor_tools

        tools = [self._tool_capability(pane, FLOOR_SERVER, tool, True) for tool in floor_tools(self, pane)]
        verdict = self.policy.decide_server(pane, FLOOR_SERVER)
        return ServerCapability(
            name=FLOOR_SERVER,
            decision=verdict.decision,
            rule=verdict.rule,
            reason=verdict.reason,
            state="running",
            tools=tools,
        )

    # -- the execution layer ---------------------------------------------------------------------

    async def authorize(
        self,
        pane: RegisteredPane,
        verdict: Verdict,
        *,
        kind: AskKind,
        server: str | None,
        name: str,
        arguments: dict[str, Any] | None,
        grant_key: tuple[str, str] | None = None,
        preapprove: bool = False,
    ) -> Authorization:
        """Turn a verdict into allowed/refused, asking the human when the verdict is ``ask``."""
        if verdict.decision == "allow":
            return Authorization(True, "allow", verdict.rule, verdict.reason)
        if verdict.decision == "deny":
            return Authorization(False, "deny", verdict.rule, verdict.reason)
        digest = digest_arguments(arguments)
        if grant_key is not None and not preapprove:
            deadline = pane.preapproved.pop((*grant_key, digest), None)
            if deadline is not None and deadline >= time.monotonic():
                return Authorization(True, "allow", verdict.rule, "the human allowed this call when its hook asked")
        outcome = await self.asks.ask(
            pane=pane.id,
            pane_title=pane.title,
            role=pane.role,
            kind=kind,
            server=server,
            name=name,
            arguments=arguments or {},
            rule=verdict.rule,
            reason=verdict.reason,
        )
        if outcome.allowed and pane in self.panes:
            if outcome.answer == "allow_pane" and grant_key is not None and verdict.by_arguments:
                pane.argument_grants.add((*grant_key, digest))  # these arguments only: others ask again
            elif outcome.answer == "allow_pane" and grant_key is not None:
                pane.grants.add(grant_key)
            elif preapprove and grant_key is not None:
                pane.preapproved[(*grant_key, digest)] = time.monotonic() + PREAPPROVAL_SECONDS
            return Authorization(True, outcome.answer or "allow", verdict.rule, outcome.reason)
        return Authorization(False, outcome.answer or "deny", verdict.rule, f"{verdict.reason} Then {outcome.reason}.")

    async def decide_tool_call(
        self,
        pane: RegisteredPane,
        server: str,
        name: str,
        tool: types.Tool | None,
        arguments: dict[str, Any] | None = None,
    ) -> Verdict:
        """The decision on a call, where a keyword gate that stays shut waits briefly for the human's line.

        The app writes the human's Enter to the CLI and then passes the line to the gateway, so a fast
        agent can call before its words arrive; the grace lets that line count. It can only open what
        the role's gate would open for those words: deny and ask rules are decided as always."""
        arguments = arguments if arguments is not None else {}
        verdict = self.policy.decide_tool(pane, server, name, tool, arguments)
        deadline = time.monotonic() + GATE_GRACE_SECONDS
        while (verdict.rule or "").startswith("gates[") and (left := deadline - time.monotonic()) > 0:
            if not await pane.next_input(left):
                break
            verdict = self.policy.decide_tool(pane, server, name, tool, arguments)
        return verdict

    async def call_tool(
        self,
        pane: RegisteredPane,
        server: str,
        name: str,
        arguments: dict[str, Any] | None,
        progress: ProgressFnT | None = None,
        call: CallInFlight | None = None,
    ) -> types.CallToolResult:
        started = time.perf_counter()
        upstream = self.pool.get(server)
        assert upstream is not None
        await upstream.wait_running()  # the decision needs the tool's annotations from its listing
        verdict = await self.decide_tool_call(pane, server, name, upstream.tool(name), arguments)
        auth = await self.authorize(
            pane, verdict, kind="tool", server=server, name=name, arguments=arguments, grant_key=(server, name)
        )
        if not auth.allowed:
            result = refusal(f"{server}/{name}", auth)
        else:
            try:
                result = await upstream.call_tool(name, arguments, progress, call)
            except CallAbandoned as exc:  # nobody will read the answer; the upstream was told to stop
                auth = Authorization(True, "allow", auth.rule, f"allowed; abandoned: {exc}")
                result = failure(f"{server}/{name}", str(exc))
            except UpstreamError as exc:
                auth = Authorization(False, "error", auth.rule, f"allowed, but the upstream failed: {exc}")
                result = failure(f"{server}/{name}", str(exc))
            except MCPError as exc:
                await self._audit(
                    pane,
                    "call",
                    server,
                    name,
                    Authorization(
                        True,
                        "allow",
                        auth.rule,
                        f"allowed; the upstream answered with error {exc.error.code}: {exc.error.message}",
                    ),
                    started,
                    arguments,
                )
                raise
            except asyncio.CancelledError:  # the caller cancelled; the SDK tells the upstream
                self.audit.submit(
                    self._row(
                        pane,
                        "call",
                        server,
                        name,
                        Authorization(True, "allow", auth.rule, "allowed; the caller cancelled the call"),
                        started,
                        arguments,
                    )
                )
                raise
        await self._audit(pane, "call", server, name, auth, started, arguments)
        return self.with_notice(pane, result)

    def with_notice(self, pane: RegisteredPane, result: types.CallToolResult) -> types.CallToolResult:
        """Prefix the pending one-line notice (tools changed) to this tool result, once."""
        notice, pane.notice = pane.notice, None
        if notice is None:
            return result
        return result.model_copy(update={"content": [types.TextContent(text=notice), *result.content]})

    async def list_tools(self, pane: RegisteredPane, server: str) -> list[types.Tool]:
        started = time.perf_counter()
        upstream = self.pool.get(server)
        assert upstream is not None
        await upstream.wait_running()
        visible = self.policy.visible_tools(pane, server, upstream.tools, upstream.generation)
        self.audit_listing(pane, server, len(visible), started)
        return visible

    def audit_listing(self, pane: RegisteredPane, server: str, listed: int, started: float) -> None:
        upstream = self.pool.get(server)
        total = len(upstream.tools) if upstream is not None else listed
        self.audit.submit(
            self._row(
                pane,
                "listing",
                server,
                None,
                Authorization(True, "allow", None, f"{listed} of {total} tools listed"),
                started,
                None,
            )
        )

    async def hook(self, pane: RegisteredPane, adapter: str, request: HookRequest) -> HookAnswer:
        """The CLI hook's veto: the same decision as the gateway call, asks resolved before answering."""
        if request.kind == "builtin":
            from polter.gateway.builtin_calls import decide_builtin_call

            auth = await decide_builtin_call(self, pane, adapter, request)
            return HookAnswer(decision="allow" if auth.allowed else "deny", reason=auth.reason, rule=auth.rule)
        started = time.perf_counter()
        server: str | None = None
        name: str | None = request.cli_tool
        if request.kind == "network":  # what the pane's own egress proxy decided: recorded as it says
            allowed = request.verdict == "allow"
            because = request.reason or ("allowed" if allowed else "refused") + " by the pane's egress proxy"
            auth = Authorization(allowed, "allow" if allowed else "deny", request.rule or "polter:egress", because)
        elif request.kind == "other":
            auth = Authorization(
                True,
                "allow",
                None,
                f"{request.cli_tool} is not a gateway tool or a skill; Polter's roles do not cover it",
            )
        elif request.kind == "skill":
            name = request.skill or request.cli_tool
            verdict = self.policy.decide_skill(pane, name)
            auth = await self.authorize(
                pane, verdict, kind="skill", server=None, name=name, arguments=request.arguments
            )
        else:
            server, name = request.server, request.tool
            if not server or not name:
                auth = Authorization(False, "deny", "polter:hook", "the hook request names no server and tool")
            elif server != FLOOR_SERVER and self.pool.get(server) is None:
                auth = Authorization(
                    False,
                    "deny",
                    "polter:unknown-server",
                    f"{server} is not one of the gateway's servers; a pane may use only those",
                )
            else:
                upstream = self.pool.get(server)
                if upstream is not None:
                    await upstream.wait_running()
                tool = upstream.tool(name) if upstream is not None else None
                verdict = await self.decide_tool_call(pane, server, name, tool, request.arguments)
                auth = await self.authorize(
                    pane,
                    verdict,
                    kind="tool",
                    server=server,
                    name=name,
                    arguments=request.arguments,
                    grant_key=(server, name),
                    preapprove=True,
                )
        layer: Layer = "network" if request.kind == "network" else "hook"
        await self._audit(pane, layer, server, name, auth, started, request.arguments, via=adapter)
        return HookAnswer(decision="allow" if auth.allowed else "deny", reason=auth.reason, rule=auth.rule)

    # -- audit -------------------------------------------------------------------------------------

    def _row(
        self,
        pane: RegisteredPane | None,
        layer: Layer,
        server: str | None,
        name: str | None,
        auth: Authorization,
        started: float,
        arguments: dict[str, Any] | None,
        via: str | None = None,
    ) -> AuditRow:
        latency = (time.perf_counter() - started) * 1000 if started else 0.0
        return self.audit.make_row(
            arguments=arguments,
            time=_now(),
            pane=pane.id if pane else None,
            role=pane.role if pane else None,
            layer=layer,
            server=server,
            name=name,
            decision=auth.decision,
            rule=auth.rule,
            reason=auth.reason if via is None else f"[{via}] {auth.reason}",
            latency_ms=round(latency, 3),
        )

    async def _audit(
        self,
        pane: RegisteredPane | None,
        layer: Layer,
        server: str | None,
        name: str | None,
        auth: Authorization,
        started: float,
        arguments: dict[str, Any] | None,
        via: str | None = None,
    ) -> None:
        await self.audit.write(self._row(pane, layer, server, name, auth, started, arguments, via))

    def audit_soon(
        self, pane: RegisteredPane, layer: Layer, server: str, name: str, auth: Authorization, started: float
    ) -> None:
        """A row written without waiting for it (decisions that hand out nothing, like a completion)."""
        self.audit.submit(self._row(pane, layer, server, name, auth, started, None))

    async def audit_decision(
        self,
        pane: RegisteredPane,
        layer: Layer,
        server: str,
        name: str,
        auth: Authorization,
        started: float,
        arguments: dict[str, Any] | None,
    ) -> None:
        await self._audit(pane, layer, server, name, auth, started, arguments)

    def _audit_ask(self, ask: AskInfo) -> None:
        """The answer to an ask gets its own row (the call's row follows with the call's outcome)."""
        waited = (datetime.now(UTC) - ask.created_at).total_seconds() * 1000
        self.audit.submit(
            self.audit.make_row(
                arguments=ask.arguments,
                time=_now(),
                pane=ask.pane,
                role=ask.role,
                layer="ask",
                server=ask.server,
                name=ask.name,
                decision=ask.answer or "deny",
                rule=ask.rule,
                reason=f"{ask.kind} ask {ask.id} answered by {ask.answered_by}",
                latency_ms=round(waited, 3),
            )
        )

    async def notify(self, pane: RegisteredPane, kinds: tuple[ChangeKind, ...] = ("tools",)) -> None:
        await self.channels.notify(pane_id=pane.id, kinds=kinds)


def refusal(subject: str, auth: Authorization) -> types.CallToolResult:
    """A deny the model can tell from a failure: it says Polter refused, by which rule, and why."""
    text = f"Polter refused {subject} (forbidden, not broken). Rule: {auth.rule}. {auth.reason}"
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        is_error=True,
        _meta={"polter": {"decision": "deny", "rule": auth.rule, "reason": auth.reason}},
    )


def failure(subject: str, message: str) -> types.CallToolResult:
    """An upstream failure: the role allowed the call, the server could not serve it."""
    text = f"{subject} failed (broken, not forbidden: the role allows it). {message}"
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        is_error=True,
        _meta={"polter": {"decision": "error", "reason": message}},
    )
