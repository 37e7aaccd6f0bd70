// One host entry for the same app on two names (origin = [..]), in each engine: the page is
// framed by either, says ready to the one that frames it, and relays for it alone, also across
// its own reload for a declared policy. A third origin cannot frame it. All three engines report
// the parent's origin (location.ancestorOrigins); what the relay does in one that does not is
// in tests/relay/host.test.mjs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture, CHAT_NAMES, view, report, RAW_HOST, html, startServer } from './harness.mjs';
import { selectedEngines } from './engines.mjs';

const T = { timeout: 30_000 };

for (const engine of selectedEngines()) describe(`a host on several origins (${engine})`, () => {
  const fx = serviceFixture(engine, {
    tls: CHAT_NAMES,
    hosts: ({ hostOrigin, hostPort, port }) => `[[hosts]]
origin = ["${hostOrigin}", "http://127.0.0.1:${hostPort}"]
sandbox = "chat.sandbox.test:${port}"
`,
    host: ({ hostPort }) => startServer({ '/raw': html(RAW_HOST) }, hostPort),
  });

  /** The host page on `origin`, with the proxy mounted: what it received once the view reported. */
  async function mountedFrom(t, origin, params) {
    const page = await fx.browser.newPage();
    t.after(async () => {
      if (t.passed === false) t.diagnostic(page.console.join('\n'));
      await page.close();
    });
    await page.goto(`${origin}/raw`);
    await page.evaluate((proxyUrl) => window.mountProxy({ proxyUrl }), fx.url('chat.sandbox.test'));
    await page.evaluate((p) => window.sendResource(p), params);
    const mounted = await report(page, 'mounted');
    const readies = await page.evaluate(() => window.received
      .filter((m) => m.data && m.data.method === 'ui/notifications/sandbox-proxy-ready').length);
    return { mounted, readies };
  }

  const names = () => [fx.hostOrigin, `http://127.0.0.1:${fx.hostPort}`];

  it('each listed origin frames the page, hears ready once and gets the view', T, async (t) => {
    for (const origin of names()) {
      const { mounted, readies } = await mountedFrom(t, origin, { html: view("report('mounted', location.origin);") });
      assert.equal(mounted, new URL(fx.url('chat.sandbox.test')).origin, origin);
      assert.equal(readies, 1, origin);
    }
  });

  it('across its reload for a declared policy, the view still reaches the host that framed it', T, async (t) => {
    const csp = { connectDomains: ['https://api.outside.test'] };
    const origin = names()[1];
    const { mounted, readies } = await mountedFrom(t, origin, { html: view("report('mounted', 'yes');"), csp });
    assert.equal(mounted, 'yes');
    assert.equal(readies, 1, 'ready is said once, before the reload');
  });

  it('an origin that is not listed cannot frame the page', T, async (t) => {
    const page = await fx.browser.newPage();
    t.after(() => page.close());
    await page.goto(`http://localhost:${fx.hostPort}/raw`);
    const ready = await page.evaluate((proxyUrl) => Promise.race([
      window.mountProxy({ proxyUrl }).then(() => 'ready'),
      new Promise((resolve) => setTimeout(() => resolve('no answer'), 3000)),
    ]), fx.url('chat.sandbox.test'));
    assert.equal(ready, 'no answer');
  });
});
