// The TypeScript SDK v2 client (@modelcontextprotocol/client, installed by
// scripts/install-node-tools.sh) listens for tool list changes in the 2026-07-28 era
// (`client.listen`, i.e. `subscriptions/listen`) against `pi-tools mcp` mounting
// tests/mount/changing_server.py. Run by tests/mount/listening.rs:
//   NODE_TOOLS=target/node-tools node listen_client.mjs TARGET
// where TARGET is a URL or `stdio:BINARY:CWD:CONFIG`.
// Prints one JSON object: the era, the filter the server honored, how many
// notifications/tools/list_changed came after `grow`, the tools listed then, and how the
// subscription ended once closed.
import { pathToFileURL } from 'node:url';

const dist = `${process.env.NODE_TOOLS}/node_modules/@modelcontextprotocol/client/dist`;
const { Client, StreamableHTTPClientTransport } = await import(
  pathToFileURL(`${dist}/index.mjs`).href
);
const { StdioClientTransport } = await import(pathToFileURL(`${dist}/stdio.mjs`).href);

const [target] = process.argv.slice(2);
const client = new Client(
  { name: 'pi-tools-listen-test', version: '0' },
  { capabilities: {}, versionNegotiation: { mode: 'auto' } },
);
let told = 0;
let heard;
const changed = new Promise((resolve) => {
  heard = resolve;
});
client.setNotificationHandler('notifications/tools/list_changed', () => {
  told += 1;
  heard();
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
await client.connect(transport);
const version = client.getNegotiatedProtocolVersion();
const subscription = await client.listen({
  toolsListChanged: true,
  promptsListChanged: true,
  resourcesListChanged: true,
});
const honored = subscription.honoredFilter;
const grown = await client.callTool({ name: 'changing__grow', arguments: {} });
let timer;
const timeout = new Promise((resolve) => {
  timer = setTimeout(() => resolve('timed out'), 30000);
});
const waited = await Promise.race([changed.then(() => 'told'), timeout]);
clearTimeout(timer);
const toolsAfter = (await client.listTools()).tools.map((t) => t.name);
await subscription.close();
const closed = await subscription.closed;
console.log(
  JSON.stringify({
    version,
    honored,
    grown: grown.content?.[0]?.text,
    waited,
    told,
    toolsAfter,
    closed,
  }),
);
await client.close();
