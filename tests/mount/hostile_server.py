"""An MCP server over stdio that misbehaves on request, for the gateway's limits.

Tools: `echo` (answers), `big` (answers with `count` elements of structured content,
`width` bytes each), `flood` (stops reading its input and sends pings without end),
`progress` (sends progress for its own call, or with `steal` for every other call it
has seen, or for the `tokens` given, then answers after `wait` seconds, and with `linger`
goes on sending to every call it sees for that long), `spawn` (starts `sleep <tag>` as a child, and as a double-forked child in a
session of its own, then answers), `hang` (never answers). It ignores SIGTERM, and
`stubborn` makes it ignore the end of its input too.
"""

import json
import os
import signal
import sys
import threading
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
out_lock = threading.Lock()
stubborn = False
# The progress tokens of every call received.
SEEN = []


def send(message):
    data = (json.dumps(message) + "\n").encode()
    with out_lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def answer(id_, result):
    send({"jsonrpc": "2.0", "id": id_, "result": result})


def text(id_, value):
    answer(id_, {"content": [{"type": "text", "text": value}], "isError": False})


TOOLS = [
    {"name": name, "description": name, "inputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}}
    for name in ["echo", "big", "flood", "progress", "spawn", "hang", "stubborn"]
]


def call(id_, name, args, meta):
    global stubborn
    if name == "echo":
        text(id_, str(args.get("text", "")))
    elif name == "big":
        width = int(args.get("width", 1))
        item = 0 if width == 1 else "x" * width
        content = [item] * int(args["count"])
        answer(id_, {"content": [{"type": "text", "text": "big"}],
                     "structuredContent": {"items": content}, "isError": False})
    elif name == "flood":
        # Never reads again: its input fills up with the answers to its pings.
        n = 0
        while True:
            n += 1
            send({"jsonrpc": "2.0", "id": "ping-%d" % n, "method": "ping"})
    elif name == "progress":
        # With `steal`, progress goes to every other call's token it has seen instead.
        own = meta.get("progressToken")
        if "tokens" in args:
            tokens = args["tokens"]
        elif args.get("steal"):
            tokens = [t for t in SEEN if t != own]
        else:
            tokens = [own]
        for token in tokens:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": 1,
                             "message": "own" if tokens == [own] else "stolen"}})
        time.sleep(float(args.get("wait", 0)))
        text(id_, "done")
        # With `linger`, it goes on after its answer: every call it sees from then on gets
        # progress too, for that many seconds.
        deadline = time.time() + float(args.get("linger", 0))
        while time.time() < deadline:
            for token in [t for t in SEEN if t != own]:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": 1, "message": "stolen"}})
            time.sleep(0.02)
    elif name == "spawn":
        tag = str(args["tag"])
        pid = os.fork()
        if pid == 0:
            os.execvp("sleep", ["sleep", tag])
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", tag])
            os._exit(0)
        os.waitpid(pid, 0)
        text(id_, "spawned")
    elif name == "stubborn":
        stubborn = True
        text(id_, "stubborn")
    elif name == "hang":
        pass


def main():
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        id_ = message.get("id")
        if method == "initialize":
            answer(id_, {"protocolVersion": message["params"]["protocolVersion"],
                         "capabilities": {"tools": {}},
                         "serverInfo": {"name": "hostile", "version": "1"}})
        elif method == "tools/list":
            answer(id_, {"tools": TOOLS})
        elif method == "tools/call":
            params = message["params"]
            meta = params.get("_meta") or {}
            if "progressToken" in meta:
                SEEN.append(meta["progressToken"])
            args = (id_, params["name"], params.get("arguments") or {}, meta)
            if params["name"] == "flood":
                # On this thread: nothing reads the input any more.
                call(*args)
            threading.Thread(target=call, daemon=True, args=args).start()
    while stubborn:
        time.sleep(1)


main()
