// The TypeScript SDK v1 of today (@modelcontextprotocol/sdk 1.32, the newest 1.x; installed
// by scripts/install-node-tools.sh) as a client of `pi-tools mcp`. It knows 2025-11-25
// sessions only. Run by tests/mcp_sdk_v1.rs:
//   NODE_TOOLS=target/node-tools SLEEP_TAG=TAG node v1_client.mjs TARGET
// where TARGET is a URL or `stdio:BINARY:CWD:CONFIG`, the configuration asking before bash's
// `touch` and CWD holding `a.txt`.
//
// It initializes, lists the tools, reads `a.txt`, and calls bash's `touch accepted.txt` and
// `touch declined.txt`, its elicitation handler accepting the first question and declining
// the second. Then the tasks of 2025-11-25 through `client.experimental.tasks`: a call
// streamed as a task (created, polled with tasks/get, its result from tasks/result), and a
// task running `sleep TAG` cancelled with tasks/cancel, its processes looked for in /proc
// before and after. Prints one JSON object: the negotiated version, the server's name, the
// tools' names, the read's text, the questions asked, both calls' results, and the tasks'.
import { readdirSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const dist = `${process.env.NODE_TOOLS}/node_modules/@modelcontextprotocol/sdk/dist/esm`;
const load = (path) => import(pathToFileURL(`${dist}/${path}`).href);
const { Client } = await load('client/index.js');
const { StdioClientTransport } = await load('client/stdio.js');
const { StreamableHTTPClientTransport } = await load('client/streamableHttp.js');
const { ElicitRequestSchema } = await load('types.js');

const [target] = process.argv.slice(2);
const tag = process.env.SLEEP_TAG;

const client = new Client(
  { name: 'pi-tools-v1-test', version: '0' },
  { capabilities: { elicitation: { form: {} } } },
);
const asked = [];
const answers = [
  { action: 'accept', content: { answer: 'allow_once' } },
  { action: 'decline' },
];
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.push({
    message: request.params.message,
    choices: request.params.requestedSchema.properties.answer.oneOf.map((c) => c.const),
  });
  return answers.shift();
});

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
// The version the server's initialize result names (the SDK chains this observer).
let version;
transport.onmessage = (message) => {
  if (message?.result?.protocolVersion) version = message.result.protocolVersion;
};
await client.connect(transport);

const text = (result) => ({ isError: result.isError ?? false, text: result.content[0]?.text });
const tools = (await client.listTools()).tools.map((tool) => tool.name);
const read = await client.callTool({ name: 'read', arguments: { path: 'a.txt' } });
const accepted = await client.callTool({ name: 'bash', arguments: { command: 'touch accepted.txt' } });
const declined = await client.callTool({ name: 'bash', arguments: { command: 'touch declined.txt' } });

// The live (not zombie) processes whose command line holds the argument `tag`.
const alive = (tag) =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
        const state = readFileSync(`/proc/${pid}/stat`, 'latin1').split(')').pop().trim()[0];
        return args.includes(tag) && state !== 'Z';
      } catch {
        return false;
      }
    });
// Waits until `check()` holds, at most `ms`; whether it did.
const until = async (check, ms) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
};
const tasks = client.experimental.tasks;
const taskSupport = (await client.listTools()).tools.map((tool) => tool.execution?.taskSupport);
const streamed = [];
for await (const message of tasks.callToolStream({ name: 'bash', arguments: { command: 'echo streamed' } })) {
  if (message.type === 'result') {
    const related = message.result._meta?.['io.modelcontextprotocol/related-task']?.taskId;
    streamed.push({ type: 'result', ...text(message.result), related });
  } else if (message.type === 'error') {
    streamed.push({ type: 'error', message: message.error.message });
  } else {
    streamed.push({ type: message.type, taskId: message.task.taskId, status: message.task.status });
  }
}
const sleeping = tasks.callToolStream({ name: 'bash', arguments: { command: `sleep ${tag}` } });
const created = (await sleeping.next()).value;
const ran = await until(() => alive(tag).length > 0, 10000);
const cancelled = await tasks.cancelTask(created.task.taskId);
const ended = await until(() => alive(tag).length === 0, 5000);
const got = await tasks.getTask(created.task.taskId);
await sleeping.return();

console.log(
  JSON.stringify({
    version,
    server: client.getServerVersion().name,
    tools,
    read: { ...text(read), totalLines: read.structuredContent?.totalLines },
    asked,
    accepted: text(accepted),
    declined: text(declined),
    tasks: {
      offered: client.getServerCapabilities().tasks,
      taskSupport,
      streamed,
      cancel: {
        created: created.type,
        ran,
        cancelled: cancelled.status,
        ended,
        got: got.status,
      },
    },
  }),
);
if (transport.terminateSession) await transport.terminateSession();
await client.close();
