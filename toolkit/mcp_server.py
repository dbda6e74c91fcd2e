"""The lab's demo tools served over MCP (the Model Context Protocol), on stdin and stdout.

    python -m toolkit.mcp_server                       # all four demo tools
    python -m toolkit.mcp_server get_weather calculate # only those named

MCP is a protocol for offering tools to any client that speaks it: the client starts the
server as a subprocess, asks for its tools (``tools/list``: name, description, ``inputSchema``)
and sends calls (``tools/call``). The listing here is the very spec a ``ToolSet`` gives, so
the schema is written once, by the function's signature and docstring; the server only
translates. ``toolkit.mcp_tools`` is the other side: a client that turns the listing back into
lab tools.

A failing call comes back as a result marked ``isError`` with a short text, as the protocol
asks for errors a model should read, rather than as a protocol error.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from toolkit.demo_tools import DEMO_TOOLS, demo_toolset
from toolkit.schema import ToolArgumentsError
from toolkit.tools import ToolSet, render_result


def mcp_tool(spec: dict[str, Any]) -> types.Tool:
    """One OpenAI tool spec as MCP lists it: ``parameters`` becomes ``inputSchema``."""
    declared = spec["function"]
    return types.Tool(name=declared["name"], description=declared["description"],
                      input_schema=declared["parameters"])


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def build_server(tools: ToolSet, name: str = "tool-calling-lab") -> Server:
    """An MCP server (not yet running) that lists and runs ``tools``."""

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[mcp_tool(spec) for spec in tools.specs()])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            return _error(f"no tool named {params.name!r}; this server has {', '.join(tools.names)}")
        try:
            # Checked here too: a client other than the lab's may send anything. In a worker
            # thread, so that a slow tool does not stop the server from reading its messages.
            value = await anyio.to_thread.run_sync(tool.invoke, params.arguments or {})
        except ToolArgumentsError as error:
            return _error(f"invalid arguments: {'; '.join(error.problems)}")
        except Exception as error:  # the tool failed: tell the client, keep serving
            return _error(f"{type(error).__name__}: {error}")
        # The same text the model would read if the tool ran in the lab itself.
        return types.CallToolResult(content=[types.TextContent(text=render_result(value))])

    return Server(name, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(tools: ToolSet) -> None:
    """Serve ``tools`` on this process's stdin and stdout until the client closes stdin."""
    server = build_server(tools)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: list[str] | None = None) -> int:
    names = list(sys.argv[1:] if argv is None else argv)
    known = [each.name for each in DEMO_TOOLS]
    if unknown := [name for name in names if name not in known]:
        print(f"unknown tool(s) {unknown}; the demo tools are {known}", file=sys.stderr)
        return 2
    anyio.run(serve_stdio, demo_toolset(names or None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
