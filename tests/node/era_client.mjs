// The TypeScript SDK v2 client (@modelcontextprotocol/client, installed by
// scripts/install-node-tools.sh) against `pi-tools mcp --http`, in its `auto` negotiation
// mode: it takes the server's 2026-07-28 offer, so its questions (a policy `ask`) and its
// roots travel as input-required results. Run by tests/mcp_http_sdk_v2.rs:
//   NODE_TOOLS=target/node-tools node era_client.mjs URL INSIDE_DIR OUTSIDE_FILE INSIDE_FILE
// where URL may be `stdio:BINARY:CWD:CONFIG` to start `BINARY mcp` over stdio instead.
// Prints one JSON object: the era negotiated, the tools listed, whether the person was
// asked and the roots listed, and the two writes' results.
import { pathToFileURL } from 'node:url';

// Imported from where the install script put it (an ES module ignores NODE_PATH).
const dist = `${process.env.NODE_TOOLS}/node_modules/@modelcontextprotocol/client/dist`;
const { Client, StreamableHTTPClientTransport } = await import(
  pathToFileURL(`${dist}/index.mjs`).href
);
const { StdioClientTransport } = await import(pathToFileURL(`${dist}/stdio.mjs`).href);

const [url, inside, outsideFile, insideFile] = process.argv.slice(2);
const seen = { asked: 0, rootsListed: 0 };

const client = new Client(
  { name: 'pi-tools-era-test', version: '0' },
  {
    capabilities: { elicitation: { form: {} }, roots: {} },
    versionNegotiation: { mode: 'auto' },
  },
);
client.setRequestHandler('elicitation/create', async () => {
  seen.asked += 1;
  return { action: 'accept', content: { answer: 'allow_once' } };
});
client.setRequestHandler('roots/list', async () => {
  seen.rootsListed += 1;
  return { roots: [{ uri: `file://${inside}`, name: 'inside' }] };
});

let transport;
if (url.startsWith('stdio:')) {
  const [binary, cwd, config] = url.slice('stdio:'.length).split(':');
  transport = new StdioClientTransport({
    command: binary,
    args: ['mcp', '--cwd', cwd, '--config', config],
    cwd,
  });
} else {
  transport = new StreamableHTTPClientTransport(new URL(url));
}
await client.connect(transport);
const version = client.getNegotiatedProtocolVersion();
const tools = (await client.listTools()).tools.map((t) => t.name);
const write = async (path) => {
  try {
    return await client.callTool({ name: 'write', arguments: { path, content: 'x' } });
  } catch (err) {
    return { thrown: String(err) };
  }
};
const outside = await write(outsideFile);
const insideResult = await write(insideFile);
console.log(JSON.stringify({ version, tools, ...seen, outside, inside: insideResult }));
await client.close();
