"""The official MCP Python SDK as a client of `pi-tools mcp`, over stdio and over Streamable HTTP.

Run by scripts/python-sdk.sh (which installs the SDK into a virtual environment) with the
binary to test as its argument. Each check raises on a wrong answer; any warning the SDK logs
(a failed session termination, an unreadable message) fails the run too.
"""

import asyncio
import json
import logging
import os
import sys
import tempfile
import warnings
from pathlib import Path
from urllib.parse import urlsplit

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from servers import http_server


class Warnings(logging.Handler):
    """Every record of level WARNING or above the SDK logs."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(self.format(record))


async def exercise(session: ClientSession, transport: str) -> None:
    init = await session.initialize()
    assert init.server_info.name == "pi-tools", init

    tools = (await session.list_tools()).tools
    names = [tool.name for tool in tools]
    assert names == ["read", "bash", "edit", "write"], names
    # Every built-in lists its output schema; the SDK validates each structured result
    # against it (a mismatch raises), and keeps the text block beside it.
    schemas = {tool.name: tool.output_schema for tool in tools}
    assert all(schema and schema.get("type") == "object" for schema in schemas.values()), schemas
    assert schemas["read"]["required"][:2] == ["path", "kind"], schemas["read"]

    result = await session.call_tool("read", {"path": "a.txt"})
    assert not result.is_error and result.content[0].text == "hello\n", result
    structured = result.structured_content
    assert structured["kind"] == "text" and structured["totalLines"] == 1, structured
    assert structured["truncated"] is False and structured["path"].endswith("a.txt"), structured

    # A command whose output is longer than its result keeps links the whole output, which
    # the session reads back whole; the read tool cut short links the whole file.
    spilled = await session.call_tool("bash", {"command": "seq 1 30000"})
    assert not spilled.is_error, spilled
    links = [block for block in spilled.content if isinstance(block, types.ResourceLink)]
    assert len(links) == 1 and links[0].mime_type == "text/plain", spilled.content
    whole = await session.read_resource(links[0].uri)
    assert len(whole.contents) == 1, whole
    assert isinstance(whole.contents[0], types.TextResourceContents), whole
    assert whole.contents[0].text == "".join(f"{n}\n" for n in range(1, 30001))
    listed = await session.list_resources()
    assert str(listed.resources[0].uri) == str(links[0].uri), listed

    # Progress: every line of output reaches the client, in order.
    seen = []

    async def progress(value, total, message):
        if message:
            seen.append(message)

    result = await session.call_tool(
        "bash",
        {"command": "for i in 1 2 3; do echo line$i; sleep 0.2; done"},
        progress_callback=progress,
    )
    assert not result.is_error, result
    assert result.content[0].text == "line1\nline2\nline3", result
    streamed = "".join(seen)
    assert [l for l in streamed.splitlines() if l.startswith("line")] == [
        "line1",
        "line2",
        "line3",
    ], seen

    # The system prompt is offered as a prompt, for clients that show prompts.
    assert init.capabilities.prompts is not None, init.capabilities
    prompts = [p.name for p in (await session.list_prompts()).prompts]
    assert prompts == ["system_prompt"], prompts
    prompt = await session.get_prompt("system_prompt")
    text = prompt.messages[0].content.text
    assert prompt.messages[0].role == "user", prompt
    assert text.startswith("Available tools:\n- read: "), text
    assert "\n\nGuidelines:\n- " in text, text
    try:
        await session.get_prompt("no_such_prompt")
    except MCPError as err:
        assert err.error.code == -32602, err.error
        assert "system_prompt" in err.error.message, err.error.message
    else:
        raise AssertionError(f"{transport}: an unknown prompt was not refused")

    # Arguments a tool refuses are a tool result the model can correct itself from.
    result = await session.call_tool("read", {"path": 42})
    assert result.is_error, result

    # An unknown tool is a protocol error naming the tools.
    try:
        await session.call_tool("no_such_tool", {})
    except MCPError as err:
        assert err.error.code == -32602, err.error
        assert "read, bash, edit, write" in err.error.message, err.error.message
    else:
        raise AssertionError(f"{transport}: an unknown tool was not refused")


async def over_stdio(binary: str, work: str) -> None:
    params = StdioServerParameters(command=binary, args=["mcp", "--cwd", work])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await exercise(session, "stdio")


async def roots_over_stdio(binary: str, work: str) -> None:
    """The roots the client lists confine the file tools and the sandbox's writes, and a
    changed list (`notifications/roots/list_changed`) applies from the next call."""
    listed = []
    params = StdioServerParameters(command=binary, args=["mcp", "--cwd", work])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=roots_of(listed)) as session:
            await follows_roots(session, os.path.join(work, "stdio"), listed)


async def roots_over_http(binary: str, work: str) -> None:
    """Over Streamable HTTP too, the roots a client lists confine the tools (in place of the
    working directory) and follow a change."""
    listed = []
    async with http_server(binary, work) as url:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(
                read, write, list_roots_callback=roots_of(listed)
            ) as session:
                await follows_roots(session, os.path.join(work, "http"), listed)


def roots_of(listed):
    """A roots/list handler that answers with the paths in `listed` at that moment."""

    async def list_roots(context):
        return types.ListRootsResult(
            roots=[types.Root(uri=Path(path).as_uri()) for path in listed]
        )

    return list_roots


def text_of(result) -> str:
    return "".join(c.text for c in result.content if c.type == "text")


async def follows_roots(session: ClientSession, base: str, listed: list) -> None:
    """Lists one root, checks the tools keep to it, lists another, checks they follow."""
    first = os.path.join(base, "root one")
    second = os.path.join(base, "root two")
    os.makedirs(first)
    os.makedirs(second)
    listed[:] = [first]
    text = text_of
    await session.initialize()
    result = await session.call_tool(
        "write", {"path": os.path.join(first, "a.txt"), "content": "one"}
    )
    assert not result.is_error, result
    with open(os.path.join(first, "a.txt")) as f:
        assert f.read() == "one"
    # The working directory is outside the roots, so commands run in the first one.
    result = await session.call_tool("bash", {"command": "pwd"})
    assert not result.is_error and text(result) == first, result

    result = await session.call_tool(
        "write", {"path": os.path.join(second, "b.txt"), "content": "two"}
    )
    assert result.is_error, result
    assert "is outside the allowed directories (" + first in text(result), text(result)
    assert not os.path.exists(os.path.join(second, "b.txt"))
    # Commands may write in the listed roots only.
    result = await session.call_tool("bash", {"command": f"echo x > '{second}/c.txt'"})
    assert result.is_error, result
    assert not os.path.exists(os.path.join(second, "c.txt"))
    result = await session.call_tool("bash", {"command": f"echo x > '{first}/c.txt'"})
    assert not result.is_error, result

    listed[:] = [second]
    # Roots are deprecated by a protocol revision to come; clients offer them today.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await session.send_roots_list_changed()
    result = await session.call_tool(
        "write", {"path": os.path.join(second, "b.txt"), "content": "two"}
    )
    assert not result.is_error, result
    with open(os.path.join(second, "b.txt")) as f:
        assert f.read() == "two"
    result = await session.call_tool("bash", {"command": "pwd"})
    assert not result.is_error and text(result) == second, result
    result = await session.call_tool(
        "write", {"path": os.path.join(first, "d.txt"), "content": "no"}
    )
    assert result.is_error, result
    assert "is outside the allowed directories (" + second in text(result), text(result)
    assert not os.path.exists(os.path.join(first, "d.txt"))
    result = await session.call_tool("bash", {"command": f"echo x > '{first}/e.txt'"})
    assert result.is_error, result
    assert not os.path.exists(os.path.join(first, "e.txt"))


async def allowed_roots_win(binary: str, work: str) -> None:
    """With `[paths] allowed_roots` set, the client's roots are not followed."""
    allowed = os.path.join(work, "allowed")
    listed = os.path.join(work, "listed")
    os.makedirs(allowed)
    os.makedirs(listed)
    config = os.path.join(work, "pi-tools.toml")
    with open(config, "w") as f:
        f.write(f"[paths]\nallowed_roots = [{json.dumps(allowed)}]\n")

    async def list_roots(context):
        return types.ListRootsResult(roots=[types.Root(uri=Path(listed).as_uri())])

    params = StdioServerParameters(command=binary, args=["--config", config, "mcp", "--cwd", work])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, list_roots_callback=list_roots) as session:
            await session.initialize()
            result = await session.call_tool(
                "write", {"path": os.path.join(listed, "a.txt"), "content": "no"}
            )
            assert result.is_error, result
            message = result.content[0].text
            assert f"is outside the allowed directories ({allowed})" in message, result
            result = await session.call_tool(
                "write", {"path": os.path.join(allowed, "a.txt"), "content": "yes"}
            )
            assert not result.is_error, result


