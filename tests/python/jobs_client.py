"""The official MCP Python SDK drives background jobs through `pi-tools mcp`, over stdio and
over Streamable HTTP: bash hands back a running command as a job (its id in the structured
result too), job_output reads its new output and how it ended, job_input drives an
interactive program (a Python REPL on a pty), job_list lists the jobs, job_kill ends one;
and the jobs end with the session: when the client goes, no process of theirs is left.

Usage: python jobs_client.py BINARY
"""

import asyncio
import os
import re
import sys
import tempfile

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

# The HTTP server and the text of a result, as the main SDK test starts and reads them.
from sdk_client import http_server, text_of

CONFIG = """[tools]
active = ["bash", "job_output", "job_input", "job_kill", "job_list"]
"""


def processes_with(marker: str) -> list[int]:
    """The processes whose command line holds `marker` (read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


async def drive(session: ClientSession, transport: str, marker: str) -> None:
    await session.initialize()
    names = [tool.name for tool in (await session.list_tools()).tools]
    assert names == ["bash", "job_output", "job_input", "job_kill", "job_list"], names

    # A command handed back at once, then read until it ends.
    started = await session.call_tool(
        "bash",
        {"command": "for i in 1 2 3; do echo tick $i; sleep 0.2; done", "background": True},
    )
    assert not started.is_error, started
    job = started.structured_content["job"]
    assert isinstance(job, int), started.structured_content
    assert f"Job {job} is still running" in text_of(started), text_of(started)
    seen = ""
    for _ in range(50):
        read = await session.call_tool("job_output", {"job": job, "wait": 2})
        assert not read.is_error, read
        seen += text_of(read)
        if "exited with code 0" in seen or "exit code 0" in seen:
            break
    assert "tick 1" in seen and "tick 3" in seen, seen
    assert re.search(r"exit(ed with)? code 0", seen), seen

    # An interactive program on a pseudo-terminal, driven through its input.
    repl = await session.call_tool(
        "bash",
        {"command": f"python3 -q -i -c 'import sys; tag = \"{marker}\"'", "pty": True, "background": True},
    )
    assert not repl.is_error, repl
    repl_job = repl.structured_content["job"]
    answer = await session.call_tool("job_input", {"job": repl_job, "input": "print(6 * 7)\n", "wait": 5})
    assert not answer.is_error, answer
    # The answer may come after the echo of the line (the REPL starting on a loaded
    # machine): read on, as a model would.
    said = text_of(answer)
    for _ in range(20):
        if re.search(r"^42\s*$", said, re.M):
            break
        more = await session.call_tool("job_output", {"job": repl_job, "wait": 2})
        said += text_of(more)
    assert re.search(r"^42\s*$", said, re.M), said

    # A long one left running, to be ended with the session.
    sleeper = f"python3 -c 'import time; time.sleep(300)' {marker}"
    slept = await session.call_tool("bash", {"command": sleeper, "background": True})
    assert not slept.is_error, slept

    listed = await session.call_tool("job_list", {})
    assert not listed.is_error, listed
    listing = text_of(listed)
    assert str(repl_job) in listing and "running" in listing, listing

    ended = await session.call_tool("job_kill", {"job": repl_job})
    assert not ended.is_error, ended
    assert re.search(r"signal|ended|killed|exited", text_of(ended)), text_of(ended)
    # The job's id comes back as soon as it is spawned; on a loaded machine its command may
    # not have been executed yet, so look for it for a while before saying it is missing.
    if not await appears(marker):
        # Say what the server says of the job, so a failure here can be read from its log.
        jobs = text_of(await session.call_tool("job_list", {}))
        output = text_of(await session.call_tool("job_output", {"job": slept.structured_content["job"]}))
        raise AssertionError(
            f"the sleeping job runs while its session lasts, but no process holds {marker}: "
            f"bash said {text_of(slept)!r}; job_list says {jobs!r}; its output: {output!r}"
        )
    print(f"python sdk: jobs started, read, driven, listed and ended over {transport}")


async def appears(marker: str) -> bool:
    """Whether a process whose command line holds `marker` shows up within 10 seconds."""
    for _ in range(100):
        if processes_with(marker):
            return True
        await asyncio.sleep(0.1)
    return False


async def gone(marker: str) -> None:
    """No process of the session's jobs is left once its session ended."""
    for _ in range(50):
        if not processes_with(marker):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"jobs outlived their session: {processes_with(marker)}")


async def main(binary: str) -> None:
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "pi-tools.toml")
        with open(config, "w") as f:
            f.write(CONFIG)

        marker = f"pi-tools-jobs-stdio-{os.getpid()}"
        params = StdioServerParameters(command=binary, args=["--config", config, "mcp", "--cwd", work])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await drive(session, "stdio", marker)
        await gone(marker)

        marker = f"pi-tools-jobs-http-{os.getpid()}"
        async with http_server(binary, work, config=config) as url:
            async with streamable_http_client(url) as (read, write):
                async with ClientSession(read, write) as session:
                    await drive(session, "http", marker)
            # The client's DELETE ended the session, and with it its jobs; the server runs on.
            await gone(marker)
    print("python sdk: every job ended with its session, over stdio and over HTTP")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
