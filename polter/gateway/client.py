"""Typed async clients for the gateway.

- :class:`GatewayClient` speaks the control API with the admin token: what the app (and the
  ``polter panes``/``asks``/``audit`` commands) use to register panes, switch roles, push the human's
  input, answer asks and follow ``/control/events``.
- :func:`pane_client` opens the official MCP SDK client on one of the gateway's endpoints with a
  pane's token (``$POLTER_TOKEN``/``$POLTER_GATEWAY_URL``): what ``polter tools`` and ``polter call``
  use, so they see exactly what the pane's agent sees.

The control client speaks HTTP/1.1 itself (:mod:`polter.gateway.loopback_http`: the session host holds one,
and httpx2 with what it brings would be 5 MB of its memory); the pane client imports httpx2 and the MCP SDK
when it is opened.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, TypeAdapter

from polter.errors import AuthError, ControlError, GatewayUnavailable
from polter.gateway.loopback_http import HttpFailure, LoopbackHttp, Response
from polter.gateway.models import (
    AskAnswer,
    AskInfo,
    AuditRow,
    Capabilities,
    ElicitationInfo,
    ElicitationReply,
    GatewayEvent,
    GatewayStatus,
    PaneCreated,
    PaneInfo,
    Phase,
    RolesStatus,
    ServersReload,
    TeamReply,
)
from polter.gateway.state import read_state
from polter.paths import ENV_GATEWAY_URL, ENV_TOKEN
from polter.paths import state_dir as default_state_dir

if TYPE_CHECKING:
    import httpx2

__all__ = ["GatewayClient", "pane_client", "pane_credentials", "read_state"]

T = TypeVar("T")


class GatewayClient:
    """The control API, typed. Use as ``async with GatewayClient.from_state() as client: ...``."""

    def __init__(self, url: str, admin_token: str, *, timeout: float = 30.0) -> None:
        self.url = url.rstrip("/")
        self._http = LoopbackHttp(self.url, {"Authorization": f"Bearer {admin_token}"}, timeout)

    @classmethod
    def from_state(cls, state_dir: Path | None = None, **kwargs: Any) -> GatewayClient:
        """Connect to the gateway whose ``gateway.json`` is in ``state_dir`` (default: Polter's state dir)."""
        state = read_state(state_dir or default_state_dir())
        return cls(state.url, state.admin_token, **kwargs)

    async def __aenter__(self) -> GatewayClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Nothing to let go of: each request has a connection of its own (kept for ``async with``)."""

    # -- requests --------------------------------------------------------------------------------

    async def _request(
        self,
        method: str,
        path: str,
        result: type[T] | Any,
        body: BaseModel | dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
    ) -> T:
        payload = body.model_dump(mode="json", exclude_none=True) if isinstance(body, BaseModel) else body
        try:
            response = await self._http.request(method, path, json_body=payload, params=params)
        except HttpFailure as exc:
            raise GatewayUnavailable(f"cannot reach the gateway at {self.url}: {exc}") from exc
        if response.status >= 400:
            _raise_for(response)
        return TypeAdapter(result).validate_json(response.body)

    async def status(self) -> GatewayStatus:
        return await self._request("GET", "/control/status", GatewayStatus)

    async def panes(self) -> list[PaneInfo]:
        return await self._request("GET", "/control/panes", list[PaneInfo])

    async def register(
        self,
        role: str,
        *,
        title: str | None = None,
        pane_id: str | None = None,
        token: str | None = None,
        skills: Sequence[str] = (),
    ) -> PaneCreated:
        """Register a pane. Pass ``pane_id`` and ``token`` to re-register it with a restarted gateway."""
        body = {"role": role, "title": title, "id": pane_id, "token": token, "skills": list(skills)}
        return await self._request(
            "POST", "/control/panes", PaneCreated, {key: value for key, value in body.items() if value is not None}
        )

    async def pane(self, pane_id: str) -> PaneInfo:
        return await self._request("GET", f"/control/panes/{pane_id}", PaneInfo)

    async def remove(self, pane_id: str) -> PaneInfo:
        return await self._request("DELETE", f"/control/panes/{pane_id}", PaneInfo)

    async def set_role(self, pane_id: str, role: str) -> PaneInfo:
        return await self._request("PUT", f"/control/panes/{pane_id}/role", PaneInfo, {"role": role})

    async def input(self, pane_id: str, text: str) -> PaneInfo:
        """Record a line the human typed into the pane (keyword gates; starts a new research phase)."""
        return await self._request("POST", f"/control/panes/{pane_id}/input", PaneInfo, {"text": text})

    async def set_phase(self, pane_id: str, phase: Phase, reason: str = "") -> PaneInfo:
        return await self._request(
            "PUT", f"/control/panes/{pane_id}/phase", PaneInfo, {"phase": phase, "reason": reason}
        )

    async def set_skills(self, pane_id: str, skills: Sequence[str]) -> PaneInfo:
        return await self._request("PUT", f"/control/panes/{pane_id}/skills", PaneInfo, {"skills": list(skills)})

    async def capabilities(self, pane_id: str, *, wait: bool = True) -> Capabilities:
        """The pane's surface: the same facts its ``whoami`` gives the agent (``wait=False``: at once, without
        the tools of upstreams still starting)."""
        query = "" if wait else "?wait=0"
        return await self._request("GET", f"/control/panes/{pane_id}/capabilities{query}", Capabilities)

    async def asks(self, pane_id: str | None = None) -> list[AskInfo]:
        return await self._request("GET", "/control/asks", list[AskInfo], params={"pane": pane_id} if pane_id else None)

    async def answer(self, ask_id: str, answer: AskAnswer) -> AskInfo:
        return await self._request("POST", f"/control/asks/{ask_id}", AskInfo, {"answer": answer})

    async def elicitations(self, pane: str | None = None) -> list[ElicitationInfo]:
        params = {"pane": pane} if pane else None
        return await self._request("GET", "/control/elicitations", list[ElicitationInfo], params=params)

    async def answer_elicitation(self, elicitation_id: str, reply: ElicitationReply) -> ElicitationInfo:
        return await self._request("POST", f"/control/elicitations/{elicitation_id}", ElicitationInfo, reply)

    async def answer_team(self, request_id: str, reply: TeamReply) -> None:
        """The session host's answer to a team call (a ``team`` event)."""
        await self._request("POST", f"/control/team/{request_id}", dict[str, Any], reply)

    async def roles(self) -> RolesStatus:
        return await self._request("GET", "/control/roles", RolesStatus)

    async def reload_roles(self) -> RolesStatus:
        return await self._request("POST", "/control/roles/reload", RolesStatus)

    async def reload_servers(self) -> ServersReload:
        return await self._request("POST", "/control/servers/reload", ServersReload)

    async def audit(self, *, pane_id: str | None = None, after: int = 0, limit: int | None = None) -> list[AuditRow]:
        params: dict[str, Any] = {"after": after}
        if pane_id:
            params["pane"] = pane_id
        if limit is not None:
            params["limit"] = limit
        return await self._request("GET", "/control/audit", list[AuditRow], params=params)

    async def events(self) -> AsyncIterator[GatewayEvent]:
        """Follow ``/control/events``. While iterating, this client counts as a controller (asks wait)."""
        try:
            async with self._http.stream("/control/events") as (response, lines):
                if response.status >= 400:
                    _raise_for(Response(response.status, "\n".join([line async for line in lines]).encode()))
                event_type, data = "", []
                async for line in lines:
                    if line.startswith("event:"):
                        event_type = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].strip())
                    elif not line and event_type:
                        payload = json.loads("\n".join(data)) if data else {}
                        yield GatewayEvent.model_validate({"type": event_type, "data": payload})
                        event_type, data = "", []
        except HttpFailure as exc:
            raise GatewayUnavailable(f"lost the gateway at {self.url}: {exc}") from exc


