"""An MCP server over stdio with one tool that lists an output schema, `measure`
(`{lines: integer}`), and answers with structured content: `{"lines": 3}`, or with
`{"lines": "many"}` (which does not match) when called with `"bad": true`, or with none when
called with `"none": true`.
"""

import json
import sys

OUTPUT = {"type": "object", "properties": {"lines": {"type": "integer"}}, "required": ["lines"]}
LISTING = [{
    "name": "measure",
    "description": "Measure something.",
    "inputSchema": {"type": "object", "properties": {"bad": {"type": "boolean"},
                                                     "none": {"type": "boolean"}}},
    "outputSchema": OUTPUT,
}]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        id_ = message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": id_, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "typed", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": id_, "result": {"tools": LISTING}})
        elif method == "tools/call":
            arguments = message["params"].get("arguments") or {}
            result = {"content": [{"type": "text", "text": "measured"}], "isError": False}
            if not arguments.get("none"):
                lines = "many" if arguments.get("bad") else 3
                result["structuredContent"] = {"lines": lines}
            send({"jsonrpc": "2.0", "id": id_, "result": result})
        elif id_ is not None:
            send({"jsonrpc": "2.0", "id": id_, "result": {}})


main()
