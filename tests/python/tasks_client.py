"""The official MCP Python SDK 2.x drives MCP tasks (the `io.modelcontextprotocol/tasks`
extension of 2026-07-28) against `pi-tools mcp`, over stdio and over Streamable HTTP.

The SDK has no task client of its own, but it has the mechanism made for one: a
`ClientExtension` whose `ResultClaim` takes the `resultType: "task"` answer of a
`tools/call`, and whose resolver finishes it through `ctx.session`. `TasksExtension` below
is such an extension: passed to `Client(extensions=[...])`, it declares the extension in
every request's capabilities, and its resolver polls `tasks/get` until the task ends and
returns the call's `CallToolResult`. With it, `client.call_tool` of a long call returns the
command's result as if no task had been made (the SDK then checks it against bash's
`outputSchema`); and a call cancelled with `tasks/cancel` ends as `cancelled`, its
processes gone (looked for in /proc, with a deadline).

Usage: python tasks_client.py BINARY
"""

import asyncio
import logging
import os
import sys
import tempfile
import time
import uuid
from typing import Any, Literal

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError

from sdk_client import Warnings, http_server

TASKS = "io.modelcontextprotocol/tasks"

# A call longer than a second becomes a task: the long calls below run for seconds, the quick
# one for milliseconds.
CONFIG = """[mcp]
task_after_ms = 1000
"""

ENDED = {"completed", "failed", "cancelled"}


class CreateTaskResult(types.Result):
    """A `tools/call` answered with a task: what the claim parses."""

    result_type: Literal["task"]
    task_id: str
    status: str
    poll_interval_ms: int | None = None


class TaskParams(types.RequestParams):
    task_id: str


class GetTaskRequest(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    # SEP-2663: `Mcp-Name` carries the task's id, so a balancer can route to its replica.
    name_param = "taskId"


class CancelTaskRequest(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class GetTaskResult(types.Result):
    result_type: Literal["complete"]
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


async def get_task(session, task_id: str) -> GetTaskResult:
    return await session.send_request(
        GetTaskRequest(params=TaskParams(task_id=task_id)), GetTaskResult
    )


async def cancel_task(session, task_id: str) -> None:
    await session.send_request(
        CancelTaskRequest(params=TaskParams(task_id=task_id)), types.EmptyResult
    )


class TasksExtension(ClientExtension):
    """The tasks extension for `mcp.Client`: a task is polled until it ends.

    `created` holds each task's id as it is made, so a caller can cancel it meanwhile.
    """

    identifier = TASKS

    def __init__(self, deadline: float = 60.0):
        self.deadline = deadline
        self.created: list[str] = []

    def claims(self):
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self.resolve)]

    async def resolve(self, task: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
        self.created.append(task.task_id)
        interval = (task.poll_interval_ms or 500) / 1000
        ends = time.monotonic() + self.deadline
        status = task.status
        while True:
            if status not in ENDED:
                await anyio.sleep(interval)
            got = await get_task(ctx.session, task.task_id)
            status = got.status
            if status == "completed":
                assert got.result is not None, got
                return types.CallToolResult.model_validate(got.result)
            if status == "failed":
                assert got.error is not None, got
                raise MCPError(got.error["code"], got.error["message"], got.error.get("data"))
            if status == "cancelled":
                text = f"The task `{task.task_id}` of `{ctx.tool_name}` was cancelled."
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=text)], is_error=True
                )
            if status == "input_required":
                raise AssertionError(f"no test here answers a task's question: {got}")
            assert status == "working", got
            assert time.monotonic() < ends, f"the task {task.task_id} ends in time: {got}"
            interval = (got.poll_interval_ms or 500) / 1000


def processes() -> dict[int, tuple[int, bytes]]:
    """Every process now: its parent and its command line, by pid."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read()
        except OSError:
            continue  # ended meanwhile
        # The parent is the second field after the command's name, which may hold spaces.
        parent = int(stat[stat.rindex(b")") + 2 :].split()[1])
        found[int(entry)] = (parent, cmdline)
    return found


def with_descendants(found: dict[int, tuple[int, bytes]], roots: set[int]) -> set[int]:
    tree = set(roots)
    grew = True
    while grew:
        more = {pid for pid, (parent, _) in found.items() if parent in tree} - tree
        tree |= more
        grew = bool(more)
    return tree


def command_tree(marker: str):
    """Every process now, and the command's: those holding `marker` once they run `sleep`
    (none before), with their descendants."""
    found = processes()
    holders = {pid for pid, (_, line) in found.items() if marker.encode() in line}
    tree = with_descendants(found, holders)
    return (found, tree) if len(tree) > len(holders) else None


async def wait_for(condition, what: str, seconds: float = 10.0):
    ends = time.monotonic() + seconds
    while not (value := condition()):
        assert time.monotonic() < ends, f"{what} within {seconds} s"
        await anyio.sleep(0.05)
    return value


async def exercise(target) -> None:
    # A long call: a task, polled by the extension to the command's result.
    tasks = TasksExtension()
    async with Client(target, mode="auto", extensions=[tasks]) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "bash" in names, names
        done = await client.call_tool("bash", {"command": "sleep 3; echo done"})
        assert len(tasks.created) == 1, f"the long call became a task: {tasks.created}"
        assert not done.is_error, done
        assert [c.text for c in done.content if c.type == "text"] == ["done"], done
        assert done.structured_content["exitCode"] == 0, done.structured_content
        # A short call is simply answered.
        quick = await client.call_tool("bash", {"command": "echo quick"})
        assert len(tasks.created) == 1, tasks.created
        assert [c.text for c in quick.content if c.type == "text"] == ["quick"], quick

        # Another long call, cancelled while it runs: its processes end.
        marker = f"pi-tools-task-{uuid.uuid4().hex}"
        command = f"sleep 300; echo {marker}"
        outcome: dict[str, types.CallToolResult] = {}

        async def call() -> None:
            outcome["result"] = await client.call_tool("bash", {"command": command})

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(call)
                await wait_for(lambda: len(tasks.created) == 2, "the call becomes a task")
                task_id = tasks.created[1]
                found, tree = await wait_for(lambda: command_tree(marker), "the command runs")
                await cancel_task(client.session, task_id)
        result = outcome["result"]
        assert result.is_error, result
        assert "was cancelled" in result.content[0].text, result
        got = await get_task(client.session, task_id)
        assert got.status == "cancelled", got
        # Each process of the command is gone (or, were its pid reused, another command).
        await wait_for(
            lambda: not any(
                pid in tree and found[pid][1] == line
                for pid, (_, line) in processes().items()
            ),
            "the cancelled task's processes end",
        )
        # Cancelling a task that ended changes nothing.
        await cancel_task(client.session, task_id)
        assert (await get_task(client.session, task_id)).status == "cancelled"

    # Without the extension, no task: the long call is answered when it ends.
    async with Client(target, mode="auto") as client:
        plain = await client.call_tool("bash", {"command": "sleep 2; echo plain"})
        assert [c.text for c in plain.content if c.type == "text"] == ["plain"], plain


async def main(binary: str) -> None:
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "pi-tools.toml")
        with open(config, "w") as f:
            f.write(CONFIG)
        stdio = StdioServerParameters(
            command=binary, args=["--config", config, "mcp", "--cwd", work]
        )
        await exercise(stdio)
        async with http_server(binary, work, config=config) as url:
            await exercise(url)
    assert not warnings.records, warnings.records
    print(
        "the Python SDK 2.x drove MCP tasks over stdio and HTTP through its extension "
        "mechanism: a task polled to its result, one cancelled and its processes gone"
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
