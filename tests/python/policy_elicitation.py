"""The official MCP Python SDK's client answers the policy's questions through elicitation:
`pi-tools mcp` with a rule that asks before `touch` puts each such call to the client's
user (an elicitation callback here), over stdio and over Streamable HTTP. An accepted
question lets the call run (the file appears); a declined one is an error result naming the
rule, and the command never ran (no file); a client without an elicitation callback (so
without the capability) is not asked, and the call is denied saying so; so is a client of a
stateless HTTP server, which cannot send it a question.

Usage: python policy_elicitation.py BINARY
"""

import asyncio
import logging
import os
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from sdk_client import Warnings, http_server

CONFIG = """[tools]
active = ["bash"]

[[policy.rule]]
tool = "bash"
command = ["touch"]
decision = "ask"
reason = "Files appear only with a person's yes."
"""


class Person:
    """An elicitation callback answering from a script, recording each question."""

    def __init__(self, *answers: types.ElicitResult, pause: float = 0):
        self.answers = list(answers)
        self.asked = []
        self.pause = pause

    async def __call__(self, context, params):
        self.asked.append(params)
        await asyncio.sleep(self.pause)
        return self.answers.pop(0)


def accept(answer: str, message: str | None = None) -> types.ElicitResult:
    content = {"answer": answer}
    if message is not None:
        content["message"] = message
    return types.ElicitResult(action="accept", content=content)


def text_of(result) -> str:
    return result.content[0].text


async def touch(session: ClientSession, work: str, name: str):
    """Calls `bash` with `touch NAME`; returns the result and whether the file appeared."""
    result = await session.call_tool("bash", {"command": f"touch {name}"})
    return result, os.path.exists(os.path.join(work, name))


def check_question(person: Person, config: str, command: str) -> None:
    question = person.asked[-1]
    assert question.mode == "form", question
    message = question.message
    assert message.startswith("The model wants to call the tool `bash` with "), message
    assert f'"command":"{command}"' in message, message
    assert f"policy rule at {config}:4:1 (tool = bash, command = touch)" in message, message
    assert "Its reason: Files appear only with a person's yes." in message, message
    choices = question.requested_schema["properties"]["answer"]["oneOf"]
    assert [c["const"] for c in choices] == ["allow_once", "allow_session", "deny"], choices


async def over_stdio(binary: str, work: str, config: str) -> None:
    params = StdioServerParameters(command=binary, args=["--config", config, "mcp", "--cwd", work])

    yes = Person(accept("allow_once"))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=yes) as session:
            await session.initialize()
            result, made = await touch(session, work, "accepted.txt")
            assert not result.is_error, result
            assert made, "the accepted call ran"
            assert len(yes.asked) == 1, yes.asked
            check_question(yes, config, "touch accepted.txt")

    no = Person(
        types.ElicitResult(action="decline"),
        accept("deny", "use the scratch directory"),
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=no) as session:
            await session.initialize()
            result, made = await touch(session, work, "declined.txt")
            assert result.is_error, result
            assert not made, "the declined call never ran"
            text = text_of(result)
            assert f"policy rule at {config}:4:1 (tool = bash, command = touch)" in text, text
            assert "The person asked declined, so nothing ran." in text, text
            result, made = await touch(session, work, "denied.txt")
            assert result.is_error and not made, result
            assert "They said: use the scratch directory" in text_of(result), result
            assert len(no.asked) == 2, no.asked

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            result, made = await touch(session, work, "unasked.txt")
            assert result.is_error, result
            assert not made, "a call no one could be asked about never ran"
            text = text_of(result)
            assert f"policy rule at {config}:4:1" in text, text
            assert (
                "The MCP client cannot be asked: it did not declare the elicitation capability"
                " when it connected. So the call was denied and nothing ran." in text
            ), text


async def over_http(binary: str, work: str, config: str) -> None:
    # Allowed for the session: the second call is not asked about. The person takes longer
    # to answer than a request may take to arrive: the question waits for them all the same.
    yes = Person(accept("allow_session"), pause=2.5)
    async with http_server(binary, work, config=config) as url:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write, elicitation_callback=yes) as session:
                await session.initialize()
                for name in ["http-one.txt", "http-two.txt"]:
                    result, made = await touch(session, work, name)
                    assert not result.is_error and made, result
                assert len(yes.asked) == 1, yes.asked
                check_question(yes, config, "touch http-one.txt")
        no = Person(types.ElicitResult(action="cancel"))
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write, elicitation_callback=no) as session:
                await session.initialize()
                result, made = await touch(session, work, "http-cancelled.txt")
                assert result.is_error and not made, result
                assert "The person asked declined" in text_of(result), result
    # A stateless server cannot send a question (nor match an answer to it): not asked.
    unasked = Person(accept("allow_once"))
    async with http_server(binary, work, "--stateless", config=config) as url:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write, elicitation_callback=unasked) as session:
                await session.initialize()
                result, made = await touch(session, work, "http-stateless.txt")
                assert result.is_error and not made, result
                assert (
                    "The MCP client cannot be asked: the server runs without sessions"
                    " (stateless HTTP), so it cannot send the client a question." in text_of(result)
                ), result
                assert not unasked.asked, unasked.asked


async def main(binary: str) -> None:
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "pi-tools.toml")
        with open(config, "w") as f:
            f.write(CONFIG)
        await over_stdio(binary, work, config)
        with open(config, "a") as f:
            f.write("\n[mcp]\nrequest_timeout_secs = 1\n")
        await over_http(binary, work, config)
    assert not warnings.records, "the SDK logged warnings:\n" + "\n".join(warnings.records)
    print(
        "python sdk: the policy's questions reach the client's elicitation callback over stdio"
        " and HTTP; accepted calls ran, declined ones did not, and a client without the"
        " capability is denied"
    )


if __name__ == "__main__":
    asyncio.run(main(os.path.abspath(sys.argv[1])))
