// sunpeak's <Inspector> (sunpeak 0.20.79 from npm, bundled with esbuild: sunpeak-host.jsx)
// through the service, with the sandboxUrl of docs/hosts.md ("4h") run as written but for its
// name and port, in each engine: the real get-time view renders and its tools/call is
// answered, the pop-up tokens sunpeak asks for are named once; a view that declares an API
// reaches it through ?csp= and not without, and its camera is refused (sunpeak sends no
// permissions).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  serviceFixture, startHostPages, openHostPage, startTlsServer, makeCertificate, tempDir, probeView, exampleView,
  jsonApi, bundle, recipe, frameShowing,
} from './harness.mjs';
import { selectedEngines, until, consoleKnown } from './engines.mjs';

const T = { timeout: 90_000 };
const SANDBOX = 'sunpeak.sandbox.test';
const timeResult = (time) => ({ content: [{ type: 'text', text: time }], structuredContent: { time } });

/** The guide's sandboxUrl(csp), for the service on `port`. */
function guideSandboxUrl(port) {
  const source = recipe('sunpeak sandbox url');
  const sandboxUrl = new Function(`${source}\nreturn sandboxUrl;`)();
  return (csp) => sandboxUrl(csp).replace('https://chat.example-sandbox.net/', `https://${SANDBOX}:${port}/`);
}

for (const engine of selectedEngines()) {
  describe(`sunpeak's <Inspector> through the service (${engine})`, () => {
    const apiCert = makeCertificate(tempDir(), ['api.outside.test']);
    const fx = serviceFixture(engine, {
      tls: [SANDBOX],
      trust: [apiCert],
      hosts: ({ hostOrigin, port }) => `[[hosts]]\norigin = "${hostOrigin}"\nsandbox = "${SANDBOX}:${port}"\n`,
      host: async ({ hostPort }) => startHostPages(hostPort, await bundle('sunpeak-host.jsx')),
    });
    let api;
    before(async () => { api = await startTlsServer({ '/data': jsonApi }, apiCert); });
    after(async () => api?.close());

    const open = (t, name, config) => openHostPage(fx, t, name, config);

    const viewFrame = (page, text) => frameShowing(page, '#server-time', text);

    it('the real get-time view renders, its tools/call is answered, and the pop-up tokens are named once', T, async (t) => {
      const [first, second] = ['2026-12-03T08:00:00.000Z', '2026-12-03T08:00:01.000Z'];
      const page = await open(t, 'get-time', {
        sandboxUrl: guideSandboxUrl(fx.port)(undefined), html: exampleView('vanillajs'), tool: 'get-time',
        toolResult: timeResult(first), callResult: timeResult(second),
      });
      const frame = await viewFrame(page, first);
      await frame.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Get Server Time').click());
      await viewFrame(page, second);
      const host = await page.evaluate(() => window.host);
      assert.deepEqual(host.calls.map((c) => c.name), ['get-time']);
      const proxy = (await page.frames()).find((f) => f.url.startsWith(`https://${SANDBOX}:${fx.port}/sandbox.html`));
      assert.ok(proxy, 'the proxy page is the guide\'s URL');
      assert.equal(new URL(proxy.url).searchParams.get('platform'), 'chatgpt', 'sunpeak\'s own parameter, ignored');
      const tokens = (await proxy.evaluate(() => document.querySelector('iframe').getAttribute('sandbox'))).split(' ');
      assert.ok(!tokens.includes('allow-popups') && !tokens.includes('allow-popups-to-escape-sandbox'), tokens.join(' '));
      if (consoleKnown(engine)) {
        const named = page.console.filter((m) => m.includes('ignored sandbox tokens'));
        assert.equal(named.length, 1, page.console.join('\n'));
        assert.match(named[0], /"allow-popups allow-popups-to-escape-sandbox": not in this host entry's view_sandbox/);
      }
    });

    for (const [mode, withCsp] of [['through the guide\'s ?csp=', true], ['without it', false]]) {
      it(`a view that declares an API: ${withCsp ? 'reached' : 'refused'} ${mode}; its camera refused`, T, async (t) => {
        const declared = { connectDomains: [`https://api.outside.test:${api.port}`] };
        const page = await open(t, `probe-${withCsp}`, {
          sandboxUrl: guideSandboxUrl(fx.port)(withCsp ? declared : undefined),
          html: await probeView({ connect: `https://api.outside.test:${api.port}/data`, camera: true }),
          meta: { ui: { csp: declared, permissions: { camera: {} } } },
          tool: 'probe', toolResult: { content: [{ type: 'text', text: 'probe shown' }] },
          callResult: { content: [{ type: 'text', text: 'reported' }] },
        });
        const report = await until(async () => (await page.evaluate(() => window.host)).calls.find((c) => c.name === 'report'),
          'the view\'s report', 60_000);
        assert.equal(report.arguments.connect, withCsp ? 'ok' : 'blocked', JSON.stringify(report.arguments));
        assert.notEqual(report.arguments.camera, 'granted', 'sunpeak sends no permissions: the proxy delegates none');
        if (engine === 'chromium') {
          assert.ok(page.console.some((m) => m.includes('Permissions policy violation: camera is not allowed')), page.console.join('\n'));
        }
      });
    }
  });
}