async def over_http(binary: str, work: str) -> None:
    # Expiry by idle time is opt-in; even then, a client whose stream for server messages
    # is open is still there, however long its person pauses.
    async with http_server(binary, work, "--session-idle-secs", "1") as url:
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(session, "http")
                await asyncio.sleep(2.5)
                result = await session.call_tool("read", {"path": "a.txt"})
                assert not result.is_error and result.content[0].text == "hello\n", result
        # Leaving the client's context sent DELETE; a refused one is logged as a warning.


def session_recorder():
    """An HTTP client for the SDK that records the session ids the server gives."""
    ids = []

    async def record(response):
        sid = response.headers.get("mcp-session-id")
        if sid and sid not in ids:
            ids.append(sid)

    client = create_mcp_http_client()
    client.event_hooks["response"].append(record)
    return client, ids


async def max_sessions_make_room(binary: str, work: str) -> None:
    """Past `[mcp] max_sessions`, set to end idle sessions when full, a new session ends
    the least recently used idle one, never one whose call is still running."""
    config = os.path.join(work, "two-sessions.toml")
    with open(config, "w") as f:
        f.write("[mcp]\nmax_sessions = 2\nwhen_full = \"end_idle\"\n")
    async with http_server(binary, work, config=config) as url:
        # The oldest session: its call runs while the others come.
        async with streamable_http_client(url) as (read, write):
            async with ClientSession(read, write) as busy:
                await busy.initialize()
                running = asyncio.create_task(
                    busy.call_tool("bash", {"command": "sleep 2; echo still here"})
                )
                await asyncio.sleep(0.5)
                # A client that goes away without DELETE leaves an idle session behind.
                gone, gone_ids = session_recorder()
                async with gone:
                    async with streamable_http_client(
                        url, http_client=gone, terminate_on_close=False
                    ) as (read2, write2):
                        async with ClientSession(read2, write2) as left:
                            await left.initialize()
                            result = await left.call_tool("read", {"path": "a.txt"})
                            assert not result.is_error, result
                assert len(gone_ids) == 1, gone_ids
                await asyncio.sleep(0.2)
                # The third session makes room: the idle one goes, not the older busy one.
                async with streamable_http_client(url) as (read3, write3):
                    async with ClientSession(read3, write3) as third:
                        await third.initialize()
                        result = await third.call_tool("read", {"path": "a.txt"})
                        assert not result.is_error, result
                        result = await running
                        assert not result.is_error, result
                        assert result.content[0].text == "still here", result
                async with create_mcp_http_client() as http:
                    response = await http.post(
                        url,
                        headers={
                            "mcp-session-id": gone_ids[0],
                            "mcp-protocol-version": "2025-06-18",
                            "accept": "application/json, text/event-stream",
                        },
                        json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"},
                    )
                    assert response.status_code == 404, response.status_code


