// An opaque view's storage where the operator allows one in memory (`opaque_view_storage =
// "memory"`), in each engine: a view that reads a saved theme from localStorage at startup, and
// writes, renders with the opt-in and throws as today without it; its storage is its own (a
// later view finds nothing of it) and the page's policy gains no source for it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture, view, report, freshPage } from './harness.mjs';
import { selectedEngines } from './engines.mjs';

// What a view does at startup, each step said: read the saved theme, save one, and read back
// through every face of Storage; and whether an earlier view's item is still there.
const STARTUP = (mark) => `<!doctype html>${view(`
let outcome;
try {
  const found = { theme: localStorage.getItem('theme'), earlier: localStorage.getItem('mark') };
  localStorage.setItem('theme', 'dark');
  localStorage.mark = ${JSON.stringify(mark)};
  sessionStorage.setItem('tab', '1');
  outcome = { ...found, read: localStorage.getItem('theme'), named: localStorage.mark, length: localStorage.length,
    keys: Object.keys(localStorage).sort(), session: sessionStorage.getItem('tab'), mode: document.compatMode };
  localStorage.removeItem('theme');
  outcome.removed = localStorage.getItem('theme');
} catch (e) {
  outcome = 'threw: ' + e.name;
}
report('startup', outcome);`).replace('<!doctype html>', '')}`;

for (const engine of selectedEngines()) {
  describe(`opaque views' storage (${engine})`, () => {
    const fx = serviceFixture(engine, {
      tls: ['memory.sandbox.test', 'plain.sandbox.test'],
      hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "memory.sandbox.test:${port}"
opaque_view_storage = "memory"
[[hosts]]
origin = "${hostOrigin}"
sandbox = "plain.sandbox.test:${port}"
`,
    });

    async function startup(mark, page) {
      await page.evaluate((h) => window.sendResource({ html: h, sandbox: 'allow-scripts' }), STARTUP(mark));
      return report(page, 'startup');
    }

    /** The raw host in a fresh page, framing the proxy at `name`. */
    async function framed(t, name) {
      const page = await freshPage(fx.browser, t);
      await page.goto(`${fx.hostOrigin}/raw`);
      await page.evaluate((proxyUrl) => window.mountProxy({ proxyUrl }), fx.url(name));
      return page;
    }

    it('with the opt-in an opaque view reads and writes its own storage; a later view starts empty', { timeout: 60_000 }, async (t) => {
      const page = await framed(t, 'memory.sandbox.test');
      assert.deepEqual(await startup('first', page), {
        theme: null, earlier: null, read: 'dark', named: 'first', length: 2, keys: ['mark', 'theme'],
        session: '1', mode: 'CSS1Compat', removed: null,
      });
      await page.evaluate(() => { window.received.length = 0; });
      const second = await startup('second', page);
      assert.equal(second.earlier, null, 'nothing of the first view');
    });

    it('without it, the view throws as browsers make an opaque origin', { timeout: 60_000 }, async (t) => {
      const page = await framed(t, 'plain.sandbox.test');
      assert.equal(await startup('first', page), 'threw: SecurityError');
    });
  });
}
