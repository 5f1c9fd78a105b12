"""The official MCP Python SDK drives tools declared in the configuration file through
`pi-tools mcp` over stdio: they are listed with the schema their parameters give, and a
call runs the command with each value as one inert argument.

Usage: python declared_tool.py BINARY
"""

import asyncio
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CONFIG = """[tools]
active = ["read", "say", "count"]

[tool.say]
description = "Print each word on a line of its own."
command = ["printf", "%s\\n", "{words}"]
read_only = true
[tool.say.params.words]
type = "array"
items = "string"
min_items = 1
description = "The words."

[tool.count]
description = "Count the lines of a file, in a script."
script = 'wc -l < "$file"'
read_only = true
[tool.count.params.file]
type = "string"
"""


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "pi-tools.toml")
        with open(config, "w") as f:
            f.write(CONFIG)
        with open(os.path.join(work, "three.txt"), "w") as f:
            f.write("a\nb\nc\n")
        params = StdioServerParameters(
            command=binary, args=["--config", config, "mcp", "--cwd", work]
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                assert list(tools) == ["read", "say", "count"], list(tools)
                say = tools["say"]
                assert say.description == "Print each word on a line of its own.", say
                assert say.input_schema == {
                    "type": "object",
                    "properties": {
                        "words": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "The words.",
                            "minItems": 1,
                        }
                    },
                    "required": ["words"],
                }, say.input_schema
                assert say.annotations.read_only_hint is True, say.annotations

                hostile = ["$(touch pwned)", "; touch pwned", "`touch pwned`"]
                result = await session.call_tool("say", {"words": hostile})
                assert not result.is_error, result
                assert result.content[0].text == "\n".join(hostile), result.content
                result = await session.call_tool("say", {"words": ["--help"]})
                assert result.is_error, result
                assert "starts with `-`" in result.content[0].text, result.content

                result = await session.call_tool("count", {"file": "three.txt"})
                assert not result.is_error and result.content[0].text == "3", result
        assert not os.path.exists(os.path.join(work, "pwned")), "a value ran as code"
    print("python sdk: declared tools listed and called over stdio")


if __name__ == "__main__":
    asyncio.run(main(os.path.abspath(sys.argv[1])))
