"""The demo's scripted agent: a stand-in for an AI CLI that needs no model and no API key.

It reads what the human types, turns a few phrases into Terraria tool calls, and makes them through
Polter's gateway with this pane's token (``$POLTER_TOKEN``), exactly as a real CLI's MCP client
would: the pane's role decides every call. Like an over-eager model, it follows "make it rain" with
an uninvited hardmode, which is what keyword gates are for. ``work N`` is a turn of work with no call (it
draws for N seconds, as a CLI does while its model answers), and a message another pane's agent sent
(``[from pane N · role] ...``, docs/team.md) is read like a line of the human's, its sender named. Like a CLI with
state hooks, it tells Polter when a turn begins and ends (:func:`report`), so an agent that waits on it hears the
turn's end from it, not from a guess at its screen. Run inside a pane: ``python -m polter.demo.agent``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from polter.hook_client import STATE_TIMEOUT_SECONDS, post
from polter.paths import ENV_GATEWAY_URL, ENV_TOKEN

__all__ = ["NO_REPORTS", "REPORTS_AS", "Step", "main", "plan", "report", "wrapped"]

BOLD, DIM, RED, GREEN, YELLOW, CYAN, RESET = (
    "\x1b[1m",
    "\x1b[2m",
    "\x1b[31m",
    "\x1b[32m",
    "\x1b[33m",
    "\x1b[36m",
    "\x1b[0m",
)

BANNER = f"""{BOLD}Polter demo agent{RESET} {DIM}(scripted; no AI model){RESET}
It turns what you type into Terraria tool calls through Polter's gateway,
with this pane's token: this pane's role decides each call.

  {CYAN}make it rain{RESET}      rain, then an uninvited hardmode (watch the gate)
  {CYAN}turn on hardmode{RESET}  you said the word: Polter asks you first
  {{more}}
""".replace(
    "{more}",
    " · ".join(
        f"{CYAN}{word}{RESET}"
        for word in ("who is online", "status", "time noon", "kick NAME", "say TEXT", "tools", "work 3")
    ),
)


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def _cells(text: str) -> int:
    # lazy: the scripted agent's start in its pane
    from rich.cells import cell_len

    return cell_len(_COLOUR.sub("", text))


def wrapped(text: str, rest: str = "", width: int | None = None) -> str:
    """``text`` broken at spaces to fit the pane, continued after ``rest``: a CLI wraps its words,
    a terminal would cut them anywhere. Runs of spaces (aligned columns) are kept."""
    width = width or shutil.get_terminal_size().columns
    lines, line = [], ""
    for index, part in enumerate(re.split(r"( +)", text)):
        if index % 2:  # the spaces before the next word
            gap = part
            continue
        if index and _cells(line) + len(gap) + _cells(part) > width and line.strip():
            lines.append(line)
            line = rest + part
        else:
            line += (gap if index else "") + part
    return "\n".join([*lines, line])


_said = [""]
"""The last line the agent said (its turn's last words, for the report that ends it)."""


def say(text: str, rest: str = "") -> None:
    print(wrapped(text, rest), flush=True)
    _said[0] = _COLOUR.sub("", text)


REPORTS_AS = "shell"
"""The adapter whose state route takes the agent's reports: the shell's reads Claude Code's hook payloads (the pane
is the one whose token comes with a report, whatever adapter it runs under)."""
NO_REPORTS = "POLTER_DEMO_NO_REPORTS"
"""Set (to anything) in the agent's environment, it reports nothing: a program with no hooks, read from its screen
alone (the tests and benchmark of that fallback)."""


def report(event: str, **fields: str) -> None:
    """Tell Polter's gateway what this agent does, as a CLI's state hook does (``UserPromptSubmit``: a turn began;
    ``Stop``: it ended, with its last words), with the pane's token. Outside a pane, or when the gateway does not
    answer, nothing is said and the agent carries on (its screen is read instead)."""
    url, token = os.environ.get(ENV_GATEWAY_URL), os.environ.get(ENV_TOKEN)
    if not url or not token or os.environ.get(NO_REPORTS):
        return
    body = json.dumps({"hook_event_name": event, **fields}).encode()
    with contextlib.suppress(OSError, ValueError):
        post(url, f"/hook/{REPORTS_AS}/state", token, body, timeout=STATE_TIMEOUT_SECONDS)


@dataclass(frozen=True)
class Step:
    """One tool call the agent makes, and what it says before it."""

    server: str
    tool: str
    arguments: dict[str, Any]
    says: str


def _hardmode(enabled: bool, says: str) -> Step:
    return Step("terraria", "world_hardmode", {"enabled": enabled}, says)


RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], list[Step]]]] = [
    (
        re.compile(r"\b(hard ?mode)\b|困难模式|肉后", re.I),
        lambda m: [
            _hardmode(not re.search(r"\b(off|disable|stop)\b|关闭", m.string, re.I), "Switching hardmode as you asked.")
        ],
    ),
    (
        re.compile(r"\brain\b|下雨", re.I),
        lambda m: [
            Step("terraria", "world_rain", {"enabled": True}, "Making it rain."),
            _hardmode(True, "While I'm at it: hardmode would make the world more exciting."),
        ],
    ),
    (
        re.compile(r"\b(online|players|who)\b|在线", re.I),
        lambda m: [Step("terraria", "player_list", {}, "Looking who is online.")],
    ),
    (
        re.compile(r"\bstatus\b|状态", re.I),
        lambda m: [Step("terraria", "server_status", {}, "Reading the server status.")],
    ),
    (
        re.compile(r"\btime\s+(\S+)", re.I),
        lambda m: [Step("terraria", "world_time_set", {"time": m.group(1)}, f"Setting the time to {m.group(1)}.")],
    ),
    (
        re.compile(r"\bkick\s+(\S+)", re.I),
        lambda m: [
            Step(
                "terraria",
                "player_kick",
                {"player": m.group(1), "reason": "asked by the admin"},
                f"Kicking {m.group(1)}.",
            )
        ],
    ),
    (
        re.compile(r"\b(?:say|broadcast)\s+(.+)", re.I),
        lambda m: [Step("terraria", "server_broadcast", {"message": m.group(1)}, "Broadcasting.")],
    ),
    (
        re.compile(r"\b(tools|whoami)\b", re.I),
        lambda m: [Step("polter", "whoami", {}, "Asking Polter what I may use.")],
    ),
]


