// Preview and staging embedders in each engine: a host entry whose origin is a pattern
// (https://*.preview.test:PORT) serves each preview a page pinned to the exact origin the page
// names in ?embedder=, so a page of one preview never runs inside another.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startProxy, startTlsServer, freePort, html, makeCertificate, tempDir, tlsListen, RAW_HOST } from './harness.mjs';
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

    /** Mounts `proxyUrl` in a page of preview `n`: whether sandbox-proxy-ready came. */
    async function mountsIn(n, proxyUrl) {
      const page = await browser.newPage();
      try {
        await page.goto(`${preview(n)}/raw`);
        const ready = await page.evaluate((u) => Promise.race([
          window.mountProxy({ proxyUrl: u }).then(() => true),
          new Promise((resolve) => setTimeout(() => resolve(false), 3000)),
        ]), proxyUrl);
        return { ready, console: page.console };
      } finally {
        await page.close();
      }
    }

    it('each preview mounts a page pinned to itself', { timeout: 60_000 }, async () => {
      for (const n of [1, 2]) {
        const { ready, console } = await mountsIn(n, sandboxFor(preview(n)));
        assert.equal(ready, true, `preview ${n}:\n${console.join('\n')}`);
      }
    });

    it("a preview cannot run a page rendered for another preview", { timeout: 60_000 }, async () => {
      const { ready, console } = await mountsIn(2, sandboxFor(preview(1)));
      assert.equal(ready, false, 'no sandbox-proxy-ready');
      if (consoleKnown(engine)) assert.ok(console.some((m) => m.includes('frame-ancestors')), console.join('\n'));
    });
  });
}
