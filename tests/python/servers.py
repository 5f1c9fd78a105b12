"""The servers the SDK checks start over HTTP: `pi-tools mcp --http` and the conformance
fixture server, each on a free port, yielding the URL it says it serves on.

It imports no MCP SDK, so the checks of the 2.x SDK and of the 1.x SDK (each in an
environment of its own) share it.
"""

import asyncio
import contextlib


@contextlib.asynccontextmanager
async def listening(args: list[str], says: str, what: str):
    """Starts `args` and yields what follows `says` on the stderr line that starts with it
    (within 30 s); ends the process afterwards. `what` names it in the error."""
    server = await asyncio.create_subprocess_exec(
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        url = None
        while url is None:
            line = await asyncio.wait_for(server.stderr.readline(), 30)
            if not line:
                raise AssertionError(f"{what} ended without saying where it listens")
            text = line.decode().strip()
            if text.startswith(says):
                url = text.removeprefix(says)
        yield url
    finally:
        server.terminate()
        await server.wait()


def http_server(binary: str, work: str, *args: str, config: str | None = None):
    """`pi-tools mcp --http` on a free port with `args` (and `--config`); yields its URL."""
    return listening(
        [
            binary,
            *(["--config", config] if config else []),
            "mcp",
            *args,
            "--http",
            "127.0.0.1:0",
            "--cwd",
            work,
        ],
        "pi-tools: serving MCP on ",
        "the HTTP server",
    )


def fixture_server(binary: str):
    """The conformance fixture server on a free port; yields its URL."""
    return listening([binary, "127.0.0.1:0"], "conformance server on ", "the fixture server")