class CuttingProxy:
    """A TCP proxy in front of the server that cuts the connection carrying a request whose
    body holds `marker`, `after` seconds later (a proxy that drops a long stream)."""

    def __init__(self, upstream: str, marker: bytes, after: float):
        self.upstream = urlsplit(upstream)
        self.marker = marker
        self.after = after
        self.cut = False

    async def __aenter__(self):
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        port = self.server.sockets[0].getsockname()[1]
        return self.upstream._replace(netloc=f"127.0.0.1:{port}").geturl()

    async def __aexit__(self, *exc):
        self.server.close()

    async def handle(self, client_in, client_out):
        server_in, server_out = await asyncio.open_connection(
            self.upstream.hostname, self.upstream.port
        )

        async def cut_later():
            await asyncio.sleep(self.after)
            client_out.transport.abort()
            server_out.transport.abort()

        async def pump(source, sink, watch):
            try:
                while data := await source.read(65536):
                    if watch and not self.cut and self.marker in data:
                        self.cut = True
                        asyncio.get_running_loop().create_task(cut_later())
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                sink.transport.abort()

        await asyncio.gather(
            pump(client_in, server_out, True), pump(server_in, client_out, False)
        )


async def resumes_after_a_cut(binary: str, work: str) -> None:
    """A connection cut mid-call: the SDK reconnects with `Last-Event-ID` and gets the
    call's result."""
    async with http_server(binary, work) as url:
        proxy = CuttingProxy(url, b"resumed after the cut", after=0.5)
        async with proxy as through:
            async with streamable_http_client(through) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    result = await session.call_tool(
                        "bash", {"command": "sleep 1.5; echo 'resumed after the cut'"}
                    )
                    assert proxy.cut, "the proxy never cut the call's connection"
                    assert not result.is_error, result
                    assert result.content[0].text == "resumed after the cut", result


