// Preview and staging embedders in each engine: a host entry whose origin is a pattern
// (https://*.preview.test:PORT) serves each preview a page pinned to the exact origin the page
// names in ?embedder=, so a page of one preview never runs inside another.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startProxy, startTlsServer, freePort, html, makeCertificate, tempDir, tlsListen, RAW_HOST, view, report,
} from './harness.mjs';
import { launch, selectedEngines, consoleKnown } from './engines.mjs';

for (const engine of selectedEngines()) {
  describe(`preview embedders (${engine})`, () => {
    let browser, proxy, hostServer, hostPort, proxyPort;
    const preview = (n) => `https://pr-${n}.preview.test:${hostPort}`;
    const sandboxFor = (embedder) =>
      `https://sandbox.preview-sandbox.test:${proxyPort}/sandbox.html?embedder=${encodeURIComponent(embedder)}`;

    before(async () => {
      [hostPort, proxyPort] = [await freePort(), await freePort()];
      const hosts = makeCertificate(tempDir(), ['*.preview.test']);
      const sandbox = makeCertificate(tempDir(), ['sandbox.preview-sandbox.test']);
      proxy = await startProxy(`${tlsListen(proxyPort, sandbox)}[[hosts]]
origin = "https://*.preview.test:${hostPort}"
sandbox = "sandbox.preview-sandbox.test:${proxyPort}"
`);
      hostServer = await startTlsServer({ '/raw': html(RAW_HOST) }, hosts, hostPort);
      browser = await launch(engine, { spki: [hosts.spki, sandbox.spki] });
    });

    after(async () => {
      await browser?.close();
      await hostServer?.close();
      assert.equal(await proxy?.stop(), 0);
    });

    /** Mounts `proxyUrl` in a page of preview `n`: whether sandbox-proxy-ready came within `wait` ms. */
    async function mountsIn(n, proxyUrl, wait) {
      const page = await browser.newPage();
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
      const page = await browser.newPage();
      try {
        await page.goto(`${preview(1)}/raw`);
        // Not percent-encoded: the relay must not read its own query, re-encoded, as another URL.
        const unencoded = `https://sandbox.preview-sandbox.test:${proxyPort}/sandbox.html?embedder=${preview(1)}`;
        await page.evaluate((u) => window.mountProxy({ proxyUrl: u }), unencoded);
        await page.evaluate(() => {
          window.loads = 0;
          document.querySelector('iframe').addEventListener('load', () => { window.loads += 1; });
        });
        await page.evaluate((h) => window.sendResource({ html: h }), view("report('mounted', true)"));
        assert.equal(await report(page, 'mounted'), true);
        await new Promise((r) => setTimeout(r, 500));
        assert.equal(await page.evaluate(() => window.loads), 0, 'the proxy page did not reload');
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
