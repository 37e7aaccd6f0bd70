// LibreChat's host shape (its MCP Apps support, danny-avila/LibreChat#13831): the real AppBridge
// frames the sandbox URL it builds, `<VITE_MCP_SANDBOX_URL>?parentOrigin=<its origin>&strictCsp=1
// &csp=<the declaration>`, on the operator's `page_paths` for LibreChat's default path, with an
// outer iframe of `allow-scripts allow-same-origin allow-forms`, and sends the resource with the
// sandbox `allow-scripts allow-forms` (views opaque). In each engine the real basic example view
// renders its tool result and its tools/call reaches the host, under a page pinned to that one
// origin of the entry's two (docs/hosts.md, "LibreChat").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture, startSdkHost, exampleView } from './harness.mjs';
import { selectedEngines, until } from './engines.mjs';

for (const engine of selectedEngines()) {
  describe(`LibreChat's sandbox URL through the service (${engine})`, () => {
    const fx = serviceFixture(engine, {
      tls: ['librechat.sandbox.test'],
      hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = ["${hostOrigin}", "https://staging.example.com"]
sandbox = "librechat.sandbox.test:${port}"
page_paths = ["/api/mcp/sandbox"]
view_opt_ins = ["unsafe-eval"]
`,
      host: ({ hostPort }) => startSdkHost(hostPort),
    });

    it('the basic view renders and calls its tool, on a page pinned to parentOrigin, strict', { timeout: 60_000 }, async () => {
      const sandbox = `https://librechat.sandbox.test:${fx.port}`;
      const proxyUrl = `${sandbox}/api/mcp/sandbox?parentOrigin=${encodeURIComponent(fx.hostOrigin)}&strictCsp=1`;
      const [firstTime, secondTime] = ['2026-01-26T10:00:00.000Z', '2026-01-26T10:00:01.000Z'];
      const path = fx.hostServer.page('librechat', {
        proxyUrl, viewHtml: exampleView('vanillajs'), csp: {}, sandbox: 'allow-scripts allow-forms', firstTime, secondTime,
      });
      const page = await fx.browser.newPage();
      try {
        await page.goto(`${fx.hostOrigin}${path}`);
        const shown = (text) => async () => {
          for (const frame of await page.frames()) {
            const found = await frame.evaluate(() => document.querySelector('#server-time')?.textContent ?? null).catch(() => null);
            if (found !== null && found.includes(text)) return frame;
          }
          return null;
        };
        const viewFrame = await until(shown(firstTime), `the view shows ${firstTime}`);
        // Opaque, as LibreChat mounts it.
        assert.equal(await viewFrame.evaluate(() => self.origin), 'null');
        await viewFrame.evaluate(() => [...document.querySelectorAll('button')]
          .find((b) => b.textContent.trim() === 'Get Server Time').click());
        await until(shown(secondTime), `the view shows ${secondTime} after its tools/call`);
        const host = await page.evaluate(() => window.host);
        assert.deepEqual(host.calls.map((c) => c.name), ['get-time']);
        assert.deepEqual(host.events, [{ proxyReadyOrigin: sandbox }]);
        // The page the frame got: pinned to the host's origin alone, and strict.
        const proxy = (await page.frames()).find((f) => f.url.startsWith(`${sandbox}/api/mcp/sandbox`));
        const config = await proxy.evaluate(() => JSON.parse(document.getElementById('sandbox-config').textContent));
        assert.deepEqual(config.hostOrigins, [fx.hostOrigin]);
      } catch (error) {
        error.message += `\nconsole:\n${page.console.join('\n')}`;
        throw error;
      } finally {
        await page.close();
      }
    });
  });
}
