// The TypeScript SDK v2 client (@modelcontextprotocol/client, installed by
// scripts/install-node-tools.sh) reads typed results and drives background jobs through
// `pi-tools mcp`. Run by tests/mcp_http_sdk_v2.rs:
//   NODE_TOOLS=target/node-tools node jobs_client.mjs TARGET MODE
// where TARGET is a URL or `stdio:BINARY:CWD:CONFIG`, and MODE the client's version
// negotiation (`legacy` for 2025-11-25, `auto` to take the server's 2026-07-28 offer).
// Prints one JSON object: the era, bash's output schema as listed, a finished command's
// structured result, and the job a background command became with what reading it gave.
import { pathToFileURL } from 'node:url';

const dist = `${process.env.NODE_TOOLS}/node_modules/@modelcontextprotocol/client/dist`;
const { Client, StreamableHTTPClientTransport } = await import(
  pathToFileURL(`${dist}/index.mjs`).href
);
const { StdioClientTransport } = await import(pathToFileURL(`${dist}/stdio.mjs`).href);

const [target, mode] = process.argv.slice(2);
const client = new Client(
  { name: 'pi-tools-jobs-test', version: '0' },
  { capabilities: {}, versionNegotiation: { mode } },
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
await client.connect(transport);
const version = client.getNegotiatedProtocolVersion();
const bash = (await client.listTools()).tools.find((t) => t.name === 'bash');
const text = (result) =>
  result.content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');

// A finished command: the SDK checks structuredContent against the listed outputSchema.
const finished = await client.callTool({ name: 'bash', arguments: { command: 'echo typed' } });

// A background command, read until it ends.
const started = await client.callTool({
  name: 'bash',
  arguments: { command: 'for i in 1 2 3; do echo tick $i; sleep 0.2; done', background: true },
});
const job = started.structuredContent?.job;
let read = '';
let readError = null;
for (let i = 0; !started.isError && i < 30 && !/exit(ed with)? code 0/.test(read); i++) {
  const more = await client.callTool({ name: 'job_output', arguments: { job, wait: 2 } });
  if (more.isError) {
    readError = text(more);
    break;
  }
  read += text(more);
}
console.log(
  JSON.stringify({
    version,
    outputSchema: bash.outputSchema,
    finished: { isError: finished.isError, structured: finished.structuredContent, text: text(finished) },
    started: { isError: started.isError, structured: started.structuredContent, text: text(started) },
    job,
    read,
    readError,
  }),
);
await client.close();
