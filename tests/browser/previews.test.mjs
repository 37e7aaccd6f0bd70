// Preview and staging embedders in each engine: a host entry whose origin is a pattern
// (https://*.preview.test:PORT) serves each preview a page pinned to the exact origin the page
// names in ?embedder=, so a page of one preview never runs inside another.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  serviceFixture, startTlsServer, html, makeCertificate, tempDir, RAW_HOST, view, report,
} from './harness.mjs';
import { selectedEngines, consoleKnown } from './engines.mjs';

for (const engine of selectedEngines()) {
  describe(`preview embedders (${engine})`, () => {
    const hostsCert = makeCertificate(tempDir(), ['*.preview.test']);
    const fx = serviceFixture(engine, {
      tls: ['sandbox.preview-sandbox.test'],
      hosts: ({ port, hostPort }) => `[[hosts]]
origin = "https://*.preview.test:${hostPort}"
sandbox = "sandbox.preview-sandbox.test:${port}"
`,
      host: ({ hostPort }) => startTlsServer({ '/raw': html(RAW_HOST) }, hostsCert, hostPort),
      trust: [hostsCert],
    });
    const preview = (n) => `https://pr-${n}.preview.test:${fx.hostPort}`;
    const sandboxFor = (embedder) =>
      `${fx.url('sandbox.preview-sandbox.test')}?embedder=${encodeURIComponent(embedder)}`;

    /** Mounts `proxyUrl` in a page of preview `n`: whether sandbox-proxy-ready came within `wait` ms. */
    async function mountsIn(n, proxyUrl, wait) {
      const page = await fx.browser.newPage();
      try {
        await page.goto(`${preview(n)}/raw`);
        const ready = await page.evaluate(([u, ms]) => Promise.race([
          window.mountProxy({ proxyUrl: u }).then(() => true),
          new Promise((resolve) => setTimeout(() => resolve(false), ms)),
        ]), [proxyUrl, wait]);
        return { ready, console: page.console };
      } finally {
        await page.close();
      }
    }

    it('each preview mounts a page pinned to itself', { timeout: 60_000 }, async () => {
      for (const n of [1, 2]) {
        const { ready, console } = await mountsIn(n, sandboxFor(preview(n)), 15_000);
        assert.equal(ready, true, `preview ${n}:\n${console.join('\n')}`);
      }
    });

    it('a page asked for with ?embedder= written by hand mounts a resource that declares nothing without reloading', { timeout: 60_000 }, async () => {
      const page = await fx.browser.newPage();
      try {
        await page.goto(`${preview(1)}/raw`);
        // Not percent-encoded: the relay must not read its own query, re-encoded, as another URL.
        const unencoded = `${fx.url('sandbox.preview-sandbox.test')}?embedder=${preview(1)}`;
        // Every load of the proxy's frame, its first included: counted from before the frame
        // exists (load does not bubble; the capture phase sees it), since sandbox-proxy-ready
        // may reach the host before or after the frame's first load event.
        await page.evaluate(() => {
          window.loads = 0;
          document.addEventListener('load', (e) => { if (e.target.tagName === 'IFRAME') window.loads += 1; }, true);
        });
        await page.evaluate((u) => window.mountProxy({ proxyUrl: u }), unencoded);
        await page.evaluate((h) => window.sendResource({ html: h }), view("report('mounted', true)"));
        assert.equal(await report(page, 'mounted'), true);
        await new Promise((r) => setTimeout(r, 500));
        assert.equal(await page.evaluate(() => window.loads), 1, 'the proxy page loaded once, and did not reload');
      } finally {
        await page.close();
      }
    });

    it("a preview cannot run a page rendered for another preview", { timeout: 60_000 }, async () => {
      // Refused by the browser at once; 3 s is ample for a page that would load.
      const { ready, console } = await mountsIn(2, sandboxFor(preview(1)), 3_000);
      assert.equal(ready, false, 'no sandbox-proxy-ready');
      if (consoleKnown(engine)) assert.ok(console.some((m) => m.includes('frame-ancestors')), console.join('\n'));
    });
  });
}
