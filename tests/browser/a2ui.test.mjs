// A2UI's MCP Apps component through the service, as docs/hosts.md ("4f") says, in each engine:
// a host page of the component's shape (a2ui-host.js) frames the URL of the guide's
// VITE_MCP_SANDBOX_URL, the operator's entry is the guide's, and the guide's csp line is put
// into the component as written. The real get-time view renders and its tools/call is
// answered; a view that declares an API reaches it with the csp line and not without (the
// refusal reported to the sandbox); pop-ups only with the operator's allow-popups, and the
// console names what was left out once.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  serviceFixture, startHostPages, openHostPage, startTlsServer, makeCertificate, tempDir, probeView, exampleView,
  jsonApi, bundle, recipe, frameShowing, ROOT,
} from './harness.mjs';
import { selectedEngines, until, consoleKnown } from './engines.mjs';

const T = { timeout: 90_000 };
const PATH = new URL(/VITE_MCP_SANDBOX_URL=(\S+)/.exec(recipe('a2ui env'))[1]).pathname;

/** The component with the guide's csp line where its marker is, bundled for the browser. */
async function bundleComponent() {
  const source = readFileSync(join(ROOT, 'tests', 'browser', 'a2ui-host.js'), 'utf8');
  const marker = '/* recipe: a2ui csp */';
  assert.ok(source.includes(marker));
  const dir = join(ROOT, 'target', 'browser-hosts');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'a2ui-host.js');
  writeFileSync(file, source.replace(marker, recipe('a2ui csp')));
  return bundle(file);
}

/** The guide's entry for the A2UI app at `hostOrigin`, on `name`; and one without `view_sandbox`. */
function entries({ hostOrigin, port }) {
  const guide = recipe('a2ui config')
    .replace('https://app.example.com', hostOrigin)
    .replace('chat.example-sandbox.net', `popups.sandbox.test:${port}`);
  assert.match(guide, /view_sandbox = \[.*"allow-popups"/);
  return `${guide}\n[[hosts]]\norigin = "${hostOrigin}"\nsandbox = "plain.sandbox.test:${port}"\n`;
}

for (const engine of selectedEngines()) {
  describe(`A2UI's MCP Apps component through the service (${engine})`, () => {
    const apiCert = makeCertificate(tempDir(), ['api.outside.test']);
    const fx = serviceFixture(engine, {
      tls: ['popups.sandbox.test', 'plain.sandbox.test'],
      admin: true,
      hosts: entries,
      trust: [apiCert],
      host: async ({ hostPort }) => startHostPages(hostPort, await bundleComponent()),
    });
    let api;
    before(async () => { api = await startTlsServer({ '/data': jsonApi }, apiCert); });
    after(async () => api?.close());

    const open = (t, name, config) => openHostPage(fx, t, name, config);

    const sandboxUrl = (name) => `https://${name}:${fx.port}${PATH}`;

    const viewFrame = (page, selector, text) => frameShowing(page, selector, text);

    it('the real get-time view renders, its tools/call is answered, and the ready came from the configured origin', T, async (t) => {
      const [first, second] = ['2026-12-03T08:00:00.000Z', '2026-12-03T08:00:01.000Z'];
      const page = await open(t, 'get-time', {
        sandboxUrl: sandboxUrl('plain.sandbox.test'), htmlContent: exampleView('vanillajs'), firstTime: first, secondTime: second,
      });
      const frame = await viewFrame(page, '#server-time', first);
      await frame.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Get Server Time').click());
      await viewFrame(page, '#server-time', second);
      const host = await page.evaluate(() => window.host);
      assert.equal(host.initialized, true);
      assert.deepEqual(host.calls.map((c) => c.name), ['get-time']);
      assert.deepEqual(host.readyOrigins, [`https://plain.sandbox.test:${fx.port}`]);
    });

    for (const [mode, reached] of [['as it ships', 'blocked'], ['with the guide\'s csp line', 'ok']]) {
      it(`a view that declares an API: ${reached === 'ok' ? 'reached' : 'refused'} ${mode}`, T, async (t) => {
        const connect = `https://api.outside.test:${api.port}/data`;
        const page = await open(t, `probe-${reached}`, {
          sandboxUrl: sandboxUrl('plain.sandbox.test'),
          htmlContent: await probeView({ connect, camera: true }),
          resourceCsp: { connectDomains: [`https://api.outside.test:${api.port}`] },
          recipe: reached === 'ok',
        });
        const report = await until(async () => (await page.evaluate(() => window.host)).calls.find((c) => c.name === 'report'),
          'the view\'s report', 45_000);
        assert.equal(report.arguments.connect, reached);
        // The component's iframe delegates nothing: no camera, whatever the view asks.
        assert.notEqual(report.arguments.camera, 'granted');
        // The component sends no permissions, so only the browser can say why: Chromium does.
        if (engine === 'chromium') {
          assert.ok(page.console.some((m) => m.includes('Permissions policy violation: camera is not allowed')), page.console.join('\n'));
        }
        if (reached === 'blocked') {
          await until(async () => {
            const rows = (await (await fetch(`http://127.0.0.1:${fx.adminPort}/csp-reports`)).json()).reports;
            return rows.some((r) => r.directive === 'connect-src' && r.blocked === `https://api.outside.test:${api.port}`);
          }, 'the refusal in the report table', 30_000);
        }
      });
    }

    for (const [name, popups] of [['popups.sandbox.test', true], ['plain.sandbox.test', false]]) {
      it(`pop-ups ${popups ? 'with' : 'without'} the operator's allow-popups, and the console says what was left out`, T, async (t) => {
        const page = await open(t, `popups-${popups}`, {
          sandboxUrl: sandboxUrl(name), htmlContent: exampleView('vanillajs'), firstTime: 'first', secondTime: 'second',
        });
        await viewFrame(page, '#server-time', 'first');
        const proxyFrame = (await page.frames()).find((f) => f.url.startsWith(sandboxUrl(name)));
        const tokens = (await proxyFrame.evaluate(() => document.querySelector('iframe').getAttribute('sandbox'))).split(' ');
        assert.equal(tokens.includes('allow-popups'), popups, tokens.join(' '));
        assert.ok(tokens.includes('allow-modals') && tokens.includes('allow-same-origin'), tokens.join(' '));
        if (consoleKnown(engine)) {
          const warned = page.console.filter((m) => m.includes('ignored sandbox tokens'));
          assert.equal(warned.length, popups ? 0 : 1, page.console.join('\n'));
          if (!popups) assert.match(warned[0], /"allow-popups": not in this host entry's view_sandbox/);
        }
      });
    }
  });
}
