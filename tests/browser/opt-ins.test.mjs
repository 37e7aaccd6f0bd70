// The operator's per-host view opt-ins (`view_opt_ins`) in each engine: a view gets a blob:
// worker, a blob: image and WebAssembly compilation only from a host entry that opts in, and
// none of them from one that does not.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture, view, report } from './harness.mjs';
import { selectedEngines } from './engines.mjs';

// Each capability, tried by the view itself; each answers what happened. A capability that
// neither works nor fails within 8 s counts as blocked: well within report()'s 10 s, and far
// longer than a blob worker, a blob image or a tiny module take on a loaded machine.
const TRIES = view(`
const outcome = (promise) => Promise.race([promise, new Promise((r) => setTimeout(() => r('blocked'), 8_000))])
  .catch(() => 'blocked');
const blobUrl = (text, type) => URL.createObjectURL(new Blob([text], { type }));
const worker = outcome(new Promise((resolve) => {
  const w = new Worker(blobUrl('postMessage(42)', 'text/javascript'));
  w.onmessage = (e) => resolve(e.data === 42 ? 'ran' : 'odd');
  w.onerror = () => resolve('blocked');
}));
const image = outcome(new Promise((resolve) => {
  const img = new Image();
  img.onload = () => resolve('loaded');
  img.onerror = () => resolve('blocked');
  img.src = blobUrl('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>', 'image/svg+xml');
}));
const wasm = outcome(WebAssembly.compile(new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0])).then(() => 'compiled'));
Promise.all([worker, image, wasm]).then(([worker, image, wasm]) => report('tries', { worker, image, wasm }));`);

for (const engine of selectedEngines()) {
  describe(`view opt-ins (${engine})`, () => {
    const fx = serviceFixture(engine, {
      tls: ['on.sandbox.test', 'off.sandbox.test'],
      hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "on.sandbox.test:${port}"
view_opt_ins = ["worker-blob", "blob-media", "wasm-unsafe-eval"]
[[hosts]]
origin = "${hostOrigin}"
sandbox = "off.sandbox.test:${port}"
`,
    });

    for (const [name, expected] of [
      ['on', { worker: 'ran', image: 'loaded', wasm: 'compiled' }],
      // WebKitGTK 2.50 compiles WebAssembly whatever the policy says: there, the opt-in changes
      // nothing for it (docs/configuration.md says so).
      ['off', { worker: 'blocked', image: 'blocked', wasm: engine === 'webkit' ? 'compiled' : 'blocked' }],
    ]) {
      it(`a host entry with the opt-ins ${name}`, { timeout: 60_000 }, async () => {
        const page = await fx.browser.newPage();
        try {
          await page.goto(`${fx.hostOrigin}/raw`);
          await page.evaluate((proxyUrl) => window.mountProxy({ proxyUrl }), fx.url(`${name}.sandbox.test`));
          await page.evaluate((h) => window.sendResource({ html: h }), TRIES);
          assert.deepEqual(await report(page, 'tries'), expected);
        } catch (error) {
          error.message += `\nconsole:\n${page.console.join('\n')}`;
          throw error;
        } finally {
          await page.close();
        }
      });
    }
  });
}
