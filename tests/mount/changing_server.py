"""An MCP server over stdio whose tool list changes: it lists `grow` and `old`; a call of
`grow` answers `grown`, then lists `grow` and `fresh` instead and says so with
`notifications/tools/list_changed`. `old` answers `old called`, `fresh` `fresh called`;
a tool it does not list is a JSON-RPC error. With `--flood` it lists two tools more: `flood`
answers `flooded` and then sends 500 list_changed notifications at once (its list stays),
`lists` answers how many `tools/list` requests it has had.
"""

import json
import sys

SCHEMA = {"type": "object", "properties": {}}


def tool(name):
    return {"name": name, "description": f"The {name} tool.", "inputSchema": SCHEMA,
            "annotations": {"readOnlyHint": True}}


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main():
    extra = ["flood", "lists"] if "--flood" in sys.argv else []
    listed = ["grow", "old"] + extra
    lists = 0
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
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "changing", "version": "1"}}})
        elif method == "tools/list":
            lists += 1
            send({"jsonrpc": "2.0", "id": id_,
                  "result": {"tools": [tool(name) for name in listed]}})
        elif method == "tools/call":
            name = message["params"]["name"]
            if name not in listed:
                send({"jsonrpc": "2.0", "id": id_,
                      "error": {"code": -32602, "message": f"unknown tool {name}"}})
                continue
            text = {"grow": "grown", "flood": "flooded", "lists": str(lists)}.get(
                name, f"{name} called")
            send({"jsonrpc": "2.0", "id": id_,
                  "result": {"content": [{"type": "text", "text": text}], "isError": False}})
            if name == "grow" and "old" in listed:
                listed = ["grow", "fresh"] + extra
                send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
            if name == "flood":
                for _ in range(500):
                    send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        elif id_ is not None:
            send({"jsonrpc": "2.0", "id": id_, "result": {}})


main()
