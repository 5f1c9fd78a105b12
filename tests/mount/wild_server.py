"""An MCP server over stdio whose tools have schemas as found in public tool catalogs.

Tools: `free_form` (a nested `properties: {}`, which no strict dialect can express),
`level` (an integer enum, and an untyped one of numbers, which Gemini holds only as
strings), `toggle` (a `"True"`/
`"False"` string enum), `contradiction` (a `type: boolean` with string values, and a
`default` outside its enum), `math.factorial` (a dotted name), `closed` (a nested object
that declares no properties and closes itself) and `when` (a `format: date` and the
non-standard `optional`). Every call answers with the name and the arguments it received,
as JSON, so a test sees what reached the server.

With WILD_COLLIDE=1 it also lists `math_factorial`, the name `math.factorial` is rewritten
to. With WILD_TOOLS=N it lists N generated tools (`gen_0`, ...) of varied schemas instead,
for the catalog benchmark.
"""

import json
import os
import sys


def obj(properties, required=()):
    return {"type": "object", "properties": properties, "required": list(required)}


TOOLS = [
    ("plain", obj({"text": {"type": "string"}}, ["text"])),
    ("free_form", obj({"data": {"type": "object", "properties": {}}}, ["data"])),
    ("level", obj({"level": {"type": "integer", "enum": [1, 2, 3],
                             "description": "How loud"},
                   "step": {"enum": [0.5, 1]}}, ["level"])),
    ("toggle", obj({"flag": {"type": "string", "enum": ["True", "False"]},
                    "answer": {"type": "string", "enum": ["yes", "no"]}}, ["flag"])),
    ("contradiction", obj({"flag": {"type": "boolean", "enum": ["True", "False"]},
                           "unit": {"type": "string", "enum": ["c", "f"], "default": "k"}})),
    ("math.factorial", obj({"n": {"type": "integer"}}, ["n"])),
    ("closed", obj({"opts": {"type": "object", "properties": {},
                             "additionalProperties": False}})),
    ("when", obj({"day": {"type": "string", "format": "date", "optional": True,
                          "description": "The day"}})),
]

if os.environ.get("WILD_COLLIDE") == "1":
    TOOLS.append(("math_factorial", obj({"n": {"type": "integer"}}, ["n"])))


def generated(n):
    """N tools whose schemas vary the way a public catalog's do."""
    shapes = [
        lambda i: obj({"query": {"type": "string", "description": "What to look for %d" % i},
                       "limit": {"type": "integer", "minimum": 1, "default": 10}}, ["query"]),
        lambda i: obj({"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                       "days": {"type": "array", "items": {"type": "string", "format": "date"}}},
                      ["unit"]),
        lambda i: obj({"filters": {"type": "object", "properties": {
            "name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}},
            ["filters"]),
        lambda i: obj({"mode": {"type": "integer", "enum": [0, 1, 2]}}, ["mode"]),
        lambda i: obj({"payload": {"type": "object", "properties": {}}}),
        lambda i: obj({"flag": {"type": "boolean", "enum": ["True", "False"]}}),
    ]
    return [("gen.%d" % i if i % 50 == 0 else "gen_%d" % i, shapes[i % len(shapes)](i))
            for i in range(n)]


if os.environ.get("WILD_TOOLS"):
    TOOLS = generated(int(os.environ["WILD_TOOLS"]))

LISTING = [{"name": name, "description": "The %s tool." % name, "inputSchema": schema}
           for name, schema in TOOLS]


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
                "serverInfo": {"name": "wild", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": id_, "result": {"tools": LISTING}})
        elif method == "tools/call":
            params = message["params"]
            received = {"name": params["name"], "arguments": params.get("arguments") or {}}
            send({"jsonrpc": "2.0", "id": id_, "result": {
                "content": [{"type": "text", "text": json.dumps(received)}],
                "isError": False}})
        elif id_ is not None:
            send({"jsonrpc": "2.0", "id": id_, "result": {}})


main()
