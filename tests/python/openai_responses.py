"""The OpenAI Python SDK's own types against `pi-tools`: every tool of
`schema --dialect openai-responses` is a Responses `FunctionToolParam`, and a Responses
`Response` built with the SDK, run by `run --dialect openai-responses`, gives input items the
SDK's `ResponseInputParam` accepts, with each call's result under its `call_id`.

Usage: python openai_responses.py BINARY
"""

import json
import os
import subprocess
import sys
import tempfile

from openai.types.responses import FunctionToolParam, Response, ResponseInputParam
from pydantic import TypeAdapter

BUILTINS = '[tools]\nactive = ["read", "bash", "edit", "write", "grep", "find", "ls"]\n'


def run(binary, args, cwd):
    done = subprocess.run(
        [binary, *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "pi-tools.toml")
        with open(config, "w") as f:
            f.write(BUILTINS)
        with open(os.path.join(work, "notes.txt"), "w") as f:
            f.write("alpha\nbeta\n")

        tools = json.loads(
            run(binary, ["schema", "--dialect", "openai-responses", "--config", config], work)
        )
        tool_type = TypeAdapter(FunctionToolParam)
        allowed = set(FunctionToolParam.__annotations__)
        for tool in tools:
            tool_type.validate_python(tool)
            extra = set(tool) - allowed
            assert not extra, f"{tool['name']}: keys the SDK does not know: {extra}"
            assert tool["strict"] is True, tool["name"]
        names = [tool["name"] for tool in tools]
        assert names == ["read", "bash", "edit", "write", "grep", "find", "ls"], names

        # A reply as the SDK models it, with a call of each kind: a good one, one whose
        # arguments are not an object, one of a tool that does not exist.
        response = Response.model_validate(
            {
                "id": "resp_1",
                "object": "response",
                "created_at": 0,
                "model": "gpt-test",
                "status": "completed",
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": tools,
                "output": [
                    {
                        "type": "function_call",
                        "id": "fc_1",
                        "call_id": "call_read",
                        "name": "read",
                        "arguments": json.dumps({"path": "notes.txt", "limit": None}),
                        "status": "completed",
                    },
                    {
                        "type": "function_call",
                        "id": "fc_2",
                        "call_id": "call_bad",
                        "name": "read",
                        "arguments": "[1]",
                        "status": "completed",
                    },
                    {
                        "type": "function_call",
                        "id": "fc_3",
                        "call_id": "call_none",
                        "name": "nope",
                        "arguments": "{}",
                        "status": "completed",
                    },
                ],
            }
        )
        reply = os.path.join(work, "reply.json")
        with open(reply, "w") as f:
            f.write(response.model_dump_json(exclude_none=True))
        items = json.loads(
            run(binary, ["run", "--dialect", "openai-responses", "--config", config, reply], work)
        )
        TypeAdapter(ResponseInputParam).validate_python(items)
        by_id = {item["call_id"]: item for item in items}
        assert [item["type"] for item in items] == ["function_call_output"] * 3, items
        # Strict: the `null` limit means absent, so the whole file is read.
        assert by_id["call_read"]["output"] == "alpha\nbeta\n", by_id["call_read"]
        assert "not a JSON object" in by_id["call_bad"]["output"], by_id["call_bad"]
        assert "not found" in by_id["call_none"]["output"], by_id["call_none"]
    print("openai SDK: responses tools and results pass its types")


if __name__ == "__main__":
    main()
