"""The official MCP Python SDK's client answers a tool's own questions: the conformance
fixture server (examples/conformance_server.rs, pi-tools' MCP server) runs `test_elicitation`,
whose `ctx.ask` reaches the SDK's elicitation callback, and `test_sampling`, whose
`ctx.sample` reaches its sampling callback, in a 2025-11-25 session over Streamable HTTP;
the answers come back to the tools, which say them in their results. A client without the
callbacks (so without the capabilities) is not asked, and the tool says why.

Usage: python tool_questions.py CONFORMANCE_SERVER
"""

import asyncio
import logging
import os
import sys

from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from sdk_client import Warnings
from servers import fixture_server


async def main(binary: str) -> None:
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    asked = []

    async def person(context, params):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.org"})

    async def model(context, params):
        asked.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="Paris."),
            model="sdk-model",
            stop_reason="endTurn",
        )

    async with fixture_server(binary) as url:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(
                read, write, elicitation_callback=person, sampling_callback=model
            ) as session:
                await session.initialize()
                result = await session.call_tool("test_elicitation", {"message": "Who are you?"})
                assert not result.is_error, result
                assert result.content[0].text == (
                    'User response: action=accept, content={"username":"ada","email":"ada@example.org"}'
                ), result
                question = asked[0]
                assert question.message == "Who are you?", question
                assert question.requested_schema["required"] == ["username", "email"], question

                result = await session.call_tool("test_sampling", {"prompt": "The capital of France?"})
                assert not result.is_error, result
                assert result.content[0].text == "LLM response: Paris.", result
                sampling = asked[1]
                assert sampling.max_tokens == 100, sampling
                assert sampling.messages[0].content.text == "The capital of France?", sampling

        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("test_sampling", {"prompt": "Hi"})
                assert result.is_error, result
                assert result.content[0].text == (
                    "The MCP client cannot be asked: it did not declare the `sampling` capability"
                    " when it connected (`initialize`). Use a client that offers sampling, or put"
                    " what it would ask for into the arguments."
                ), result

    assert not warnings.records, "the SDK logged warnings:\n" + "\n".join(warnings.records)
    print(
        "python sdk: a tool's own question and sampling request reach the client's elicitation"
        " and sampling callbacks over HTTP, and their answers reach the tool; a client without"
        " them is not asked"
    )


if __name__ == "__main__":
    asyncio.run(main(os.path.abspath(sys.argv[1])))
