// A client of `corral mcp` built on the official TypeScript SDK: it spawns
// the server over stdio, lists the tools, calls shell and read_file, and
// prints what it saw as JSON. Usage: node mcp_client.mjs COMMAND [ARG...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "corral-ts-test", version: "0.0.0" });
await client.connect(transport);

const text = (r) => r.content.filter((c) => c.type === "text").map((c) => c.text).join("");
const tools = (await client.listTools()).tools.map((t) => ({ name: t.name, hasSchema: t.inputSchema?.type === "object" }));
const shell = await client.callTool({ name: "shell", arguments: { command: "echo from node > ts.txt; cat ts.txt; echo x > /etc/corral-ts-test" } });
const read = await client.callTool({ name: "read_file", arguments: { path: "ts.txt" } });
await client.close();

console.log(JSON.stringify({
  tools,
  shell: { text: text(shell), isError: shell.isError ?? false },
  read: { text: text(read), isError: read.isError ?? false },
}));
