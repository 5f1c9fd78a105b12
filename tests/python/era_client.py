"""The official MCP Python SDK 2.x as a client of MCP 2026-07-28: `mcp.Client` in its
`auto` mode probes `server/discover`, takes the 2026-07-28 offer of `pi-tools mcp` over
stdio and over Streamable HTTP, and then gets the policy's question through its elicitation
callback and gives its roots through its roots callback, both as input-required results of
the call: an answered question lets the write run, and a write outside the roots fails.
And in the same era it starts a background job with bash and reads it to its end with
job_output in later requests (over HTTP they are served by the server's stateless house,
which keeps the job).

Usage: python era_client.py BINARY
"""

import asyncio
import logging
import os
import sys
import tempfile

from mcp import Client, StdioServerParameters, types

from sdk_client import Warnings, http_server

CONFIG = """[[policy.rule]]
tool = "write"
decision = "ask"
reason = "A person decides what is written."
"""


async def exercise(target, work: str) -> None:
    inside = os.path.join(work, "inside")
    os.makedirs(inside, exist_ok=True)
    seen = {"asked": 0, "roots": 0}

    async def elicitation(context, params):
        seen["asked"] += 1
        return types.ElicitResult(action="accept", content={"answer": "allow_once"})

    async def roots(context):
        seen["roots"] += 1
        return types.ListRootsResult(roots=[types.Root(uri=f"file://{inside}", name="inside")])

    async with Client(
        target, mode="auto", elicitation_callback=elicitation, list_roots_callback=roots
    ) as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        names = [tool.name for tool in (await client.list_tools()).tools]
        assert "write" in names, names
        outside = os.path.join(work, "outside.txt")
        refused = await client.call_tool("write", {"path": outside, "content": "x"})
        assert refused.is_error, refused
        assert not os.path.exists(outside), "a write outside the roots failed"
        written = await client.call_tool(
            "write", {"path": os.path.join(inside, "a.txt"), "content": "x"}
        )
        assert not written.is_error, written
        assert os.path.exists(os.path.join(inside, "a.txt"))
    assert seen["asked"] >= 1 and seen["roots"] >= 1, seen


JOBS = """[tools]
active = ["bash", "job_output", "job_input", "job_kill", "job_list"]
"""


async def jobs(target) -> None:
    """A 2026-07-28 client starts a job in one request and reads it in the next ones."""
    async with Client(target, mode="auto") as client:
        assert client.protocol_version == "2026-07-28", client.protocol_version
        started = await client.call_tool(
            "bash",
            {"command": "for i in 1 2 3; do echo tick $i; sleep 0.2; done", "background": True},
        )
        assert not started.is_error, started
        job = started.structured_content["job"]
        assert isinstance(job, int), started.structured_content
        seen = ""
        for _ in range(50):
            read = await client.call_tool("job_output", {"job": job, "wait": 2})
            assert not read.is_error, read
            seen += "".join(c.text for c in read.content if c.type == "text")
            if f"Job {job} exited with code 0" in seen:
                break
        assert "tick 1" in seen and "tick 3" in seen, seen
        assert f"Job {job} exited with code 0" in seen, seen


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
        await exercise(stdio, work)
        with open(config, "w") as f:
            f.write(JOBS)
        await jobs(stdio)
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "pi-tools.toml")
        with open(config, "w") as f:
            f.write(CONFIG)
        async with http_server(binary, work, config=config) as url:
            await exercise(url, work)
    with tempfile.TemporaryDirectory() as work:
        config = os.path.join(work, "pi-tools.toml")
        with open(config, "w") as f:
            f.write(JOBS)
        async with http_server(binary, work, config=config) as url:
            await jobs(url)
    assert not warnings.records, warnings.records
    print(
        "the Python SDK 2.x spoke MCP 2026-07-28 over stdio and HTTP: asked, confined, "
        "a job started and read"
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
