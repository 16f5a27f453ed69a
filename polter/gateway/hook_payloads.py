"""``POST /hook/<adapter>/payload``: a CLI's own pre-tool hook payload, judged and answered in its format.

The CLI's hook sends its payload here untouched: Claude Code directly (an HTTP hook, no process at all),
the other CLIs through :mod:`polter.hook_client`, a stdlib-only command that only forwards. The pane's
adapter translates the payload into a :class:`~polter.protocol.HookRequest` and the verdict back into the
CLI's reply. That translation is each adapter's own code (its CLI's tool names and reply format) and must run
where the payload arrives, so it runs in the gateway's process; but the gateway knows no CLI: whoever starts
it hands it a way to find a :class:`HookTranslator` by adapter name (``polter gateway`` hands it the plugins'
finder), and a gateway given none refuses every payload. Query parameters carry what Polter wrote into the
hook's configuration: ``project`` (the pane's directory), ``runtime`` (its runtime dir) and ``reply``:

- ``reply=http`` (default): the body is the reply's stdout, as an HTTP hook expects; a veto that only an
  exit code can express is answered with status 403, which a hook with ``onFailure: block`` treats as a veto;
- ``reply=command``: the body is the reply for :mod:`polter.hook_client`: the exit code on the first line,
  the byte length of stdout on the second, then stdout and stderr (no JSON, so the client imports nothing).

Every failure on the way (no such adapter, an unreadable payload) is a veto.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from polter.protocol import HookAnswer, HookReply, HookRequest, StateReport

if TYPE_CHECKING:
    from polter.gateway.core import Gateway

__all__ = ["FindTranslator", "HookAdapters", "HookTranslator", "encode_command_reply", "payload_route"]

logger = logging.getLogger(__name__)


class HookTranslator(Protocol):
    """What the gateway needs of a CLI's adapter: its hooks' payloads in Polter's form, and its replies."""

    def hook_request(self, payload: Mapping[str, Any]) -> HookRequest: ...
    def hook_answer(self, answer: HookAnswer) -> HookReply: ...
    def state_report(self, payload: Mapping[str, Any]) -> StateReport | None: ...


FindTranslator = Callable[[str], HookTranslator]
"""The translator of the adapter named (raises when there is none, or it cannot be loaded)."""


class HookAdapters:
    """The adapters hook payloads are translated with, each found once by ``find`` (a failed find is retried)."""

    def __init__(self, find: FindTranslator | None = None) -> None:
        self._find = find
        self._loaded: dict[str, HookTranslator] = {}
        self._lock = asyncio.Lock()

    async def get(self, name: str) -> HookTranslator:
        adapter = self._loaded.get(name)
        if adapter is None:
            async with self._lock:
                adapter = self._loaded.get(name)
                if adapter is None:
                    if self._find is None:
                        raise LookupError("this gateway was started without the CLIs' adapters")
                    adapter = await asyncio.to_thread(self._find, name)
                    self._loaded[name] = adapter
        return adapter


def encode_command_reply(reply: HookReply) -> bytes:
    stdout, stderr = (
        text + ("\n" if text and not text.endswith("\n") else "") for text in (reply.stdout, reply.stderr)
    )
    out, err = stdout.encode(), stderr.encode()
    return f"{reply.exit_code}\n{len(out)}\n".encode() + out + err


def _veto(reason: str) -> HookReply:
    return HookReply(stderr=f"Polter: {reason}", exit_code=2)


def _respond(reply: HookReply, form: str) -> Response:
    if form == "command":
        return Response(encode_command_reply(reply), media_type="application/octet-stream")
    if reply.exit_code != 0 and not reply.stdout:
        return Response(reply.stderr, status_code=403, media_type="text/plain")
    return Response(reply.stdout or "{}", media_type="application/json")


async def answer_payload(gateway: Gateway, request: Request) -> Response:
    pane = request.scope["polter.pane"]
    name = request.path_params["adapter"]
    query = request.query_params
    form = query.get("reply", "http")
    try:
        adapter = await gateway.hook_adapters.get(name)
    except Exception as exc:  # noqa: BLE001 - an adapter that cannot load vetoes every call
        logger.warning("hook: the adapter %r cannot be loaded: %s", name, exc)
        return _respond(_veto(f"the {name!r} adapter cannot be loaded ({exc}), so the call is refused"), form)

    def reply(answer: HookAnswer) -> HookReply:
        try:
            return adapter.hook_answer(answer)
        except Exception as exc:  # noqa: BLE001
            return _veto(f"{answer.reason} (and the adapter failed to answer: {exc})")

    try:
        payload = json.loads(await request.body())
        if not isinstance(payload, dict):
            raise ValueError("not a JSON object")
        hook_request = adapter.hook_request(payload)
    except Exception as exc:  # noqa: BLE001 - an unreadable payload is a veto
        answer = HookAnswer(decision="deny", reason=f"the hook payload cannot be read ({exc}), so the call is refused")
        return _respond(reply(answer), form)
    hook_request = hook_request.model_copy(
        update={"project": query.get("project") or hook_request.project, "runtime_dir": query.get("runtime")}
    )
    return _respond(reply(await gateway.execution.hook(pane, name, hook_request)), form)


def payload_route(gateway: Gateway) -> Route:
    async def endpoint(request: Request) -> Response:
        return await answer_payload(gateway, request)

    return Route("/hook/{adapter}/payload", endpoint, methods=["POST"])
