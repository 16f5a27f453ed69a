"""A small real MCP server (stdio, the SDK's low-level ``Server``) for the gateway's tests of the protocol's other
features: calls that take long (with progress, or none), logging, completion, resource subscriptions, and
requests of its own (sampling, elicitation). The plain fixture server (``fixture_server.py``) keeps the tool
list the policy tests count on.

Tools: ``slow(seconds)``, ``tick(seconds, every)`` (progress as it goes), ``running()`` (the slow calls running,
those cancelled, the log level it was set to, its subscriptions, its process id, as JSON), ``log(lines)`` (lines at each level
from debug to error), ``touch(uri)`` (announces the resource changed, to whoever subscribed), ``sample(prompt)``
and ``elicit(message, schema)`` (ask the client; answer what it said, or the error). Resources:
``features://watched`` and the template ``features://items/{id}``; prompt ``pick(colour)``, whose argument
completes to red, green and blue.

Run: ``python tests/support/features_server.py``.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

LEVELS = ("debug", "info", "notice", "warning", "error")
COLOURS = ("red", "green", "blue")

state: dict[str, Any] = {"sleeping": 0, "cancelled": [], "level": None, "subscribed": [], "pid": os.getpid()}


def _tool(name: str, description: str, **properties: str) -> types.Tool:
    schema = {"type": "object", "properties": {key: {"type": kind} for key, kind in properties.items()}}
    return types.Tool(name=name, description=description, input_schema=schema)


TOOLS = [
    _tool("slow", "Wait SECONDS, then answer.", seconds="number"),
    _tool("tick", "Report progress every EVERY seconds for SECONDS, then answer.", seconds="number", every="number"),
    _tool("running", "What the server has seen, as JSON."),
    _tool("log", "Send LINES log lines at each level from debug to error.", lines="integer"),
    _tool("touch", "Tell the subscribers of URI that it changed.", uri="string"),
    _tool("sample", "Ask the client's model PROMPT; answer its reply.", prompt="string"),
    _tool(
        "elicit", "Ask the user MESSAGE with the form SCHEMA; answer what they said.", message="string", schema="object"
    ),
]


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "slow":
        return _text(await _slow(float(arguments["seconds"])))
    if params.name == "tick":
        steps = max(1, round(float(arguments["seconds"]) / float(arguments["every"])))
        for step in range(1, steps + 1):
            await anyio.sleep(float(arguments["every"]))
            await ctx.session.report_progress(step, steps, f"tick {step}")
        return _text(f"ticked {steps} times")
    if params.name == "running":
        return _text(json.dumps(state, sort_keys=True))
    if params.name == "log":
        for line in range(int(arguments.get("lines", 1))):
            for level in LEVELS:
                await ctx.session.send_log_message(level, f"{level} line {line}", "features")  # type: ignore[arg-type]
        return _text("logged")
    if params.name == "touch":
        await ctx.session.send_resource_updated(str(arguments["uri"]))
        return _text("touched")
    if params.name == "sample":
        return _text(await _sample(ctx, str(arguments["prompt"])))
    if params.name == "elicit":
        return _text(await _elicit(ctx, str(arguments["message"]), arguments.get("schema") or {}))
    raise MCPError(types.INVALID_PARAMS, f"no tool {params.name}")


async def _slow(seconds: float) -> str:
    state["sleeping"] += 1
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        state["cancelled"].append(f"slow {seconds:g}")
        raise
    finally:
        state["sleeping"] -= 1
    return f"slept {seconds:g}"


async def _sample(ctx: ServerRequestContext[Any], prompt: str) -> str:
    try:
        result = await ctx.session.create_message(  # type: ignore[call-overload]
            [types.SamplingMessage(role="user", content=types.TextContent(text=prompt))],
            max_tokens=50,
            related_request_id=ctx.request_id,
        )
    except MCPError as exc:
        return f"sampling failed: {exc.error.message}"
    content = result.content
    return f"model {result.model} said: {content.text if isinstance(content, types.TextContent) else content}"


async def _elicit(ctx: ServerRequestContext[Any], message: str, schema: dict[str, Any]) -> str:
    try:
        result = await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)  # type: ignore[arg-type]
    except MCPError as exc:
        return f"elicitation failed: {exc.error.message}"
    return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)


async def set_level(ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams) -> types.EmptyResult:
    state["level"] = params.level
    return types.EmptyResult()


async def list_resources(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=[types.Resource(uri="features://watched", name="watched")])


async def list_templates(ctx: ServerRequestContext[Any], params: Any) -> types.ListResourceTemplatesResult:
    template = types.ResourceTemplate(uri_template="features://items/{id}", name="items")
    return types.ListResourceTemplatesResult(resource_templates=[template])


async def read_resource(
    ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    return types.ReadResourceResult(contents=[types.TextResourceContents(uri=str(params.uri), text="content")])


async def subscribe(ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams) -> types.EmptyResult:
    state["subscribed"] = sorted({*state["subscribed"], str(params.uri)})
    return types.EmptyResult()


async def unsubscribe(ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    state["subscribed"] = [uri for uri in state["subscribed"] if uri != str(params.uri)]
    return types.EmptyResult()


async def list_prompts(ctx: ServerRequestContext[Any], params: Any) -> types.ListPromptsResult:
    argument = types.PromptArgument(name="colour", required=True)
    return types.ListPromptsResult(prompts=[types.Prompt(name="pick", arguments=[argument])])


async def get_prompt(ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams) -> types.GetPromptResult:
    colour = (params.arguments or {}).get("colour", "")
    text = types.TextContent(text=f"Pick {colour}.")
    return types.GetPromptResult(messages=[types.PromptMessage(role="user", content=text)])


async def complete(ctx: ServerRequestContext[Any], params: types.CompleteRequestParams) -> types.CompleteResult:
    values = [colour for colour in COLOURS if colour.startswith(params.argument.value)]
    return types.CompleteResult(completion=types.Completion(values=values))


server = Server(
    "features",
    instructions="The protocol's features, for Polter's tests.",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_set_logging_level=set_level,
    on_list_resources=list_resources,
    on_list_resource_templates=list_templates,
    on_read_resource=read_resource,
    on_subscribe_resource=subscribe,
    on_unsubscribe_resource=unsubscribe,
    on_list_prompts=list_prompts,
    on_get_prompt=get_prompt,
    on_completion=complete,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
