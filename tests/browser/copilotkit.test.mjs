// CopilotKit (1.74, in a project of its own: tests/browser/copilotkit/) through the service, as
// docs/hosts.md ("4i") says: CopilotKit renders MCP Apps itself on the host's own origin, so
// the guide replaces its renderer with one on @mcp-ui/client's AppRenderer and the sandbox's
// URL. The guide's block is tests/browser/copilotkit/renderer.jsx, byte for byte; a chat page
// (host.jsx: CopilotKitProvider, CopilotChat, an agent that needs no model) runs it with the
// sandbox's name and port, in each engine: the real get-time view renders in the chat from the
// sandbox origin and its tools/call reaches the agent; a view that declares an API reaches it,
// and is refused the camera it asks for (AppRenderer 7.1.1 delegates none; Chromium says why).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  serviceFixture, startHostPages, openHostPage, startTlsServer, makeCertificate, tempDir, probeView, exampleView,
  jsonApi, bundle, recipe, frameShowing, ROOT,
} from './harness.mjs';
import { selectedEngines, until } from './engines.mjs';

const T = { timeout: 90_000 };
const SANDBOX = 'copilotkit.sandbox.test';
const PROJECT = join(ROOT, 'tests', 'browser', 'copilotkit');
const GUIDE_SANDBOX = 'https://chat.example-sandbox.net/sandbox.html';
const timeResult = (time) => ({ content: [{ type: 'text', text: time }], structuredContent: { time } });

/** The chat page with the guide's renderer pointed at the sandbox on `port`, bundled. */
async function bundleChat(port) {
  const renderer = readFileSync(join(PROJECT, 'renderer.jsx'), 'utf8');
  assert.equal(recipe('copilotkit renderer'), renderer, 'docs/hosts.md shows renderer.jsx as it is');
  assert.ok(renderer.includes(GUIDE_SANDBOX));
  const dir = join(PROJECT, 'generated');
  mkdirSync(dir, { recursive: true });
  cpSync(join(PROJECT, 'host.jsx'), join(dir, 'host.jsx'));
  writeFileSync(join(dir, 'renderer.jsx'), renderer.replace(GUIDE_SANDBOX, `https://${SANDBOX}:${port}/sandbox.html`));
  return bundle(join(dir, 'host.jsx'));
}

for (const engine of selectedEngines()) {
  describe(`CopilotKit with the guide's renderer through the service (${engine})`, () => {
    const apiCert = makeCertificate(tempDir(), ['api.outside.test']);
    const fx = serviceFixture(engine, {
      tls: [SANDBOX],
      trust: [apiCert],
      hosts: ({ hostOrigin, port }) => `[[hosts]]\norigin = "${hostOrigin}"\nsandbox = "${SANDBOX}:${port}"\n`,
      host: async ({ hostPort, port }) => startHostPages(hostPort, await bundleChat(port)),
    });
    let api;
    before(async () => { api = await startTlsServer({ '/data': jsonApi }, apiCert); });
    after(async () => api?.close());

    async function chat(t, name, config) {
      const page = await openHostPage(fx, t, name, config);
      // The page offers showApp once the chat has taken the agent (host.jsx says why): in WebKit
      // that comes later than the script's first run, and later still than the chat's input.
      await until(() => page.evaluate(() => typeof window.showApp === 'function'), 'the chat has the agent', 30_000);
      await page.evaluate(() => { window.showApp(); });
      return page;
    }

    const viewFrame = (page, text) => frameShowing(page, '#server-time', text);

    it('the real get-time view renders in the chat from the sandbox origin, and its tools/call reaches the agent', T, async (t) => {
      const [first, second] = ['2026-12-03T08:00:00.000Z', '2026-12-03T08:00:01.000Z'];
      const page = await chat(t, 'get-time', { html: exampleView('vanillajs'), toolResult: timeResult(first), callResult: timeResult(second) });
      const frame = await viewFrame(page, first);
      await frame.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Get Server Time').click());
      await viewFrame(page, second);
      const host = await page.evaluate(() => window.host);
      assert.deepEqual(host.calls.map((c) => c.name), ['get-time']);
      assert.ok((await page.frames()).some((f) => f.url.startsWith(`https://${SANDBOX}:${fx.port}/sandbox.html`)), 'the proxy is the sandbox page');
    });

    it('a view that declares an API reaches it; the camera it asks for is refused (AppRenderer delegates none)', T, async (t) => {
      const declared = { connectDomains: [`https://api.outside.test:${api.port}`] };
      const page = await chat(t, 'probe', {
        html: await probeView({ connect: `https://api.outside.test:${api.port}/data`, camera: true }), csp: declared,
        toolResult: { content: [{ type: 'text', text: 'probe shown' }] }, callResult: { content: [{ type: 'text', text: 'reported' }] },
      });
      const report = await until(async () => (await page.evaluate(() => window.host)).calls.find((c) => c.name === 'report'),
        'the view\'s report', 60_000);
      assert.equal(report.arguments.connect, 'ok', JSON.stringify(report.arguments));
      assert.equal(report.arguments.origin, `https://${SANDBOX}:${fx.port}`, 'the view runs on the sandbox origin, not the chat\'s');
      assert.notEqual(report.arguments.camera, 'granted');
      if (engine === 'chromium') {
        assert.ok(page.console.some((m) => m.includes('Permissions policy violation: camera is not allowed')), page.console.join('\n'));
      }
    });
  });
}
