// The Vercel AI SDK as a chat host ships it: `useChat` and `MCPAppRenderer` from @ai-sdk/react in
// the page (bundled with esbuild), `streamText` and the @ai-sdk/mcp client in its backend (here,
// this process: a scripted model calls the tool, the real MCP servers answer over an in-memory
// transport), and `sandbox.url` pointing at the service's /mcp-app-sandbox. In each engine:
// - the real server-basic-vanillajs view renders in the renderer's default opaque frame and its
//   tool call is answered, with no [sandbox] warning;
// - a view of our own declares an API in connectDomains and asks for a camera. The renderer sends
//   the policy as a CSP string and the permissions as an `allow` string: the API is reached (after
//   the relay's one reload) and, with `allowedPermissions`, the camera is delegated. Kept opaque
//   (the renderer's default) a view gets no camera in Chromium and Firefox, and the relay says
//   why; with `innerSandbox` keeping its origin, it gets one everywhere, and nothing is warned.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createMCPClient, mcpAppClientCapabilities, readMCPAppResource } from '@ai-sdk/mcp';
import { streamText, convertToModelMessages } from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createServer as createTimeServer } from '@modelcontextprotocol/server-basic-vanillajs';
import * as z from 'zod';
import {
  serviceFixture, chatHost, CHAT_NAMES, startServer, startTlsServer, makeCertificate, tempDir,
  bundleAiSdkHost, javascript, probeView, jsonApi, freshPage,
} from './harness.mjs';
import { selectedEngines, until, consoleKnown } from './engines.mjs';

const T = { timeout: 60_000 };
const PROBE_URI = 'ui://probe/view.html';

/** Our own MCP App server: `probe` shows a view declaring `csp` and `permissions`; `report` is
 * how the view tells what it reached, kept in `reports`. */
function probeServer(html, { csp, permissions }, reports) {
  const server = new McpServer({ name: 'probe server', version: '1.0.0' });
  server.registerTool('probe', { description: 'Shows the probe view.', _meta: { ui: { resourceUri: PROBE_URI } } },
    async () => ({ content: [{ type: 'text', text: 'probe shown' }] }));
  const results = { connect: z.string(), resource: z.string(), dropped: z.string(), origin: z.string(), camera: z.string() };
  server.registerTool('report', { description: 'What the probe view reached.', inputSchema: results,
    _meta: { ui: { resourceUri: PROBE_URI, visibility: ['app'] } } }, async (reached) => {
    reports.push(reached);
    return { content: [{ type: 'text', text: 'reported' }] };
  });
  server.registerResource('probe view', PROBE_URI, { mimeType: 'text/html;profile=mcp-app' }, async () => ({
    contents: [{ uri: PROBE_URI, mimeType: 'text/html;profile=mcp-app', text: html, _meta: { ui: { csp, permissions } } }],
  }));
  return server;
}

/** A scripted model: it calls the tool the user's message names. */
function toolCallingModel() {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
  return new MockLanguageModelV4({
    doStream: async ({ prompt }) => {
      const asked = prompt.findLast((m) => m.role === 'user').content.find((p) => p.type === 'text').text;
      return {
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          { type: 'tool-call', toolCallId: `call-${asked}`, toolName: asked, input: '{}' },
          { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
        ]),
      };
    },
  });
}