async def piped_then_end_of_input(binary: str, work: str) -> None:
    """`printf '%s\\n' "$INIT" "$CALL" ... | pi-tools mcp`: every request read before the end
    of input is answered (the answers read with the SDK's types), then the server exits."""
    requests = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "write", "arguments": {"path": "piped.txt", "content": "piped\n"}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "bash", "arguments": {"command": "sleep 0.5; echo late"}}},
    ]
    server = await asyncio.create_subprocess_exec(
        binary, "mcp", "--cwd", work,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    piped = "".join(json.dumps(r) + "\n" for r in requests).encode()
    out, _ = await asyncio.wait_for(server.communicate(piped), 30)
    assert server.returncode == 0, server.returncode
    answers = {}
    for line in out.decode().splitlines():
        message = types.jsonrpc_message_adapter.validate_json(line)
        assert isinstance(message, types.JSONRPCResponse), message
        answers[message.id] = message.result
    assert sorted(answers) == [0, 1, 2], answers
    assert types.InitializeResult.model_validate(answers[0]).server_info.name == "pi-tools"
    for id, text in ((1, None), (2, "late")):
        result = types.CallToolResult.model_validate(answers[id])
        assert not result.is_error, result
        if text:
            assert result.content[0].text == text, result
    with open(os.path.join(work, "piped.txt")) as f:
        assert f.read() == "piped\n"


async def main(binary: str) -> None:
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    with tempfile.TemporaryDirectory() as work:
        with open(os.path.join(work, "a.txt"), "w") as f:
            f.write("hello\n")
        await over_stdio(binary, work)
        await roots_over_stdio(binary, work)
        await allowed_roots_win(binary, work)
        await over_http(binary, work)
        await roots_over_http(binary, work)
        await max_sessions_make_room(binary, work)
        await resumes_after_a_cut(binary, work)
        await piped_then_end_of_input(binary, work)
    assert not warnings.records, "the SDK logged warnings:\n" + "\n".join(warnings.records)
    print(
        "python-sdk: stdio and Streamable HTTP sessions behave as the SDK expects,"
        " client roots confine the tools, a spilled output is a resource link read back whole,"
        " max_sessions set to end idle sessions ends the least recently used idle one,"
        " a call whose connection was cut is resumed, and piped requests are all answered"
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
