// A stdio MCP App server for hosts that start their servers themselves (MCP Inspector): `probe`
// shows the probe view (probe-view.js, its HTML in the file named by argv[2]), which declares
// the API origin in argv[3] as a connectDomain and asks for a camera; `report` is how the view
// tells what it reached.
import { readFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import * as z from 'zod';

const [html, api] = [readFileSync(process.argv[2], 'utf8'), process.argv[3]];
const uri = 'ui://probe/view.html';
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
await server.connect(new StdioServerTransport());
