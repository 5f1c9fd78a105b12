"""The MCP Python SDK 1.x of today (`mcp` 1.30, the newest 1.x; installed beside the 2.x one
by scripts/python-sdk.sh) as a client of `pi-tools mcp`, over stdio and over Streamable HTTP.

A 1.x client knows only 2025-11-25 sessions: it initializes, lists the tools, reads a file,
and answers the policy's questions through its elicitation callback, once accepting (the
command runs) and once declining (it never runs, and the result says why). Then it drives
the tasks of 2025-11-25 through `session.experimental`: a call made a task, polled with
`tasks/get` to its result from `tasks/result` and listed by `tasks/list`; a task whose
command the policy asks about, the question reaching the elicitation callback; and a task
cancelled with `tasks/cancel` while its `sleep` runs, its processes then gone from /proc.
Any warning the SDK logs fails the run.

Usage: python v1_client.py BINARY
"""

import asyncio
import logging
import os
import sys
import tempfile
import warnings as warnings_module
from importlib.metadata import version

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

from servers import http_server

CONFIG = """[[policy.rule]]
tool = "bash"
command = ["touch"]
decision = "ask"
reason = "Files appear only with a person's yes."
"""


class Warnings(logging.Handler):
    """Every record of level WARNING or above the SDK logs."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(self.format(record))


class Person:
    """An elicitation callback answering from a script, recording each question."""

    def __init__(self, *answers: types.ElicitResult):
        self.answers = list(answers)
        self.asked = []

    async def __call__(self, context, params):
        self.asked.append(params)
        return self.answers.pop(0)


def text_of(result) -> str:
    return result.content[0].text


async def exercise(session: ClientSession, work: str, config: str, transport: str) -> None:
    init = await session.initialize()
    assert init.protocolVersion == "2025-11-25", init
    assert init.serverInfo.name == "pi-tools", init

    names = [tool.name for tool in (await session.list_tools()).tools]
    assert names == ["read", "bash", "edit", "write"], names

    result = await session.call_tool("read", {"path": "a.txt"})
    assert not result.isError and text_of(result) == "hello\n", result
    assert result.structuredContent["totalLines"] == 1, result.structuredContent

    # Asked and accepted: the command runs.
    accepted = f"accepted-{transport}.txt"
    result = await session.call_tool("bash", {"command": f"touch {accepted}"})
    assert not result.isError, result
    assert os.path.exists(os.path.join(work, accepted)), "the accepted call ran"

    # Asked and declined: it never runs, and the result names the rule.
    declined = f"declined-{transport}.txt"
    result = await session.call_tool("bash", {"command": f"touch {declined}"})
    assert result.isError, result
    assert not os.path.exists(os.path.join(work, declined)), "the declined call never ran"
    text = text_of(result)
    assert f"policy rule at {config}:1:1 (tool = bash, command = touch)" in text, text
    assert "The person asked declined, so nothing ran." in text, text

    await tasks(session, work, transport)


def alive(tag: str) -> list[int]:
    """The live (not zombie) processes whose command line holds the argument `tag`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                args = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in args and state != b"Z":
            found.append(int(entry))
    return found


