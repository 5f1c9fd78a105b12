// The TypeScript SDK v2 client (@modelcontextprotocol/client, installed by
// scripts/install-node-tools.sh) drives the 2025-11-25 specification's own tasks against
// `pi-tools mcp`, in its default (legacy) negotiation and without declaring the tasks
// extension, so the server offers them (`capabilities.tasks`). Run by
// tests/mcp_http_sdk_v2_tasks.rs:
//   NODE_TOOLS=target/node-tools TASK_MARKER=WORD node tasks_2025_client.mjs TARGET
// where TARGET is a URL or `stdio:BINARY:CWD`, and WORD is put in the command line of the
// call that is cancelled (and in no other: so not in this script's arguments).
//
// The SDK has no task client, and its `callTool` refuses the task a `tools/call` with
// `params.task` is answered with (INVALID_RESULT: the body has `task` and no `content`). But
// its `client.request()` sends `params.task` as it is and checks no capability for the
// tasks' methods, and the SDK exports the 2025-11-25 result schemas (`specTypeSchemas
// .CreateTaskResult`, `GetTaskResult`, `GetTaskPayloadResult`, `ListTasksResult`,
// `CancelTaskResult`); so every request here goes through `client.request()` with the
// schema of its result, and nothing reads the transport's messages.
//
// Prints one JSON object: the era and the server's `capabilities.tasks`; the finished task
// (the task created, its statuses polled, its `tasks/result`); the cancelled one (its task,
// the processes that held the marker before `tasks/cancel` with their descendants, the
// cancel's answer, its status after, whether those processes ended within the deadline);
// what `tasks/list` gave; and how `callTool` refused a task.
import { pathToFileURL } from 'node:url';
import { described, ended, markedTree } from './processes.mjs';

const dist = `${process.env.NODE_TOOLS}/node_modules/@modelcontextprotocol/client/dist`;
const { Client, StreamableHTTPClientTransport, specTypeSchemas } = await import(
  pathToFileURL(`${dist}/index.mjs`).href
);
const { StdioClientTransport } = await import(pathToFileURL(`${dist}/stdio.mjs`).href);

const [target] = process.argv.slice(2);
const marker = process.env.TASK_MARKER;

const client = new Client({ name: 'pi-tools-tasks-2025-test', version: '0' });
let transport;
if (target.startsWith('stdio:')) {
  const [binary, cwd] = target.slice('stdio:'.length).split(':');
  transport = new StdioClientTransport({ command: binary, args: ['mcp', '--cwd', cwd], cwd });
} else {
  transport = new StreamableHTTPClientTransport(new URL(target));
}
await client.connect(transport);
const version = client.getNegotiatedProtocolVersion();

const {
  CreateTaskResult,
  GetTaskResult,
  GetTaskPayloadResult,
  ListTasksResult,
  CancelTaskResult,
} = specTypeSchemas;
// A bash call with `params.task`: answered at once with its task.
const callAsTask = async (command) =>
  (
    await client.request(
      { method: 'tools/call', params: { name: 'bash', arguments: { command }, task: {} } },
      CreateTaskResult,
    )
  ).task;
const getTask = (taskId) => client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResult);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Polls the task until it is no longer working (at its poll interval, within a deadline);
// returns every status seen.
const poll = async (task) => {
  const statuses = [task.status];
  const deadline = Date.now() + 60_000;
  let got = task;
  while (got.status === 'working' && Date.now() < deadline) {
    await sleep(got.pollInterval ?? 500);
    got = await getTask(task.taskId);
    statuses.push(got.status);
  }
  return statuses;
};

// A long call: a task, polled to its end, whose result `tasks/result` gives.
const long = await callAsTask('sleep 2; echo done');
const statuses = await poll(long);
const result = await client.request(
  { method: 'tasks/result', params: { taskId: long.taskId } },
  GetTaskPayloadResult,
);

// Another, cancelled while it runs: its processes end.
const running = await callAsTask(`sleep 300; echo ${marker}`);
const seen = await markedTree(marker);
const statusBefore = (await getTask(running.taskId)).status;
const cancel = await client.request(
  { method: 'tasks/cancel', params: { taskId: running.taskId } },
  CancelTaskResult,
);
const after = await getTask(running.taskId);
const gone = await ended(seen);

const listed = await client.request({ method: 'tasks/list', params: {} }, ListTasksResult);

// What `callTool` makes of the same answer (its call becomes a task the client never learns
// of; it is made last, so that `tasks/list` above holds only the two tasks).
let refused;
try {
  const answer = await client.callTool({ name: 'bash', arguments: { command: 'true' }, task: {} });
  refused = { answered: answer };
} catch (err) {
  refused = { code: err.code };
}

console.log(
  JSON.stringify({
    version,
    tasks: client.getServerCapabilities()?.tasks,
    finished: { task: long, statuses, result },
    cancelled: {
      task: running,
      processes: described(seen),
      statusBefore,
      cancel,
      status: after.status,
      ended: gone,
    },
    listed: listed.tasks.map(({ taskId, status }) => ({ taskId, status })),
    refused,
  }),
);
await client.close();
