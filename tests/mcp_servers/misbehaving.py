"""An MCP server written by hand, one JSON-RPC line at a time, to misbehave on purpose.

    python tests/mcp_servers/misbehaving.py MODE

It answers ``initialize`` and ``tools/list`` the way MODE says:

- ``hang-initialize``  never answers ``initialize``
- ``hang-list``        answers ``initialize``, never answers ``tools/list``
- ``no-name``          lists a tool without a name
- ``bad-schema``       lists a tool whose inputSchema is not a valid JSON Schema
- ``not-object``       lists a tool whose inputSchema describes a string, not an object
- ``dies-on-call``     lists one good tool (``echo``) and exits when it is called
- ``hang-call``        lists ``echo`` and never answers a call to it
- ``good``             lists ``echo`` and runs it (echoes ``text``; fails on ``"fail"``)

The SDK's own server would never send a malformed listing, hence the hand-written protocol.
"""

import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"

ECHO = {"name": "echo", "description": "Repeat a text back.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                        "required": ["text"], "additionalProperties": False}}
LISTINGS = {
    "no-name": [ECHO, {"description": "A tool with no name.", "inputSchema": {"type": "object"}}],
    "bad-schema": [ECHO, {"name": "broken", "description": "Bad schema.",
                          "inputSchema": {"type": "object",
                                          "properties": {"x": {"type": "strin"}}}}],
    "not-object": [{"name": "shout", "description": "Not an object.",
                    "inputSchema": {"type": "string"}}],
}


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def answer(request: dict) -> dict | None:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        if MODE == "hang-initialize":
            return None
        return {"protocolVersion": params.get("protocolVersion"), "capabilities": {"tools": {}},
                "serverInfo": {"name": f"misbehaving-{MODE}", "version": "0"}}
    if method == "tools/list":
        if MODE == "hang-list":
            return None
        return {"tools": LISTINGS.get(MODE, [ECHO])}
    if method == "tools/call":
        if MODE == "hang-call":
            return None
        if MODE == "dies-on-call":
            print("mock server: out of memory, giving up", file=sys.stderr, flush=True)
            os._exit(1)
        text = (params.get("arguments") or {}).get("text", "")
        return {"content": [{"type": "text", "text": f"the tool failed on {text!r}"
                             if text == "fail" else text}], "isError": text == "fail"}
    return {}


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:  # a notification: nothing to answer
        continue
    result = answer(request)
    if result is not None:
        send({"jsonrpc": "2.0", "id": request["id"], "result": result})
