"""The rows the gateway's decisions write to the audit log (:mod:`polter.gateway.audit` keeps them): one per
listing, call, hook decision, resource, completion and server request, and one per answer to an ask."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from polter.gateway.audit import AuditLog
from polter.gateway.models import AskInfo, AuditRow, Layer
from polter.gateway.outcomes import Authorization
from polter.gateway.panes import RegisteredPane

__all__ = ["Auditor"]


class Auditor:
    """Writes decisions to ``log``. Execution-layer rows are awaited (:meth:`record`): a call the agent saw an
    answer to is already in the log; rows that hand out nothing are written without waiting (:meth:`soon`)."""

    def __init__(self, log: AuditLog) -> None:
        self.log = log

    def row(
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
        return self.log.make_row(
            arguments=arguments,
            time=datetime.now(UTC),
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

    async def record(
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
        await self.log.write(self.row(pane, layer, server, name, auth, started, arguments, via))

    def soon(
        self,
        pane: RegisteredPane | None,
        layer: Layer,
        server: str | None,
        name: str | None,
        auth: Authorization,
        started: float,
        arguments: dict[str, Any] | None = None,
    ) -> None:
        """A row written without waiting for it (a listing, a completion, a call its caller cancelled)."""
        self.log.submit(self.row(pane, layer, server, name, auth, started, arguments))

    def ask_answered(self, ask: AskInfo) -> None:
        """The answer to an ask gets its own row (the call's row follows with the call's outcome)."""
        waited = (datetime.now(UTC) - ask.created_at).total_seconds() * 1000
        self.log.submit(
            self.log.make_row(
                arguments=ask.arguments,
                time=datetime.now(UTC),
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
