"""An MCP server over stdio with two tools: `media`, whose answer holds one block of each
kind MCP has besides links (text, an image, audio, an embedded text resource and an
embedded binary resource, each exactly as `CONTENT` spells it), and `linking`, whose answer
links to its resource `test://notes/a`, which `resources/read` gives.
"""

import json
import sys

WAV = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA=="
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJ"
       "RU5ErkJggg==")
CONTENT = [
    {"type": "text", "text": "one of each:"},
    {"type": "image", "data": PNG, "mimeType": "image/png"},
    {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
    {"type": "resource", "resource": {"uri": "test://notes/a", "mimeType": "text/markdown",
                                      "text": "# A\nnotes"}},
    {"type": "resource", "resource": {"uri": "test://files/b.pdf",
                                      "mimeType": "application/pdf", "blob": "JVBERi0xLjQK"}},
]
LINKED = [
    {"type": "text", "text": "the notes are linked"},
    {"type": "resource_link", "uri": "test://notes/a", "name": "a",
     "description": "The notes.", "mimeType": "text/markdown"},
]
LISTING = [{
    "name": "media",
    "description": "Answer with one block of each kind.",
    "inputSchema": {"type": "object", "properties": {}},
}, {
    "name": "linking",
    "description": "Answer with a link to the notes.",
    "inputSchema": {"type": "object", "properties": {}},
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
                "capabilities": {"tools": {}, "resources": {}},
                "serverInfo": {"name": "media", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": id_, "result": {"tools": LISTING}})
        elif method == "tools/call":
            linking = message["params"]["name"] == "linking"
            send({"jsonrpc": "2.0", "id": id_,
                  "result": {"content": LINKED if linking else CONTENT, "isError": False}})
        elif method == "resources/list":
            send({"jsonrpc": "2.0", "id": id_, "result": {"resources": [
                {"uri": "test://notes/a", "name": "a", "mimeType": "text/markdown"}]}})
        elif method == "resources/read":
            uri = message["params"]["uri"]
            if uri == "test://notes/a":
                send({"jsonrpc": "2.0", "id": id_, "result": {"contents": [
                    {"uri": uri, "mimeType": "text/markdown", "text": "# A\nnotes"}]}})
            else:
                send({"jsonrpc": "2.0", "id": id_,
                      "error": {"code": -32002, "message": "no such resource"}})
        elif id_ is not None:
            send({"jsonrpc": "2.0", "id": id_, "result": {}})


main()
