// An MCP App server for hosts that start or reach servers themselves (MCP Inspector over
// stdio; mcp-use's inspector over Streamable HTTP on 127.0.0.1:<argv[4]>/mcp, when given):
// `probe` shows the probe view (probe-view.js, its HTML in the file named by argv[2]), which
// declares the API origin in argv[3] as a connectDomain and asks for a camera; `report` is how
// the view tells what it reached.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

const [html, api, port] = [readFileSync(process.argv[2], 'utf8'), process.argv[3], process.argv[4]];
const uri = 'ui://probe/view.html';

function probeServer() {
  const server = new McpServer({ name: 'probe server', version: '1.0.0' });
  server.registerTool('probe', { title: 'Probe', description: 'Shows the probe view.', _meta: { ui: { resourceUri: uri } } },
    async () => ({ content: [{ type: 'text', text: 'probe shown' }] }));
  const reached = { connect: z.string(), resource: z.string(), dropped: z.string(), origin: z.string(), camera: z.string() };
  server.registerTool('report', { description: 'What the probe view reached.', inputSchema: reached,
    _meta: { ui: { resourceUri: uri, visibility: ['app'] } } }, async () => ({ content: [{ type: 'text', text: 'reported' }] }));
  server.registerResource('probe view', uri, { mimeType: 'text/html;profile=mcp-app' }, async () => ({
    contents: [{ uri, mimeType: 'text/html;profile=mcp-app', text: html,
      _meta: { ui: { csp: { connectDomains: [api] }, permissions: { camera: {} } } } }],
  }));
  return server;
}

if (port) {
  // Stateless: a server and transport per request. Browsers call it from the host page's
  // origin, so it answers CORS as the SDK's example servers do.
  createServer(async (req, res) => {
    res.setHeader('access-control-allow-origin', '*');
    res.setHeader('access-control-allow-headers', '*');
    res.setHeader('access-control-expose-headers', 'mcp-session-id');
    res.setHeader('access-control-allow-methods', 'GET, POST, DELETE, OPTIONS');
    if (req.method === 'OPTIONS') return res.writeHead(204).end();
    if (req.method !== 'POST') return res.writeHead(405).end();
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const server = probeServer();
    res.on('close', () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
  }).listen(Number(port), '127.0.0.1', () => console.log('listening'));
} else {
  await probeServer().connect(new StdioServerTransport());
}