/** The chat backend an AI SDK host runs, with one @ai-sdk/mcp client per server. */
async function chatBackend(servers) {
  const clients = [];
  const byTool = new Map();
  const byResource = new Map();
  let tools = {};
  for (const server of servers) {
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = await createMCPClient({ transport: clientSide, capabilities: mcpAppClientCapabilities });
    clients.push(client);
    const served = await client.tools();
    for (const [name, tool] of Object.entries(served)) {
      byTool.set(name, client);
      if (tool.metadata?.app?.resourceUri) byResource.set(tool.metadata.app.resourceUri, client);
    }
    const { tools: listed } = await client.listTools();
    for (const { name, _meta } of listed) {
      byTool.set(name, client);
      if (_meta?.ui?.resourceUri) byResource.set(_meta.ui.resourceUri, client);
    }
    tools = { ...tools, ...served };
  }
  const body = async (req) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  };
  const json = (res, value) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(value));
  };
  const routes = {
    '/api/chat': async (req, res) => {
      const { messages } = await body(req);
      const reply = streamText({ model: toolCallingModel(), tools, messages: await convertToModelMessages(messages) });
      reply.pipeUIMessageStreamToResponse(res);
    },
    '/api/resource': async (req, res) => {
      const { uri } = await body(req);
      json(res, await readMCPAppResource({ client: byResource.get(uri), uri }));
    },
    '/api/call-tool': async (req, res) => {
      const { name, arguments: args } = await body(req);
      json(res, await byTool.get(name).callTool({ name, arguments: args ?? {} }));
    },
  };
  return { routes, close: () => Promise.all(clients.map((client) => client.close())) };
}

