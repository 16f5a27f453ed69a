"""A small real MCP server (stdio, the SDK's MCPServer) with the shapes the gateway tests need.

Tools with each kind of annotation, a slow tool (to kill the server mid-call), a tool that adds a
tool at runtime and sends ``list_changed``, one prompt and one resource. ``FIXTURE_TOOLS=N`` adds N
generated read-only tools (listing benchmarks); ``FIXTURE_NAME`` sets the server's name.

Run: ``python tests/support/fixture_server.py``.
"""

from __future__ import annotations

import asyncio
import os

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)
DESTROYS = ToolAnnotations(read_only_hint=False, destructive_hint=True)

server = MCPServer(os.environ.get("FIXTURE_NAME", "fixture"), instructions="Fixture server for Polter's tests.")
notes: list[str] = []


@server.tool(annotations=READ_ONLY, description="Read every note.")
def read_notes() -> str:
    return "\n".join(notes) or "(no notes)"


@server.tool(annotations=WRITES, description="Append a note.")
def write_note(text: str) -> str:
    notes.append(text)
    return f"noted: {text}"


@server.tool(annotations=DESTROYS, description="Delete every note.")
def delete_all() -> str:
    notes.clear()
    return "deleted"


@server.tool(annotations=READ_ONLY, description="The server's process id.")
def pid() -> int:
    return os.getpid()


@server.tool(annotations=READ_ONLY, description="Report STEPS progress steps (if asked for progress), wait, then answer.")
async def slow(seconds: float, ctx: Context, steps: int = 0) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        notes.append(f"slow {seconds} cancelled")  # what the tests read to see a cancellation arrive
        raise
    return f"slept {seconds}"


@server.tool(annotations=WRITES, description="Add a tool named NAME at runtime and announce it.")
async def add_tool(name: str, ctx: Context) -> str:
    def added() -> str:
        return f"I am {name}"

    server.add_tool(added, name=name, description="Added at runtime.", annotations=READ_ONLY)
    await ctx.session.send_tool_list_changed()
    return f"added {name}"


@server.prompt(description="Say hello.")
def greet(who: str) -> str:
    return f"Hello, {who}!"


@server.resource("note://first", description="The first note.")
def first_note() -> str:
    return notes[0] if notes else "(none)"


def _generated(index: int):  # type: ignore[no-untyped-def]
    def tool(value: str = "") -> str:
        return f"tool {index}: {value}"

    return tool


for _index in range(int(os.environ.get("FIXTURE_TOOLS", "0"))):
    server.add_tool(_generated(_index), name=f"generated_{_index:04d}",
                    description=f"Generated tool number {_index} for listing benchmarks.", annotations=READ_ONLY)


if __name__ == "__main__":
    server.run()
