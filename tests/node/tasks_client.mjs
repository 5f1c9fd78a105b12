// The TypeScript SDK v2 client (@modelcontextprotocol/client, installed by
// scripts/install-node-tools.sh) drives MCP tasks (the `io.modelcontextprotocol/tasks`
// extension of 2026-07-28) against `pi-tools mcp`, in its `auto` negotiation mode. Run by
// tests/mcp_http_sdk_v2_tasks.rs:
//   NODE_TOOLS=target/node-tools TASK_MARKER=WORD node tasks_client.mjs TARGET
// where TARGET is a URL or `stdio:BINARY:CWD:CONFIG`, and WORD is put in the command line
// of the call that is cancelled (and in no other: so not in this script's arguments). The
// server must make a task of a call past a second (and of no call shorter).
//
// The SDK has no task client: it declares the extension (ClientOptions.capabilities
// .extensions), and sends `tasks/get` and `tasks/cancel` through `client.request()` with a
// result schema of the caller's (the two SEP-2663 names it admits on 2026-07-28), but
// `callTool` refuses a `resultType: "task"` answer with UNSUPPORTED_RESULT_TYPE and keeps
// only that type, not the task. So the task's id is read from the answer by an observer
// set as the transport's `onmessage` before `connect()` (the SDK chains such a handler,
// and sees every message as before).
//
// Prints one JSON object: the era; the finished task (how the call was refused, the task,
// its statuses, its result); and the cancelled one (its task, the processes that held the
// marker before `tasks/cancel` with their descendants, its status after, whether those
// processes ended within the deadline).
import { pathToFileURL } from 'node:url';
import { described, ended, markedTree } from './processes.mjs';

const dist = `${process.env.NODE_TOOLS}/node_modules/@modelcontextprotocol/client/dist`;
const { Client, StreamableHTTPClientTransport } = await import(
  pathToFileURL(`${dist}/index.mjs`).href
);
const { StdioClientTransport } = await import(pathToFileURL(`${dist}/stdio.mjs`).href);

const TASKS = 'io.modelcontextprotocol/tasks';
const [target] = process.argv.slice(2);
const marker = process.env.TASK_MARKER;

const client = new Client(
  { name: 'pi-tools-tasks-test', version: '0' },
  { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } },
);
let transport;
if (target.startsWith('stdio:')) {
  const [binary, cwd, config] = target.slice('stdio:'.length).split(':');
  transport = new StdioClientTransport({
    command: binary,
    args: ['mcp', '--cwd', cwd, '--config', config],
    cwd,
  });
} else {
  transport = new StreamableHTTPClientTransport(new URL(target));
}
// Every task the server answered with, in order.
const answered = [];
transport.onmessage = (message) => {
  if (message?.result?.resultType === 'task') answered.push(message.result);
};
await client.connect(transport);
const version = client.getNegotiatedProtocolVersion();

// A Standard Schema (what `client.request()` takes for a method it has no schema of) that
// accepts an object result.
const objectResult = {
  '~standard': {
    version: 1,
    vendor: 'pi-tools-test',
    validate: (value) =>
      typeof value === 'object' && value !== null
        ? { value }
        : { issues: [{ message: 'a result object' }] },
  },
};
const getTask = (taskId) =>
  client.request({ method: 'tasks/get', params: { taskId } }, objectResult);
const cancelTask = (taskId) =>
  client.request({ method: 'tasks/cancel', params: { taskId } }, objectResult);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Calls bash with `command`, which must become a task: returns how callTool was refused
// and the task the server answered with.
const callAsTask = async (command) => {
  const before = answered.length;
  try {
    const result = await client.callTool({ name: 'bash', arguments: { command } });
    throw new Error(`the call was answered without a task: ${JSON.stringify(result)}`);
  } catch (err) {
    if (answered.length !== before + 1) throw err;
    return {
      refused: { code: err.code, resultType: err.data?.resultType },
      task: answered[answered.length - 1],
    };
  }
};

// Polls the task until it is no longer working (at its poll interval, within a deadline);
// returns every status seen and the last answer.
const poll = async (task) => {
  const statuses = [task.status];
  const deadline = Date.now() + 60_000;
  let got = task;
  while (got.status === 'working' && Date.now() < deadline) {
    await sleep(got.pollIntervalMs ?? 500);
    got = await getTask(task.taskId);
    statuses.push(got.status);
  }
  return { statuses, last: got };
};

// A long call: a task, polled to the command's output.
const long = await callAsTask('sleep 3; echo done');
const { statuses, last } = await poll(long.task);
const finished = { ...long, statuses, result: last.result };

// Another, cancelled while it runs: its processes end.
const running = await callAsTask(`sleep 300; echo ${marker}`);
const seen = await markedTree(marker);
const statusBefore = (await getTask(running.task.taskId)).status;
const ack = await cancelTask(running.task.taskId);
const after = await getTask(running.task.taskId);
const gone = await ended(seen);
// Cancelling a task that ended changes nothing.
const again = await cancelTask(running.task.taskId);
const stays = (await getTask(running.task.taskId)).status;

console.log(
  JSON.stringify({
    version,
    finished,
    cancelled: {
      ...running,
      processes: described(seen),
      statusBefore,
      ack,
      status: after.status,
      ended: gone,
      again,
      stays,
    },
  }),
);
await client.close();
