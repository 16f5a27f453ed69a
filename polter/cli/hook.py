"""``polter hook ADAPTER``: the veto hook an AI CLI runs before a tool call.

It reads the CLI's hook payload on stdin, lets the adapter translate it into a
:class:`~polter.protocol.HookRequest`, asks the gateway (``POST $POLTER_GATEWAY_URL/hook/<adapter>`` with
``$POLTER_TOKEN``) and prints the verdict in the CLI's own format. It fails closed: when the payload
cannot be read, the adapter breaks, the gateway cannot be reached or answers garbage, the call is denied.

It runs on every tool call, so it starts fast: stdlib HTTP (no httpx), only the one adapter it needs,
and adapters' configs run it as ``python -m polter.cli.hook`` so the rest of the CLI is not imported
(``benchmarks/hook.py`` measures it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import TYPE_CHECKING, TextIO

from polter.paths import ENV_GATEWAY_URL, ENV_TOKEN

if TYPE_CHECKING:
    from polter.adapters import Adapter, HookReply
    from polter.protocol import HookAnswer, HookRequest

__all__ = ["ask_gateway", "decide", "main", "register"]

REQUEST_TIMEOUT_SECONDS = 590.0
"""A little under the CLIs' hook timeout (600 s): the gateway holds an ask open until a human answers."""


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "hook",
        help="the veto hook an AI CLI runs before a tool call (reads its payload on stdin)",
        description="Ask the Polter gateway whether the tool call described on stdin may run, and answer in "
        "the CLI's hook format. Denies when the gateway cannot be reached.",
    )
    parser.add_argument("adapter", help="the adapter whose hook format stdin and stdout use, e.g. claude-code")
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:
    return main([args.adapter])


def _fallback_deny(reason: str) -> HookReply:
    """A veto every supported CLI understands (exit code 2, reason on stderr), when the adapter cannot answer."""
    from polter.adapters import HookReply

    return HookReply(stderr=f"Polter: {reason}", exit_code=2)


def ask_gateway(gateway_url: str, adapter_name: str, request: HookRequest, token: str) -> HookAnswer:
    """POST the request to the gateway's hook endpoint; raise GatewayUnavailable when there is no usable answer."""
    from polter.errors import GatewayUnavailable
    from polter.protocol import HookAnswer

    http_request = urllib.request.Request(
        f"{gateway_url.rstrip('/')}/hook/{adapter_name}",
        data=request.model_dump_json().encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(http_request, timeout=REQUEST_TIMEOUT_SECONDS) as response:  # noqa: S310 - loopback URL from Polter
            body = response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:300].decode(errors="replace").strip()
        raise GatewayUnavailable(f"the gateway answered HTTP {exc.code}{': ' + detail if detail else ''}") from exc
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise GatewayUnavailable(f"the gateway at {gateway_url} cannot be reached ({reason})") from exc
    try:
        return HookAnswer.model_validate_json(body)
    except ValueError as exc:
        raise GatewayUnavailable(f"the gateway's answer is not a hook answer: {body[:200]!r}") from exc


def decide(adapter_name: str, raw_payload: str, env: Mapping[str, str]) -> HookReply:
    """The whole hook: payload in, the CLI's answer out; every failure on the way is a deny."""
    from polter.errors import GatewayUnavailable
    from polter.protocol import HookAnswer

    try:
        from polter.adapters import find_adapter

        adapter: Adapter = find_adapter(adapter_name)
    except Exception as exc:  # noqa: BLE001 - any failure to load is a deny
        return _fallback_deny(f"the {adapter_name!r} adapter cannot be loaded ({exc}), so the call is refused")

    def answer(verdict: HookAnswer) -> HookReply:
        try:
            return adapter.hook_answer(verdict)
        except Exception as exc:  # noqa: BLE001
            return _fallback_deny(f"{verdict.reason} (and the adapter failed to answer: {exc})")

    def deny(reason: str) -> HookReply:
        return answer(HookAnswer(decision="deny", reason=reason))

    try:
        payload = json.loads(raw_payload)
        if not isinstance(payload, dict):
            raise ValueError("not a JSON object")
        request = adapter.hook_request(payload)
    except Exception as exc:  # noqa: BLE001
        return deny(f"the hook payload cannot be read ({exc}), so the call is refused")
    if request.kind == "other":
        return answer(HookAnswer(decision="allow", reason="not a gateway tool or a skill; Polter has no say"))
    gateway_url, token = env.get(ENV_GATEWAY_URL), env.get(ENV_TOKEN)
    if not gateway_url or not token:
        missing = " and ".join(
            name for name, value in ((ENV_GATEWAY_URL, gateway_url), (ENV_TOKEN, token)) if not value
        )
        return deny(f"{missing} not set (this CLI was not started by Polter), so the call is refused")
    try:
        verdict = ask_gateway(gateway_url, adapter_name, request, token)
    except GatewayUnavailable as exc:
        return deny(f"{exc}; the call is refused")
    return answer(verdict)


def main(
    argv: list[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    parser = argparse.ArgumentParser(prog="polter hook")
    parser.add_argument("adapter")
    args = parser.parse_args(argv)
    reply = decide(args.adapter, (stdin or sys.stdin).read(), os.environ)
    if reply.stdout:
        (stdout or sys.stdout).write(reply.stdout + ("" if reply.stdout.endswith("\n") else "\n"))
    if reply.stderr:
        (stderr or sys.stderr).write(reply.stderr + ("" if reply.stderr.endswith("\n") else "\n"))
    return reply.exit_code


if __name__ == "__main__":
    sys.exit(main())