def plan(line: str) -> list[Step]:
    """The calls a line leads to (the first rule that matches decides)."""
    for pattern, steps in RULES:
        match = pattern.search(line)
        if match:
            return steps(match)
    return []


MAX_WORK_SECONDS = 600.0
WORK_STEP = 0.2
"""Seconds between two lines a turn of work draws (its screen shows work, as a CLI's spinner does)."""
_WORK = re.compile(r"\bwork\s+(\d+(?:\.\d+)?)\b", re.I)
_FROM = re.compile(r"^\[from (pane \d+ · [^\]]+)\]\s*")


def sender(line: str) -> tuple[str | None, str]:
    """Who sent the line (``pane N · role`` of another pane's agent, or None: the human) and its words."""
    found = _FROM.match(line)
    return (found.group(1), line[found.end() :]) if found else (None, line)


def work(seconds: float) -> None:
    """A turn of work with no tool call: a line every :data:`WORK_STEP` seconds, then what was done."""
    seconds = min(seconds, MAX_WORK_SECONDS)
    say(f"{DIM}Working for {seconds:g} s.{RESET}")
    steps = max(1, round(seconds / WORK_STEP))
    for step in range(1, steps + 1):
        time.sleep(seconds / steps)
        print(f"  {DIM}· {step}/{steps}{RESET}", flush=True)
    say(f"{GREEN}Worked {seconds:g} s: done.{RESET}")


MAX_SHOWN = 240
"""Characters of a structured result the agent prints (it reads the rest, as a model would)."""


def _summary(result: Any) -> tuple[bool, str]:
    data = result.structured_content
    if not result.is_error and isinstance(data, dict):
        players = data.get("players")
        if isinstance(players, list) and "count" in data:
            names = ", ".join(str(player.get("nickname", "?")) for player in players if isinstance(player, dict))
            return True, f"{data['count']} online: {names}" if players else "nobody is online"
        text = json.dumps(data, ensure_ascii=False, separators=(", ", ": "))
        return True, text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"
    texts = [getattr(block, "text", "") for block in result.content]
    return not result.is_error, " ".join(part for part in texts if part).strip()


def _whoami_summary(data: dict[str, Any]) -> str:
    lines = [f"role {data['role']}" + (f", phase {data['phase']}" if data.get("phase") else "")]
    for server in data["servers"]:
        allowed = [tool["name"] for tool in server["tools"] if tool["decision"] == "allow"]
        asked = [tool["name"] for tool in server["tools"] if tool["decision"] == "ask"]
        lines.append(
            f"{server['name']}: {len(allowed)} allowed, {len(asked)} asked, "
            f"{len(server['tools']) - len(allowed) - len(asked)} refused"
        )
    return "; ".join(lines)


async def run(step: Step) -> None:
    # lazy: the scripted agent's start in its pane
    from polter.gateway.client import pane_client

    say(f"{DIM}{step.says}{RESET}")
    say(f"  {DIM}→ {step.server}/{step.tool} {json.dumps(step.arguments, ensure_ascii=False)}{RESET}", "    ")
    async with pane_client(step.server) as client:
        result = await client.call_tool(step.tool, step.arguments)
    ok, text = _summary(result)
    if ok and step.tool == "whoami" and result.structured_content:
        text = _whoami_summary(result.structured_content)
    colour, mark = (GREEN, "✓") if ok else (RED, "✗")
    say(f"  {colour}{mark} {text}{RESET}", "    ")


def main() -> int:
    for line in BANNER.splitlines():
        indent = len(line) - len(line.lstrip())
        say(line, " " * (indent + 2) if indent else "")  # a listed phrase continues under its text
    ended = False
    while True:
        print(f"{BOLD}{YELLOW}you>{RESET} ", end="", flush=True)
        if ended:  # over once the prompt is up: a line typed after the report lands after it (the echo too)
            report("Stop", last_assistant_message=_said[0])
            ended = False
        try:
            line = input().strip()
        except (EOFError, KeyboardInterrupt):
            print()
            return 0
        if not line:
            continue
        report("UserPromptSubmit", prompt=line)
        turn(line)
        ended = True


def turn(line: str) -> None:
    """One turn: what a line (the human's, or another pane's agent's) asks for."""
    who, line = sender(line)
    if who is not None:
        say(f"{DIM}A message from {who}'s agent (not your words: your gates stay shut).{RESET}")
    working = _WORK.search(line)
    if working:
        work(float(working.group(1)))
        return
    steps = plan(line)
    if not steps:
        say(
            f"{DIM}I only know a few phrases in this demo: rain, hardmode, who is online, status, "
            f"time noon, kick NAME, say TEXT, tools, work N.{RESET}"
        )
    for step in steps:
        try:
            asyncio.run(run(step))
        except Exception as exc:  # noqa: BLE001 - a demo keeps going and says what broke
            say(f"  {RED}✗ {type(exc).__name__}: {exc}{RESET}", "    ")


if __name__ == "__main__":
    sys.exit(main())