for (const engine of selectedEngines()) describe(`the Vercel AI SDK's MCPAppRenderer (${engine})`, () => {
  const apiCert = makeCertificate(tempDir(), ['api.outside.test']);
  const reports = [];
  let api, backend, apiOrigin;
  const cases = new Map();

  const fx = serviceFixture(engine, {
    tls: CHAT_NAMES,
    admin: true,
    hosts: chatHost(),
    trust: [apiCert],
    host: async ({ hostPort }) => {
      api = await startTlsServer({
        '/data': jsonApi,
      }, apiCert);
      apiOrigin = `https://api.outside.test:${api.port}`;
      const probe = await probeView({ connect: `${apiOrigin}/data`, camera: true });
      const declared = { csp: { connectDomains: [apiOrigin] }, permissions: { camera: {} } };
      backend = await chatBackend([createTimeServer(), probeServer(probe, declared, reports)]);
      const page = (name) => `<!doctype html><title>${name}</title><body><div id="root"></div>
<script>window.HOST_CONFIG = ${JSON.stringify(cases.get(name))};</script>
<script type="module" src="/ai-sdk-host.js"></script></body>`;
      const routes = Object.fromEntries(Object.entries(backend.routes).map(([path, route]) => [path, (req, res) =>
        route(req, res).catch((error) => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end(String(error?.stack || error));
        })]));
      return startServer({
        ...routes,
        '/chat': (req, res, url) => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
          res.end(page(url.searchParams.get('case')));
        },
        '/ai-sdk-host.js': javascript(await bundleAiSdkHost()),
      }, hostPort);
    },
  });

  after(async () => {
    await backend?.close();
    await api?.close();
  });

  /** The chat page asking for `tool`, rendered with `sandbox` (and `url` the service's page). */
  const sandboxUrl = () => fx.url('chat.sandbox.test').replace('/sandbox.html', '/mcp-app-sandbox');

  async function chat(t, name, { tool, sandbox = {}, allowedTools = [], cspInUrl = false }) {
    cases.set(name, { tool, allowedTools, cspInUrl, sandbox: { url: sandboxUrl(), ...sandbox } });
    const page = await freshPage(fx.browser, t);
    await page.goto(`${fx.hostOrigin}/chat?case=${encodeURIComponent(name)}`);
    return page;
  }

  const sandboxLines = (page, level) => page.console.filter((line) => line.startsWith(`${level}: [sandbox]`));

  /** What the probe view reports, once: through the renderer, the backend and the probe server. */
  async function reported(count) {
    return until(() => reports.length >= count && reports[count - 1], 'the probe view\'s report', 30_000);
  }

  it('the real get-time view renders in its opaque frame and its tool call is answered', T, async (t) => {
    const page = await chat(t, `time-${engine}`, { tool: 'get-time', allowedTools: ['get-time'] });
    const shown = async () => {
      for (const frame of await page.frames()) {
        const text = await frame.evaluate(() => document.querySelector('#server-time')?.textContent ?? null).catch(() => null);
        if (text && /\d{4}-\d\d-\d\dT/.test(text)) return { frame, text };
      }
      return null;
    };
    const first = await until(shown, 'the server time shown in the view', 30_000);
    const proxied = (await page.frames()).some((f) => f.url.startsWith(sandboxUrl()));
    assert.ok(proxied, 'the renderer framed the service\'s page');
    await until(() => page.evaluate(() => window.host.initialized), 'the view initialized with the renderer');
    await first.frame.evaluate(() => document.querySelector('#get-time-btn').click());
    await until(() => page.evaluate(() => window.host.calls.some((c) => c.name === 'get-time')), 'the view\'s tools/call reaching the host');
    if (consoleKnown(engine)) assert.deepEqual(sandboxLines(page, 'warning'), []);
  });

  it('our view kept opaque: the declared API is reached; the camera only where opaque views get one', T, async (t) => {
    const before = reports.length;
    const page = await chat(t, `opaque-${engine}`, { tool: 'probe', allowedTools: ['report'], sandbox: { allowedPermissions: ['camera'] } });
    const report = await reported(before + 1);
    assert.equal(report.connect, 'ok', JSON.stringify(report));
    assert.equal(report.origin, 'null', 'the renderer\'s default keeps the view opaque');
    assert.equal(report.camera, engine === 'webkit' ? 'granted' : 'denied');
    if (consoleKnown(engine)) {
      const warned = sandboxLines(page, 'warning');
      assert.equal(warned.length, 1, warned.join('\n'));
      assert.match(warned[0], /opaque/);
    }
  });

  it('our view with its origin kept (innerSandbox): the API is reached, the camera delegated, nothing warned', T, async (t) => {
    const before = reports.length;
    const sandbox = { allowedPermissions: ['camera'], innerSandbox: 'allow-scripts allow-same-origin allow-forms' };
    const page = await chat(t, `origin-${engine}`, { tool: 'probe', allowedTools: ['report'], sandbox });
    const report = await reported(before + 1);
    assert.deepEqual({ connect: report.connect, camera: report.camera }, { connect: 'ok', camera: 'granted' }, JSON.stringify(report));
    if (consoleKnown(engine)) assert.deepEqual(sandboxLines(page, 'warning'), []);
  });

  /** The pages the service served with a resource's domains added by the relay's reload. */
  async function upgrades() {
    const text = await (await fetch(`http://127.0.0.1:${fx.adminPort}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`mcp_sandbox_proxy_policy_upgrades_total{host="${fx.hostOrigin}"}`));
    return Number(line?.split(' ').pop() ?? 0);
  }

  it('the resource read first and its domains in the sandbox URL: reached without the reload', T, async (t) => {
    const before = reports.length;
    const upgradedBefore = await upgrades();
    const page = await chat(t, `in-url-${engine}`, { tool: 'probe', allowedTools: ['report'], cspInUrl: true });
    const report = await reported(before + 1);
    assert.equal(report.connect, 'ok', JSON.stringify(report));
    assert.equal(await upgrades() - upgradedBefore, 0, 'no page served for a reload');
    if (consoleKnown(engine)) {
      const reloads = sandboxLines(page, 'info').filter((line) => line.includes('needs another policy'));
      assert.deepEqual(reloads, [], 'the page was served with the domains: no reload');
    }
  });

  // That the relay says why it reloads is tests/relay/carry.test.mjs's: a driver may miss what a
  // frame logs in the instant before it navigates (Chromium's, about 1 run in 20).
  it('the domains only in sandbox-resource-ready: the page reloads once for them, and says so no more than once', T, async (t) => {
    const before = reports.length;
    const upgradedBefore = await upgrades();
    const page = await chat(t, `reload-${engine}`, { tool: 'probe', allowedTools: ['report'] });
    const report = await reported(before + 1);
    assert.equal(report.connect, 'ok', JSON.stringify(report));
    assert.equal(await upgrades() - upgradedBefore, 1, 'one page served with the declared domains');
    if (consoleKnown(engine)) {
      const reloads = sandboxLines(page, 'info').filter((line) => line.includes('needs another policy'));
      assert.ok(reloads.length <= 1, page.console.join('\n'));
    }
  });
});