def _raise_for(response: Response) -> None:
    try:
        answer = response.json()
        message = answer.get("error", response.text) if isinstance(answer, dict) else response.text
    except ValueError:
        message = response.text
    if response.status in (401, 403):
        raise AuthError(f"the gateway refused the admin token ({response.status}): {message}")
    raise ControlError(message, status=response.status)


def pane_credentials(url: str | None = None, token: str | None = None) -> tuple[str, str]:
    """The gateway URL and pane token: given, or from ``$POLTER_GATEWAY_URL``/``$POLTER_TOKEN``."""
    url = url or os.environ.get(ENV_GATEWAY_URL)
    token = token or os.environ.get(ENV_TOKEN)
    if not url or not token:
        missing = " and ".join(name for name, value in ((ENV_GATEWAY_URL, url), (ENV_TOKEN, token)) if not value)
        raise AuthError(f"{missing} not set: run this inside a Polter pane (or set them by hand)")
    return url.rstrip("/"), token


@contextlib.asynccontextmanager
async def pane_client(
    server: str, *, url: str | None = None, token: str | None = None, mode: str = "auto"
) -> AsyncIterator[Any]:
    """An entered ``mcp.Client`` on ``/mcp/<server>`` with the pane's token.

    A refused token becomes :class:`AuthError` and an unreachable gateway :class:`GatewayUnavailable`,
    instead of the SDK's task-group tracebacks.
    """
    # lazy: the host and the admin commands use the control client without the MCP SDK and httpx2
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    base, secret = pane_credentials(url, token)

    async def refuse(response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            raise AuthError(
                f"the gateway at {base} does not accept this pane's token (the pane was removed, "
                "or the gateway restarted without it)"
            )
        if response.status_code == 404 and "mcp-session-id" not in response.request.headers:
            raise ControlError(f"the gateway at {base} has no server {server!r}", status=404)

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {secret}"},
        timeout=httpx2.Timeout(30.0, read=None),
        event_hooks={"response": [refuse]},
    )
    try:
        async with Client(streamable_http_client(f"{base}/mcp/{server}", http_client=http), mode=mode) as client:
            yield client
    except Exception as exc:
        cause = _first_cause(exc, (AuthError, ControlError, httpx2.TransportError))
        if isinstance(cause, httpx2.ConnectError):
            raise GatewayUnavailable(f"cannot reach the gateway at {base}: {cause}") from exc
        if isinstance(cause, httpx2.TransportError):  # (in a sandbox: the forwarder took the connection, then none)
            raise GatewayUnavailable(
                f"the gateway at {base} did not answer ({type(cause).__name__}{f': {cause}' if str(cause) else ''})"
            ) from exc
        if cause is not None:
            raise cause from exc
        raise
    finally:
        await http.aclose()


def _first_cause(exc: BaseException, kinds: tuple[type[BaseException], ...]) -> BaseException | None:
    """The first exception of ``kinds`` in ``exc``, its exception groups and its causes."""
    seen: set[int] = set()
    pending = [exc]
    while pending:
        current = pending.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, kinds):
            return current
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None
