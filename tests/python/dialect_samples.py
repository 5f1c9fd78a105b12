"""The providers' own Python SDK types against what every dialect renders for random schemas
of the subset the dialects accept (written by `tests/dialects_proptest.rs` with
`PI_TOOLS_DIALECT_SAMPLES`): each sample must be the SDK's tool parameter type, with no key
the type does not know, at the top and in the function it wraps.

- openai, openai-strict: `ChatCompletionFunctionToolParam` and its `FunctionDefinition`;
- openai-responses: the Responses `FunctionToolParam`;
- anthropic: `ToolParam` (its `input_schema` an object schema);
- gemini: `google.genai.types.FunctionDeclaration`, a pydantic model that forbids unknown
  keys and reads `parameters` as its `Schema` (types, formats, enums, nesting);
- mcp: `mcp.types.Tool`.

Usage: python dialect_samples.py FILE
"""

import json
import sys

from anthropic.types import ToolParam
from google.genai import types as genai
from mcp.types import Tool
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter


def known_keys(value, typed, where):
    extra = set(value) - set(typed.__annotations__)
    assert not extra, f"{where}: keys {typed.__name__} does not know: {sorted(extra)}"


def openai_chat(tool, strict):
    TypeAdapter(ChatCompletionFunctionToolParam).validate_python(tool)
    known_keys(tool, ChatCompletionFunctionToolParam, "openai tool")
    known_keys(tool["function"], FunctionDefinition, "openai function")
    assert tool["function"].get("strict", False) is strict, tool


def responses(tool):
    TypeAdapter(FunctionToolParam).validate_python(tool)
    known_keys(tool, FunctionToolParam, "responses tool")


def anthropic(tool):
    TypeAdapter(ToolParam).validate_python(tool)
    known_keys(tool, ToolParam, "anthropic tool")
    assert tool["input_schema"]["type"] == "object", tool


def gemini(tool):
    declaration = genai.FunctionDeclaration.model_validate(tool)
    assert declaration.parameters is not None, tool


def mcp(tool):
    Tool.model_validate(tool)


CHECKS = {
    "openai": lambda tool: openai_chat(tool, False),
    "openai-strict": lambda tool: openai_chat(tool, True),
    "openai-responses": responses,
    "anthropic": anthropic,
    "gemini": gemini,
    "mcp": mcp,
}


def main():
    counts = {}
    with open(sys.argv[1]) as samples:
        for number, line in enumerate(samples, 1):
            sample = json.loads(line)
            dialect = sample["dialect"]
            try:
                CHECKS[dialect](sample["tool"])
            except Exception as error:
                sys.exit(f"sample {number} ({dialect}) is not the SDK's type: {error}\n{line}")
            counts[dialect] = counts.get(dialect, 0) + 1
    assert set(counts) == set(CHECKS), f"dialects missing from the samples: {set(CHECKS) - set(counts)}"
    print("dialect samples the SDK types accept:", ", ".join(f"{d} {n}" for d, n in sorted(counts.items())))


if __name__ == "__main__":
    main()
