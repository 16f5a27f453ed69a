"""``polter send PANE MESSAGE``: hand panes a message, as the human or as a pane's agent.

From the human's own shell (outside every pane) the words are the human's: typed into each pane of the session
and submitted, as if the human typed them there, so they count for keyword gates and phases (the palette's
"Send to panes…" does the same). From inside a pane (its token in the environment) the pane's agent sends them:
the ``send`` tool of the ``polter`` floor server, decided by the pane's role (docs/team.md), never the human's.
"""

from __future__ import annotations

import argparse
import asyncio
import os

from polter.errors import ConfigError


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    send = subparsers.add_parser(
        "send",
        help="type a message into panes: the human's words, or (inside a pane) its agent's",
        description="Outside Polter's panes: type MESSAGE and Enter into each PANE of the session, as the human. "
        "Inside a pane: send it as this pane's agent (the floor server's send tool; its role decides).",
    )
    send.add_argument("panes", metavar="PANE", help="the pane numbers, comma-separated (2, or 1,3)")
    send.add_argument("message", metavar="MESSAGE")
    send.add_argument("--session", help="the session (default: the only one, or the detached one started last)")
    send.set_defaults(handler=_send)


def _numbers(text: str) -> list[int]:
    try:
        numbers = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ConfigError(f"PANE is a pane number or numbers separated by commas (2, or 1,3), not {text!r}") from None
    if not numbers or any(number < 1 for number in numbers):
        raise ConfigError(f"PANE is a pane number from 1, not {text!r}")
    return numbers


def _send(args: argparse.Namespace) -> int:
    from polter.paths import ENV_TOKEN

    numbers = _numbers(args.panes)
    if os.environ.get(ENV_TOKEN):
        return asyncio.run(_as_agent(numbers, args.message))
    return _as_human(numbers, args.message, args.session)


async def _as_agent(numbers: list[int], message: str) -> int:
    from polter.gateway.client import pane_client

    failed = 0
    async with pane_client("polter") as client:
        for number in numbers:
            result = await client.call_tool("send", {"pane": number, "message": message})
            text = "\n".join(getattr(part, "text", "") for part in result.content)
            print(text)
            failed += bool(result.is_error)
    return 1 if failed else 0


def _as_human(numbers: list[int], message: str, session: str | None) -> int:
    from polter.cli._admin import refuse_inside_pane
    from polter.cli.sessions import choose, print_notes, survey
    from polter.wire.client import SessionClient
    from polter.wire.methods import SendParams
    from polter.wire.registry import session_files

    refuse_inside_pane("Typing into panes as the human (`polter send` outside a pane)")
    live, notes = asyncio.run(survey())
    print_notes(notes)
    files = session_files(choose(live, session).name)

    async def send() -> list[str]:
        client = await SessionClient.connect(files, attach=False)
        try:
            return await client.call(SendParams(panes=[str(number) for number in numbers], text=message))
        finally:
            await client.aclose()

    typed = asyncio.run(send())
    print(f"typed into {len(typed)} of {len(numbers)} pane(s) of session {files.name}")
    return 0 if len(typed) == len(numbers) else 1
