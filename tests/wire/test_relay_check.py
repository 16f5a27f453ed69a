"""The relay's own reading of a window's lines (standard library only, polter/wire/relay.py) held to the
session protocol's models: every line it lets through, the models accept; every field of the models, it knows."""

from __future__ import annotations

import itertools
import json
from typing import Any, get_args

import pytest
from pydantic import ValidationError

from polter import __version__
from polter.wire import messages as wire
from polter.wire.relay import WINDOW_MESSAGES, greeting_line, hello_problem, window_line_problem

MODELS = {model.model_fields["type"].default: model for model in get_args(get_args(wire.ClientMessage)[0])}
SAMPLES: list[Any] = [
    wire.Hello(),
    wire.Hello(attach=False),
    wire.KeyInput(pane="p1", key="a", character="a"),
    wire.KeyInput(pane="p1", key="enter"),
    wire.PasteInput(pane="p1", text="ünïcode ✓ \x00"),
    wire.BytesInput(pane="p2", data="\x1b[<0;1;1M"),
    wire.FocusInput(pane="p1", focused=True),
    wire.ResizeInput(pane="p1", columns=80, lines=24),
    wire.Call(id=7, method="answer", params={"ask": "a1", "answer": {"allow": True, "nested": [1, None, "x"]}}),
]
VALUES: list[Any] = [None, True, False, 0, -1, 1, 2**70, 1.0, 1.5, "", "1", "text", [], [1], {}, {"a": 1}]


def accepted_by_the_models(line: bytes) -> bool:
    try:
        wire.decode_client(line)
    except ValidationError:
        return False
    return True


def mutations() -> list[bytes]:
    """Each sample with each field set to each value, dropped, or joined by an unknown one; and lines that are not
    a message at all."""
    lines: list[bytes] = []
    for sample in SAMPLES:
        message = json.loads(sample.model_dump_json())
        for name, value in itertools.product([*message, "sudo"], VALUES):
            lines.append(json.dumps({**message, name: value}).encode())
        for name in message:
            lines.append(json.dumps({key: item for key, item in message.items() if key != name}).encode())
        lines.append(json.dumps(message).replace('"p1"', '"\\ud800"').encode())
    lines += [b"", b"rm -rf /", b"[]", b"null", b'"hello"', b'{"type": "welcome"}', b'{"type": 1}', b"{}"]
    lines += [b'{"type": "resize", "pane": "p", "columns": NaN, "lines": 1}', b'{"type": "hello"} {"x": 1}']
    lines += [b'{"type": "call", "id": 1, "method": "m", "params": ' + b"[" * 5000 + b"]" * 5000 + b"}"]
    lines += [b'{"type": "call", "id": 1, "method": "m", "params": {"\\udc00": 1}}']
    lines += [b'{"type": "key", "pane": "p", "key": "a", "key": 1}', b'{"type": "hello", "type": "key"}']
    return lines


def test_the_relay_knows_every_message_and_field_of_a_window() -> None:
    assert set(WINDOW_MESSAGES) == set(MODELS)
    for kind, model in MODELS.items():
        fields = {name: info for name, info in model.model_fields.items() if name != "type"}
        assert set(WINDOW_MESSAGES[kind]) == set(fields), kind
        for name, info in fields.items():
            assert WINDOW_MESSAGES[kind][name].required == info.is_required(), (kind, name)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda sample: sample.type)
def test_a_window_s_own_messages_pass(sample: Any) -> None:
    assert window_line_problem(sample.model_dump_json().encode()) is None
    assert window_line_problem(wire.encode(sample)) is None


def test_what_the_relay_lets_through_the_models_accept() -> None:
    stricter = []
    for line in mutations():
        problem = window_line_problem(line)
        if problem is None:
            assert accepted_by_the_models(line), line
        elif accepted_by_the_models(line):
            stricter.append((line, problem))
    # Only numbers and flags written as what the models coerce (1.0, "1", true for a number; 0, 1 for a flag), which
    # no window writes.
    coerced = ("must be an integer", "must be an integer of at least 1", "must be true or false")
    assert stricter and all(problem.endswith(coerced) for _, problem in stricter), stricter


def test_the_greeting_is_the_protocol_s_and_names_this_polter() -> None:
    greeting = wire.RelayGreeting.model_validate_json(greeting_line())
    assert (greeting.version, greeting.protocol) == (__version__, wire.PROTOCOL_VERSION)
    assert greeting.clone is not None and greeting.commit is not None  # a clone: the tests run in one


def test_only_this_polter_s_hello_opens_the_relay() -> None:
    assert hello_problem(wire.encode(wire.Hello())) is None
    assert "the window is Polter 0.0.1" in (hello_problem(wire.encode(wire.Hello(version="0.0.1"))) or "")
    assert hello_problem(wire.encode(wire.KeyInput(pane="p", key="a"))) == "a window must say hello first"
    assert "did not say hello" in (hello_problem(b"") or "")
