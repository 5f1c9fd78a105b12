"""The providers' SDK types against pi-tools' native tool shapes (`[tools] shapes =
"native"`): the tools `schema` lists for Anthropic are the SDK's `ToolTextEditor20250728Param`
and `ToolBash20250124Param` (and `ToolParam` for the others), those for Responses its
`ApplyPatchToolParam` and `FunctionShellToolParam` (and `FunctionToolParam`); replies the
SDKs built holding native calls (`apply_patch_call`, `shell_call`, a `tool_use` of
`str_replace_based_edit_tool`), run by `run`, give results the SDKs' input types accept, in
each shape's own form.

Usage: python native_shapes.py BINARY
"""

import json
import os
import subprocess
import sys
import tempfile

from anthropic.types import (
    Message,
    MessageParam,
    ToolBash20250124Param,
    ToolParam,
    ToolTextEditor20250728Param,
)
from openai.types.responses import (
    ApplyPatchToolParam,
    FunctionShellToolParam,
    FunctionToolParam,
    Response,
    ResponseInputParam,
)
from pydantic import TypeAdapter

CONFIG = '[tools]\nactive = ["read", "bash", "edit", "write", "ls"]\nshapes = "native"\n\n[sandbox]\nmode = "off"\n'


def run(binary, args, cwd):
    done = subprocess.run(
        [binary, *args], cwd=cwd, capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done.stdout


def check_keys(tool, param):
    extra = set(tool) - set(param.__annotations__)
    assert not extra, f"{tool}: keys the SDK does not know: {extra}"


def anthropic(binary, work, config):
    tools = json.loads(run(binary, ["schema", "--dialect", "anthropic", "--config", config], work))
    by_type = {tool.get("type", "custom"): tool for tool in tools}
    TypeAdapter(ToolTextEditor20250728Param).validate_python(by_type["text_editor_20250728"])
    check_keys(by_type["text_editor_20250728"], ToolTextEditor20250728Param)
    TypeAdapter(ToolBash20250124Param).validate_python(by_type["bash_20250124"])
    check_keys(by_type["bash_20250124"], ToolBash20250124Param)
    plain = [tool for tool in tools if "type" not in tool]
    for tool in plain:
        TypeAdapter(ToolParam).validate_python(tool)
    assert sorted(t["name"] for t in plain) == ["ls", "read"], plain

    message = Message.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "str_replace_based_edit_tool",
                    "input": {"command": "str_replace", "path": "notes.txt", "old_str": "beta", "new_str": "gamma"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "str_replace_based_edit_tool",
                    "input": {"command": "view", "path": "."},
                },
                {"type": "tool_use", "id": "toolu_3", "name": "bash", "input": {"command": "echo hi"}},
            ],
        }
    )
    reply = os.path.join(work, "message.json")
    with open(reply, "w") as f:
        f.write(message.model_dump_json(exclude_none=True))
    out = json.loads(run(binary, ["run", "--dialect", "anthropic", "--config", config, reply], work))
    entries = out if isinstance(out, list) else [out]
    for entry in entries:
        TypeAdapter(MessageParam).validate_python(entry)
    blocks = entries[0]["content"]
    assert [b["tool_use_id"] for b in blocks] == ["toolu_1", "toolu_2", "toolu_3"], blocks
    assert all(b["type"] == "tool_result" and b["is_error"] is False for b in blocks), blocks
    with open(os.path.join(work, "notes.txt")) as f:
        assert f.read() == "alpha\ngamma\n"


def responses(binary, work, config):
    tools = json.loads(
        run(binary, ["schema", "--dialect", "openai-responses", "--config", config], work)
    )
    by_type = {}
    for tool in tools:
        by_type.setdefault(tool["type"], []).append(tool)
    TypeAdapter(ApplyPatchToolParam).validate_python(by_type["apply_patch"][0])
    check_keys(by_type["apply_patch"][0], ApplyPatchToolParam)
    TypeAdapter(FunctionShellToolParam).validate_python(by_type["shell"][0])
    check_keys(by_type["shell"][0], FunctionShellToolParam)
    for tool in by_type["function"]:
        TypeAdapter(FunctionToolParam).validate_python(tool)
    assert sorted(t["name"] for t in by_type["function"]) == ["ls", "read"]

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
                    "type": "apply_patch_call",
                    "id": "apc_1",
                    "call_id": "call_patch",
                    "status": "completed",
                    "operation": {"type": "update_file", "path": "notes.txt", "diff": "@@\n alpha\n-gamma\n+delta\n"},
                },
                {
                    "type": "apply_patch_call",
                    "id": "apc_2",
                    "call_id": "call_bad",
                    "status": "completed",
                    "operation": {"type": "update_file", "path": "notes.txt", "diff": "@@\n-absent\n+x\n"},
                },
                {
                    "type": "shell_call",
                    "id": "sh_1",
                    "call_id": "call_shell",
                    "status": "completed",
                    "action": {"commands": ["echo from the shell"], "timeout_ms": 10000, "max_output_length": 4096},
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
    # A reply's apply_patch_call items apply all or nothing: the bad one fails them both.
    assert by_id["call_patch"]["type"] == "apply_patch_call_output", items
    assert by_id["call_patch"]["status"] == "failed", items
    assert "call_bad" in by_id["call_patch"]["output"], items
    assert by_id["call_bad"]["status"] == "failed", items
    assert "Hunk 1 of notes.txt" in by_id["call_bad"]["output"], items
    shell = by_id["call_shell"]
    assert shell["type"] == "shell_call_output", shell
    assert "from the shell" in shell["output"][0]["stdout"], shell
    assert shell["output"][0]["outcome"] == {"type": "exit", "exit_code": 0}, shell
    # The reply's own items, as they go back into the history, are input items too.
    TypeAdapter(ResponseInputParam).validate_python(
        [item.model_dump(exclude_none=True) for item in response.output]
    )
    with open(os.path.join(work, "notes.txt")) as f:
        assert f.read() == "alpha\ngamma\n", "nothing of a refused reply is applied"

    # The good item resent alone applies.
    resent = response.model_copy(update={"output": response.output[:1]})
    with open(reply, "w") as f:
        f.write(resent.model_dump_json(exclude_none=True))
    items = json.loads(
        run(binary, ["run", "--dialect", "openai-responses", "--config", config, reply], work)
    )
    TypeAdapter(ResponseInputParam).validate_python(items)
    assert [(i["call_id"], i["status"]) for i in items] == [("call_patch", "completed")], items
    with open(os.path.join(work, "notes.txt")) as f:
        assert f.read() == "alpha\ndelta\n"


def main():
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "pi-tools.toml")
        with open(config, "w") as f:
            f.write(CONFIG)
        with open(os.path.join(work, "notes.txt"), "w") as f:
            f.write("alpha\nbeta\n")
        anthropic(binary, work, config)
        responses(binary, work, config)
    print("openai and anthropic SDKs: native tool shapes and their results pass their types")


if __name__ == "__main__":
    main()
