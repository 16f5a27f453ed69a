"""The upstream of the gateway's load test (``support/load.py``): a real MCP server (stdio, the SDK's
MCPServer) that writes a line for every call it runs into a call log, ``<tool> <pane> <pid>``.

The log is the count at the upstream: it is appended with one ``write`` per call (O_APPEND), so it keeps
every call the process ran even when the test kills the process in the middle of the load.

Run: ``LOAD_CALL_LOG=/path/calls.log python tests/support/load_server.py``.
"""

from __future__ import annotations

import os

from mcp.server import MCPServer
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)

server = MCPServer("load", instructions="The upstream of Polter's load test.")
_log = os.open(os.environ["LOAD_CALL_LOG"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def _ran(tool: str, pane: str) -> str:
    os.write(_log, f"{tool} {pane} {os.getpid()}\n".encode())
    return f"{tool} ran for {pane}"


@server.tool(annotations=READ_ONLY, description="Read something (the load role allows it).")
def read(pane: str) -> str:
    return _ran("read", pane)


@server.tool(annotations=WRITES, description="Write something (the load role denies it).")
def write(pane: str) -> str:
    return _ran("write", pane)


@server.tool(annotations=WRITES, description="Launch something (gated on the human having said 'launch').")
def launch(pane: str) -> str:
    return _ran("launch", pane)


@server.tool(annotations=WRITES, description="Publish something (the load role asks the human).")
def publish(pane: str) -> str:
    return _ran("publish", pane)


@server.tool(annotations=READ_ONLY, description="The server's process id (not logged).")
def pid() -> int:
    return os.getpid()


if __name__ == "__main__":
    server.run()
