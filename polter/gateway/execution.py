"""The execution layer: every path that hands out power decides here. A verdict of the roles' engine becomes
allowed or refused (:meth:`Execution.authorize`: an ``ask`` asks the human, and a deny never turns into an
allow); a tool call goes to its upstream only when allowed; the CLI hook's veto is the same decision as the
gateway call that follows it. The listing path (fail-open) is :class:`~polter.gateway.policy.Policy`'s other
side; a pane's tool listing is audited here too."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

import mcp_types as types

from polter.errors import UpstreamError
from polter.gateway.audit import digest_arguments
from polter.gateway.builtin_calls import decide_builtin_call
from polter.gateway.calls import CallAbandoned, CallInFlight
from polter.gateway.models import AskKind, Layer
from polter.gateway.outcomes import Authorization, failure, refusal
from polter.gateway.panes import RegisteredPane
from polter.protocol import HookAnswer, HookRequest
from polter.roles.engine import FLOOR_SERVER, Verdict

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT

    from polter.gateway.core import Gateway

__all__ = ["GATE_GRACE_SECONDS", "PREAPPROVAL_SECONDS", "Execution"]

PREAPPROVAL_SECONDS = 120.0
"""How long an ask answered at the hook covers the identical gateway call that follows it."""
GATE_GRACE_SECONDS = 1.0
"""How long a call shut out by a keyword gate waits for a line the human may be submitting right now."""


class Execution:
    """Decides calls for ``gateway``'s panes (its policy, asks, upstream pool and audit)."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

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
        outcome = await self.gateway.asks.ask(
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
        if outcome.allowed and pane in self.gateway.panes:
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
        policy = self.gateway.policy
        arguments = arguments if arguments is not None else {}
        verdict = policy.decide_tool(pane, server, name, tool, arguments)
        deadline = time.monotonic() + GATE_GRACE_SECONDS
        while (verdict.rule or "").startswith("gates[") and (left := deadline - time.monotonic()) > 0:
            if not await pane.next_input(left):
                break
            verdict = policy.decide_tool(pane, server, name, tool, arguments)
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
        auditor = self.gateway.auditor
        started = time.perf_counter()
        upstream = self.gateway.pool.get(server)
        assert upstream is not None
        await upstream.wait_running()  # the decision needs the tool's annotations from its listing
        verdict = await self.decide_tool_call(pane, server, name, upstream.tool(name), arguments)
        auth = await self.authorize(
            pane, verdict, kind="tool", server=server, name=name, arguments=arguments, grant_key=(server, name)
        )
        if not auth.allowed:
            result = refusal(f"{server}/{name}", auth)
        else:
            from mcp.shared.exceptions import MCPError  # lazy: it loads mcp_types' models (sdk_imports.py)

            try:
                result = await upstream.call_tool(name, arguments, progress, call)
            except CallAbandoned as exc:  # nobody will read the answer; the upstream was told to stop
                auth = Authorization(True, "allow", auth.rule, f"allowed; abandoned: {exc}")
                result = failure(f"{server}/{name}", str(exc))
            except UpstreamError as exc:
                auth = Authorization(False, "error", auth.rule, f"allowed, but the upstream failed: {exc}")
                result = failure(f"{server}/{name}", str(exc))
            except MCPError as exc:
                said = f"allowed; the upstream answered with error {exc.error.code}: {exc.error.message}"
                await auditor.record(pane, "call", server, name, Authorization(True, "allow", auth.rule, said), started,
                                     arguments)  # fmt: skip
                raise
            except asyncio.CancelledError:  # the caller cancelled; the SDK tells the upstream
                said = "allowed; the caller cancelled the call"
                auditor.soon(pane, "call", server, name, Authorization(True, "allow", auth.rule, said), started,
                             arguments)  # fmt: skip
                raise
        await auditor.record(pane, "call", server, name, auth, started, arguments)
        return self.with_notice(pane, result)

    def with_notice(self, pane: RegisteredPane, result: types.CallToolResult) -> types.CallToolResult:
        """Prefix the pending one-line notice (tools changed) to this tool result, once."""
        notice, pane.notice = pane.notice, None
        if notice is None:
            return result
        return result.model_copy(update={"content": [types.TextContent(text=notice), *result.content]})

    async def list_tools(self, pane: RegisteredPane, server: str) -> list[types.Tool]:
        started = time.perf_counter()
        upstream = self.gateway.pool.get(server)
        assert upstream is not None
        await upstream.wait_running()
        visible = self.gateway.policy.visible_tools(pane, server, upstream.tools, upstream.generation)
        self.audit_listing(pane, server, len(visible), started)
        return visible

    def audit_listing(self, pane: RegisteredPane, server: str, listed: int, started: float) -> None:
        upstream = self.gateway.pool.get(server)
        total = len(upstream.tools) if upstream is not None else listed
        said = Authorization(True, "allow", None, f"{listed} of {total} tools listed")
        self.gateway.auditor.soon(pane, "listing", server, None, said, started)

    async def hook(self, pane: RegisteredPane, adapter: str, request: HookRequest) -> HookAnswer:
        """The CLI hook's veto: the same decision as the gateway call, asks resolved before answering."""
        if request.kind == "builtin":
            auth = await decide_builtin_call(self.gateway, pane, adapter, request)
            return HookAnswer(decision="allow" if auth.allowed else "deny", reason=auth.reason, rule=auth.rule)
        started = time.perf_counter()
        server: str | None = None
        name: str | None = request.cli_tool
        pool = self.gateway.pool
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
            verdict = self.gateway.policy.decide_skill(pane, name)
            auth = await self.authorize(
                pane, verdict, kind="skill", server=None, name=name, arguments=request.arguments
            )
        else:
            server, name = request.server, request.tool
            if not server or not name:
                auth = Authorization(False, "deny", "polter:hook", "the hook request names no server and tool")
            elif server != FLOOR_SERVER and pool.get(server) is None:
                auth = Authorization(
                    False,
                    "deny",
                    "polter:unknown-server",
                    f"{server} is not one of the gateway's servers; a pane may use only those",
                )
            else:
                upstream = pool.get(server)
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
        await self.gateway.auditor.record(pane, layer, server, name, auth, started, request.arguments, via=adapter)
        return HookAnswer(decision="allow" if auth.allowed else "deny", reason=auth.reason, rule=auth.rule)
