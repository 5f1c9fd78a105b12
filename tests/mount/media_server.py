"""An MCP server over stdio with one tool, `media`, whose answer holds one block of each
kind MCP has besides links: text, an image, audio, an embedded text resource and an
embedded binary resource, each exactly as `CONTENT` spells it.
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
LISTING = [{
    "name": "media",
    "description": "Answer with one block of each kind.",
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
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "media", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": id_, "result": {"tools": LISTING}})
        elif method == "tools/call":
            send({"jsonrpc": "2.0", "id": id_,
                  "result": {"content": CONTENT, "isError": False}})
        elif id_ is not None:
            send({"jsonrpc": "2.0", "id": id_, "result": {}})


main()