async def until(check, what: str, seconds: float = 10.0):
    """Awaits `check()` until it gives a true value, at most `seconds`; that value."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        value = await check()
        if value:
            return value
        assert asyncio.get_running_loop().time() < deadline, what
        await asyncio.sleep(0.05)


async def tasks(session: ClientSession, work: str, transport: str) -> None:
    """The tasks of 2025-11-25: polled to a result, asked about, listed, and cancelled."""
    offered = session.get_server_capabilities().tasks
    assert offered is not None and offered.requests.tools.call is not None, offered
    assert offered.list is not None and offered.cancel is not None, offered
    listed = (await session.list_tools()).tools
    assert all(tool.execution.taskSupport == "optional" for tool in listed), listed

    # A call made a task: answered at once, polled to its end, its result then read.
    created = await session.experimental.call_tool_as_task("bash", {"command": "echo polled"})
    task_id = created.task.taskId
    assert created.task.status == "working", created
    assert created.task.ttl == 600000 and created.task.pollInterval == 500, created

    async def ended(task_id=task_id):
        got = await session.experimental.get_task(task_id)
        return got if got.status in ("completed", "failed", "cancelled") else None

    got = await until(ended, "the task ends")
    assert got.status == "completed" and got.taskId == task_id, got
    result = await session.experimental.get_task_result(task_id, types.CallToolResult)
    assert not result.isError and text_of(result) == "polled", result
    assert result.meta["io.modelcontextprotocol/related-task"] == {"taskId": task_id}, result

    # A task whose command the policy asks about: the question reaches the callback in the
    # session, and the command runs once it is accepted.
    touched = f"task-{transport}.txt"
    created = await session.experimental.call_tool_as_task("bash", {"command": f"touch {touched}"})
    result = await session.experimental.get_task_result(created.task.taskId, types.CallToolResult)
    assert not result.isError, result
    assert os.path.exists(os.path.join(work, touched)), "the accepted task's command ran"

    ids = [task.taskId for task in (await session.experimental.list_tasks()).tasks]
    assert ids[:2] == [task_id, created.task.taskId], ids

    # A task cancelled while its command runs: its processes end.
    tag = f"300.{os.getpid()}{len(transport)}"
    created = await session.experimental.call_tool_as_task("bash", {"command": f"sleep {tag}"})

    async def running():
        return alive(tag)

    await until(running, "the task's command runs")
    cancelled = await session.experimental.cancel_task(created.task.taskId)
    assert cancelled.status == "cancelled" and cancelled.taskId == created.task.taskId, cancelled

    async def gone():
        return not alive(tag)

    await until(gone, "the cancelled task's processes end", 5.0)
    got = await session.experimental.get_task(created.task.taskId)
    assert got.status == "cancelled", got


def person() -> Person:
    return Person(
        types.ElicitResult(action="accept", content={"answer": "allow_once"}),
        types.ElicitResult(action="decline"),
        types.ElicitResult(action="accept", content={"answer": "allow_once"}),
    )


def check_questions(asked: list, transport: str) -> None:
    assert len(asked) == 3, asked
    message = asked[2].message
    assert f'"command":"touch task-{transport}.txt"' in message, message
    for question, name in zip(asked, ["accepted", "declined"]):
        message = question.message
        assert message.startswith("The model wants to call the tool `bash` with "), message
        assert f'"command":"touch {name}-{transport}.txt"' in message, message
        choices = question.requestedSchema["properties"]["answer"]["oneOf"]
        assert [c["const"] for c in choices] == ["allow_once", "allow_session", "deny"], choices


async def over_stdio(binary: str, work: str, config: str) -> None:
    params = StdioServerParameters(command=binary, args=["--config", config, "mcp", "--cwd", work])
    answers = person()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=answers) as session:
            await exercise(session, work, config, "stdio")
    check_questions(answers.asked, "stdio")


async def over_http(binary: str, work: str, config: str) -> None:
    answers = person()
    async with http_server(binary, work, config=config) as url:
        async with streamablehttp_client(url) as (read, write, _session_id):
            async with ClientSession(read, write, elicitation_callback=answers) as session:
                await exercise(session, work, config, "http")
        # Leaving the client's context sent DELETE; a refused one is logged as a warning.
    check_questions(answers.asked, "http")


async def main(binary: str) -> None:
    assert version("mcp").startswith("1."), version("mcp")
    # The 1.x SDK marks its task API deprecated (2.x moves tasks to the extension); the
    # 2025-11-25 sessions it drives here are what its users still run.
    warnings_module.filterwarnings(
        "ignore", message="The experimental tasks API is deprecated", category=DeprecationWarning
    )
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "a.txt"), "w") as f:
            f.write("hello\n")
        config = os.path.join(work, "pi-tools.toml")
        with open(config, "w") as f:
            f.write(CONFIG)
        await over_stdio(binary, work, config)
        await over_http(binary, work, config)
    assert not warnings.records, warnings.records
    print(f"the Python SDK {version('mcp')} drove pi-tools over stdio and Streamable HTTP")


if __name__ == "__main__":
    asyncio.run(main(os.path.abspath(sys.argv[1])))
