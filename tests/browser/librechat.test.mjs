// LibreChat's host shape (its MCP Apps support, danny-avila/LibreChat#13831): the real AppBridge
// frames the sandbox URL it builds, `<VITE_MCP_SANDBOX_URL>?parentOrigin=<its origin>&strictCsp=1
// &csp=<the declaration>`, on the operator's `page_paths` for LibreChat's default path, with an
// outer iframe of `allow-scripts allow-same-origin allow-forms`, and sends the resource with the
// sandbox `allow-scripts allow-forms` (views opaque). In each engine the real basic example view
// renders its tool result and its tools/call reaches the host, under a page pinned to that one
// origin of the entry's two. The operator's entry and the client's build variables are
// docs/hosts.md's ("4j"), as written.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture, startSdkHost, exampleView, recipe, openHostPage, frameShowing } from './harness.mjs';
import { selectedEngines, until } from './engines.mjs';

const GUIDE_HOST = 'chat.example-sandbox.net';
const ENV = Object.fromEntries(recipe('librechat env').split('\n')
  .map((line) => /^(VITE_\w+)=(\S+)/.exec(line)).filter(Boolean).map(([, key, value]) => [key, value]));

/** The guide's entry, on `port`, with a second origin beside the host page's. */
function entry({ hostOrigin, port }) {
  const guide = recipe('librechat config');
  assert.ok(guide.includes('origin = "https://chat.example.com"') && guide.includes(GUIDE_HOST), guide);
  return `${guide
    .replace('"https://chat.example.com"', `["${hostOrigin}", "https://staging.example.com"]`)
    .replace(GUIDE_HOST, `librechat.sandbox.test:${port}`)}view_opt_ins = ["unsafe-eval"]\n`;
}

/** The URL LibreChat frames: the guide's VITE_MCP_SANDBOX_URL, `?parentOrigin=`, and `&strictCsp=1` when set. */
function sandboxUrl(port, hostOrigin) {
  const url = new URL(ENV.VITE_MCP_SANDBOX_URL.replace(GUIDE_HOST, `librechat.sandbox.test:${port}`));
  url.searchParams.set('parentOrigin', hostOrigin);
  if (ENV.VITE_MCP_SANDBOX_STRICT_CSP === '1') url.searchParams.set('strictCsp', '1');
  return url.href;
}

for (const engine of selectedEngines()) {
  describe(`LibreChat's sandbox URL through the service (${engine})`, () => {
    const fx = serviceFixture(engine, {
      tls: ['librechat.sandbox.test'],
      hosts: entry,
      host: ({ hostPort }) => startSdkHost(hostPort),
    });

    it('the basic view renders and calls its tool, on a page pinned to parentOrigin, strict', { timeout: 60_000 }, async (t) => {
      const sandbox = `https://librechat.sandbox.test:${fx.port}`;
      const proxyUrl = sandboxUrl(fx.port, fx.hostOrigin);
      assert.ok(proxyUrl.startsWith(`${sandbox}/api/mcp/sandbox?`) && proxyUrl.endsWith('&strictCsp=1'), proxyUrl);
      const [firstTime, secondTime] = ['2026-01-26T10:00:00.000Z', '2026-01-26T10:00:01.000Z'];
      const page = await openHostPage(fx, t, 'librechat', {
        proxyUrl, viewHtml: exampleView('vanillajs'), csp: {}, sandbox: 'allow-scripts allow-forms', firstTime, secondTime,
      });
      const viewFrame = await frameShowing(page, '#server-time', firstTime);
      // Opaque, as LibreChat mounts it.
      assert.equal(await viewFrame.evaluate(() => self.origin), 'null');
      // strictCsp=1: the entry's unsafe-eval opt-in is left out of this page's view policy. A
      // script of the view's tries it, once the driver's call has returned: code run within a
      // driver's evaluate may eval whatever the page's policy says.
      await viewFrame.evaluate(() => setTimeout(() => {
        const script = document.createElement('script');
        script.textContent = 'try { eval("1"); window.evaluated = "ran"; } catch { window.evaluated = "refused"; }';
        document.head.append(script);
      }, 0));
      assert.equal(await until(() => viewFrame.evaluate(() => window.evaluated), 'the view\'s eval tried'), 'refused');
      await viewFrame.evaluate(() => [...document.querySelectorAll('button')]
        .find((b) => b.textContent.trim() === 'Get Server Time').click());
      await frameShowing(page, '#server-time', secondTime);
      const host = await page.evaluate(() => window.host);
      assert.deepEqual(host.calls.map((c) => c.name), ['get-time']);
      assert.deepEqual(host.events, [{ proxyReadyOrigin: sandbox }]);
      // The page the frame got: pinned to the host's origin alone, and strict.
      const proxy = (await page.frames()).find((f) => f.url.startsWith(`${sandbox}/api/mcp/sandbox`));
      const config = await proxy.evaluate(() => JSON.parse(document.getElementById('sandbox-config').textContent));
      assert.deepEqual(config.hostOrigins, [fx.hostOrigin]);
    });
  });
}
