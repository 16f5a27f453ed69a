"""A real MCP server over streamable HTTP (the SDK's MCPServer) whose streams drop, for the gateway's tests.

It keeps every event it sends (an in-memory event store) and tells clients to come back after 100 ms, so a
client that loses a response stream resumes it with ``Last-Event-ID``. Tools:

- ``resume``: closes the call's response stream, waits, then answers (the answer arrives on the resumed stream);
- ``lose``: closes the call's response stream and never answers (an upstream that lost the result);
- ``hang``: never answers (its stream stays open);
- ``calls``: how many times each tool started and how many were cancelled (``notifications/cancelled``).

Run: ``python tests/support/streams_server.py PORT``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from collections import Counter

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp.types import JSONRPCMessage

started: Counter[str] = Counter()
cancelled: Counter[str] = Counter()


class MemoryEventStore(EventStore):
    """Every event, in order, per stream."""

    def __init__(self) -> None:
        self.events: list[tuple[EventId, StreamId, JSONRPCMessage | None]] = []
        self.numbers = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = f"{stream_id}:{next(self.numbers):08d}"
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        found = [index for index, (event_id, _, _) in enumerate(self.events) if event_id == last_event_id]
        if not found:
            return None
        stream = self.events[found[0]][1]
        for event_id, stream_id, message in self.events[found[0] + 1 :]:
            if stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


server = MCPServer("streams", instructions="Streams that drop, for Polter's tests.")


async def _counted(name: str, seconds: float | None = None) -> str:
    started[name] += 1
    try:
        if seconds is not None:
            await asyncio.sleep(seconds)
        else:
            await asyncio.Event().wait()
    except asyncio.CancelledError:
        cancelled[name] += 1
        raise
    return name


@server.tool(description="Close this call's stream, wait SECONDS, then answer on the resumed stream.")
async def resume(seconds: float, ctx: Context) -> str:
    await ctx.close_sse_stream()
    await _counted("resume", seconds=seconds)
    return f"resumed after {seconds}"


@server.tool(description="Close this call's stream and never answer.")
async def lose(ctx: Context) -> str:
    await ctx.close_sse_stream()
    return await _counted("lose")


@server.tool(description="Never answer.")
async def hang() -> str:
    return await _counted("hang")


@server.tool(description="How many times each tool started, and how many of those were cancelled.")
def calls() -> str:
    return json.dumps({"started": started, "cancelled": cancelled}, sort_keys=True)


if __name__ == "__main__":
    server.run(
        "streamable-http", host="127.0.0.1", port=int(sys.argv[1]), event_store=MemoryEventStore(), retry_interval=100
    )
