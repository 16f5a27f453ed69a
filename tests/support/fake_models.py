"""Fake model APIs for driving the real AI CLIs offline: Anthropic Messages (Claude Code), OpenAI Responses
(Codex), OpenAI Chat Completions (Qwen Code) and Gemini ``streamGenerateContent`` (Gemini CLI), all served
by one server on 127.0.0.1.

The "model" is scripted: a :class:`Rule` says "when the human's latest message contains X, call the
offered tool whose name matches Y with these arguments". After a tool result it answers
``FINAL <result>``; otherwise ``Hello from fake model. tools=<the tools offered>``. Every request is
recorded with its headers and parsed body, so tests can check what the CLI offered the model.

It speaks just enough of each streaming format for the CLIs to accept it (checked against Claude Code
2.1.332, Codex 0.171.0 and Gemini CLI 0.61.0).
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal

__all__ = ["FakeModelServer", "ModelRequest", "Rule"]

Protocol = Literal["anthropic", "openai", "chat", "gemini"]


@dataclass
class Rule:
    """When the latest human message contains ``when`` (case-insensitive), call the first offered tool whose
    name (as the CLI names it, e.g. ``mcp__time__get_current_time``) fully matches the regex ``call``.

    A rule with ``after`` answers a tool result instead: when the latest message is a tool result containing
    ``after``, it makes the next call of the same turn (any other tool result gets the final answer)."""

    when: str
    call: str
    arguments: dict[str, Any] = field(default_factory=dict)
    before_reply: Callable[[], None] | None = None
    """Runs in the server before the tool call is sent (e.g. switch the pane's role mid-turn)."""
    times: int | None = None
    """How often the rule may fire (None: every time)."""
    fired: int = 0
    after: str | None = None
    """Answer a tool result containing this text, not a human message (``when`` is then not read)."""


@dataclass
class ModelRequest:
    """One request a CLI sent, parsed."""

    protocol: Protocol
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    tools: list[str]
    """The tool names offered, flattened the way the CLI's hooks name them."""
    prompt: str
    """The text of the latest human message ('' when the latest message is a tool result)."""
    tool_result: str | None
    """The latest tool result's text, when the latest message is one."""
    system: str
    """The system prompt (instructions) as text."""
    reply: str = ""
    """What the fake answered: text or ``call <tool> <args>``."""

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


def _text_of(value: Any) -> str:
    """Flatten the many shapes of 'content' into text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_text_of(item) for item in value)
    if isinstance(value, dict):
        for key in ("text", "output", "content", "result", "response"):
            if key in value:
                return _text_of(value[key])
        return json.dumps(value)
    return str(value)


# --- Parsing each protocol's request ---------------------------------------------------------------------


def _parse_anthropic(body: dict[str, Any]) -> tuple[list[str], str, str | None, str]:
    tools = [tool.get("name", "") for tool in body.get("tools") or []]
    system = _text_of(body.get("system"))
    # Claude Code interleaves role "system" messages (environment notes); the turn is the last other message.
    messages = [message for message in body.get("messages") or [] if message.get("role") != "system"]
    if not messages:
        return tools, "", None, system
    last = messages[-1]
    content = last.get("content")
    if last.get("role") == "user" and isinstance(content, list):
        results = [block for block in content if isinstance(block, dict) and block.get("type") == "tool_result"]
        if results:
            return tools, "", _text_of(results[-1].get("content")), system
        texts = [block.get("text", "") for block in content if isinstance(block, dict) and block.get("type") == "text"]
        # Claude Code adds <system-reminder> blocks; the human's words are the last plain text block.
        plain = [text for text in texts if not text.lstrip().startswith("<system-reminder>")]
        return tools, (plain or texts or [""])[-1], None, system
    return tools, _text_of(content), None, system


def _parse_openai(body: dict[str, Any]) -> tuple[list[str], str, str | None, str]:
    tools: list[str] = []
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            tools += [f"{tool.get('name')}__{inner.get('name')}" for inner in tool.get("tools") or []]
        elif tool.get("name"):
            tools.append(tool["name"])
    system = _text_of(body.get("instructions"))
    items = body.get("input") or []
    if isinstance(items, str):
        return tools, items, None, system
    for item in reversed(items):
        kind = item.get("type")
        if kind in ("function_call_output", "custom_tool_call_output"):
            return tools, "", _text_of(item.get("output")), system
        if kind == "message" and item.get("role") == "user":
            texts = [_text_of(part) for part in item.get("content") or []]
            plain = [text for text in texts if not text.lstrip().startswith("<")]
            return tools, (plain or texts or [""])[-1], None, system
        if kind == "message" and item.get("role") == "assistant":
            break
    return tools, "", None, system


def _parse_chat(body: dict[str, Any]) -> tuple[list[str], str, str | None, str]:
    """OpenAI Chat Completions (Qwen Code and other OpenAI-compatible clients)."""
    tools = [(tool.get("function") or {}).get("name", "") for tool in body.get("tools") or []]
    messages = body.get("messages") or []
    system = "\n".join(_text_of(m.get("content")) for m in messages if m.get("role") == "system")
    turns = [m for m in messages if m.get("role") != "system"]
    if not turns:
        return tools, "", None, system
    last = turns[-1]
    if last.get("role") == "tool":
        return tools, "", _text_of(last.get("content")), system
    content = last.get("content")
    texts = [_text_of(part) for part in content] if isinstance(content, list) else [_text_of(content)]
    plain = [text for text in texts if text and not text.lstrip().startswith("<")]
    return tools, (plain or texts or [""])[-1], None, system


def _parse_gemini(body: dict[str, Any]) -> tuple[list[str], str, str | None, str]:
    tools = [
        declaration.get("name", "")
        for tool in body.get("tools") or []
        for declaration in tool.get("functionDeclarations") or tool.get("function_declarations") or []
    ]
    system = _text_of((body.get("systemInstruction") or {}).get("parts"))
    contents = body.get("contents") or []
    if not contents:
        return tools, "", None, system
    parts = contents[-1].get("parts") or []
    responses = [part["functionResponse"] for part in parts if "functionResponse" in part]
    if responses:
        return tools, "", _text_of(responses[-1].get("response")), system
    texts = [part["text"] for part in parts if part.get("text")]
    # Gemini CLI sends a <session_context> part first; the human's words are the last plain part.
    plain = [text for text in texts if not text.lstrip().startswith("<")]
    return tools, (plain or texts or [""])[-1], None, system


# --- Writing each protocol's streamed answer -------------------------------------------------------------


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    chunks = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        chunks.append(f"{head}data: {json.dumps(data)}\n\n")
    return "".join(chunks).encode()


def _anthropic_stream(model: str, text: str | None, call: tuple[str, dict[str, Any]] | None, ids: Iterator[int]) -> bytes:
    number = next(ids)
    usage = {"input_tokens": 12, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {
            "id": f"msg_fake{number}", "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": usage}}),
    ]
    if call is None:
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text or ""}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        stop = "end_turn"
    else:
        name, arguments = call
        events += [
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": f"toolu_fake{number}", "name": name, "input": {}}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(arguments)}}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ]
        stop = "tool_use"
    events += [
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 8}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return _sse(events)


def _anthropic_message(model: str, text: str | None, call: tuple[str, dict[str, Any]] | None, ids: Iterator[int]) -> dict[str, Any]:
    number = next(ids)
    if call is None:
        content: list[dict[str, Any]] = [{"type": "text", "text": text or ""}]
    else:
        content = [{"type": "tool_use", "id": f"toolu_fake{number}", "name": call[0], "input": call[1]}]
    return {"id": f"msg_fake{number}", "type": "message", "role": "assistant", "model": model, "content": content,
            "stop_reason": "tool_use" if call else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 8}}


def _openai_stream(model: str, text: str | None, call: tuple[str, dict[str, Any]] | None, ids: Iterator[int]) -> bytes:
    number = next(ids)
    response = {"id": f"resp_fake{number}", "object": "response", "created_at": int(time.time()), "model": model,
                "status": "in_progress", "output": []}
    if call is None:
        item: dict[str, Any] = {"type": "message", "id": f"msg_fake{number}", "role": "assistant", "status": "completed",
                                "content": [{"type": "output_text", "text": text or "", "annotations": []}]}
    else:
        name, arguments = call
        namespace, sep, function = name.rpartition("__")
        if set(arguments) == {"input"} and isinstance(arguments["input"], str) and not sep:
            # a freeform (custom) tool such as Codex's apply_patch takes raw text, not JSON arguments
            item = {"type": "custom_tool_call", "id": f"ctc_fake{number}", "call_id": f"call_fake{number}",
                    "name": name, "input": arguments["input"], "status": "completed"}
        else:
            item = {"type": "function_call", "id": f"fc_fake{number}", "call_id": f"call_fake{number}",
                    "name": function if sep else name, "arguments": json.dumps(arguments), "status": "completed"}
        if sep:
            item["namespace"] = namespace
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": response}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": {
            **item, "status": "in_progress", **({"content": []} if call is None else {})}}),
    ]
    if call is None:
        events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"],
                                                       "output_index": 0, "content_index": 0, "delta": text or ""}))
    events += [
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "response": {
            **response, "status": "completed", "output": [item],
            "usage": {"input_tokens": 12, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 8,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 20}}}),
    ]
    return _sse(events)


def _chat_stream(model: str, text: str | None, call: tuple[str, dict[str, Any]] | None, ids: Iterator[int]) -> bytes:
    number = next(ids)
    base = {"id": f"chatcmpl-fake{number}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
    if call is None:
        delta: dict[str, Any] = {"role": "assistant", "content": text or ""}
        finish = "stop"
    else:
        delta = {"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": f"call_fake{number}", "type": "function",
            "function": {"name": call[0], "arguments": json.dumps(call[1])}}]}
        finish = "tool_calls"
    chunks = [
        {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
         "usage": {"prompt_tokens": 12, "completion_tokens": 8, "total_tokens": 20}},
    ]
    return _sse([(None, chunk) for chunk in chunks]) + b"data: [DONE]\n\n"


def _gemini_chunk(text: str | None, call: tuple[str, dict[str, Any]] | None) -> dict[str, Any]:
    part: dict[str, Any] = {"text": text or ""} if call is None else {"functionCall": {"name": call[0], "args": call[1]}}
    return {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 8, "totalTokenCount": 20},
            "modelVersion": "fake"}


# --- The server ----------------------------------------------------------------------------------------------


class FakeModelServer:
    """One HTTP server on 127.0.0.1 speaking all three model APIs; use as a context manager."""

    def __init__(self, rules: list[Rule] | None = None, *, log_path: Path | None = None, name: str = "fake model") -> None:
        self.rules = list(rules or [])
        self.name = name
        self.requests: list[ModelRequest] = []
        self.log_path = log_path
        self._ids = itertools.count(1)
        self._changed = threading.Condition()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "start the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeModelServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> None:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                pass

            def do_GET(self) -> None:  # model lists and health probes
                if "/models" in self.path:
                    self._send(200, "application/json", json.dumps({"data": [], "models": [], "object": "list"}).encode())
                else:
                    self._send(404, "application/json", b'{"error": "not found"}')

            def do_HEAD(self) -> None:
                self._send(200, "text/plain", b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {}
                status, content_type, payload = fake._answer(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                self._send(status, content_type, payload)

            def _send(self, status: int, content_type: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # -- what the tests use --------------------------------------------------------------------------------

    def wait_for(self, predicate: Callable[[ModelRequest], bool], timeout: float = 60.0, *, start: int = 0) -> ModelRequest:
        """The first request (from index ``start``) matching ``predicate``, waiting up to ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for request in self.requests[start:]:
                    if predicate(request):
                        return request
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    seen = [(r.protocol, r.prompt[:60], r.tool_result and r.tool_result[:60], r.reply[:60]) for r in self.requests]
                    raise TimeoutError(f"no matching model request within {timeout}s; saw {seen}")
                self._changed.wait(remaining)

    def conversation_requests(self) -> list[ModelRequest]:
        """The requests that offered tools (the agent's turns, not titles or quota probes)."""
        return [request for request in self.requests if request.tools]

    # -- answering ----------------------------------------------------------------------------------------

    def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> tuple[int, str, bytes]:
        if path.startswith("/v1/messages/count_tokens"):
            return 200, "application/json", b'{"input_tokens": 12}'
        if ":countTokens" in path:
            return 200, "application/json", b'{"totalTokens": 12}'
        if path.startswith("/v1/messages"):
            protocol: Protocol = "anthropic"
            parsed = _parse_anthropic(body)
        elif path.rstrip("/").endswith("/responses"):
            protocol = "openai"
            parsed = _parse_openai(body)
        elif path.rstrip("/").endswith("/chat/completions"):
            protocol = "chat"
            parsed = _parse_chat(body)
        elif ":generateContent" in path or ":streamGenerateContent" in path:
            protocol = "gemini"
            parsed = _parse_gemini(body)
        else:
            return 404, "application/json", json.dumps({"error": f"unknown path {path}"}).encode()
        tools, prompt, tool_result, system = parsed
        request = ModelRequest(protocol, path, headers, body, tools, prompt, tool_result, system)
        text, call = self._decide(request)
        request.reply = f"call {call[0]} {json.dumps(call[1])}" if call else text or ""
        model = str(body.get("model") or "fake")
        if protocol == "anthropic":
            if body.get("stream"):
                payload = ("text/event-stream", _anthropic_stream(model, text, call, self._ids))
            else:
                payload = ("application/json", json.dumps(_anthropic_message(model, text, call, self._ids)).encode())
        elif protocol == "openai":
            payload = ("text/event-stream", _openai_stream(model, text, call, self._ids))
        elif protocol == "chat":
            payload = ("text/event-stream", _chat_stream(model, text, call, self._ids))
        elif ":streamGenerateContent" in path:
            payload = ("text/event-stream", _sse([(None, _gemini_chunk(text, call))]))
        else:
            payload = ("application/json", json.dumps(_gemini_chunk(text, call)).encode())
        self._record(request)
        return 200, *payload

    def _decide(self, request: ModelRequest) -> tuple[str | None, tuple[str, dict[str, Any]] | None]:
        result, prompt = request.tool_result, request.prompt.lower()
        for rule in self.rules:
            if result is not None:
                if rule.after is None or rule.after not in result:
                    continue
            elif rule.after is not None or rule.when.lower() not in prompt:
                continue
            if rule.times is not None and rule.fired >= rule.times:
                continue
            tool = next((name for name in request.tools if re.fullmatch(rule.call, name)), None)
            if tool is None:
                continue
            rule.fired += 1
            if rule.before_reply is not None:
                rule.before_reply()
            return None, (tool, rule.arguments)
        if result is not None:
            return f"FINAL {result}", None
        return f"Hello from fake model. tools={','.join(request.tools)}", None

    def _record(self, request: ModelRequest) -> None:
        with self._changed:
            self.requests.append(request)
            self._changed.notify_all()
        if self.log_path is not None:
            with self.log_path.open("a", encoding="utf-8") as log:
                log.write(json.dumps({"protocol": request.protocol, "path": request.path, "headers": request.headers,
                                      "tools": request.tools, "prompt": request.prompt,
                                      "tool_result": request.tool_result, "reply": request.reply,
                                      "body": request.body}) + "\n")
