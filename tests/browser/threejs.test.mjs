// The real three.js example view (@modelcontextprotocol/server-threejs) builds its scene with
// `new Function`: it draws only on a host entry with view_opt_ins = ["unsafe-eval"]. Without the
// opt-in, the host receives the CSP violation and the relay names the opt-in in the console.
// The real AppBridge host, each browser engine.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serviceFixture, startSdkHost, showOnSdkHost, ROOT } from './harness.mjs';
import { selectedEngines, until, collectHooked } from './engines.mjs';

const THREEJS_VIEW = readFileSync(join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-threejs', 'dist', 'mcp-app.html'), 'utf8');

// Not WebKitGTK: under Xvfb its browser process sometimes dies while the three.js view runs
// (its WebDriver then waits forever, and the whole suite with it). Seen twice in about fifteen
// runs, once in CI; the cause is not found. So the relay's WebKit-only path (an eval refusal
// reported on the proxy page's document) has no test of its own until this runs there again.
for (const engine of selectedEngines().filter((e) => e !== 'webkit')) {
  describe(`the three.js example view (${engine})`, () => {
    const fx = serviceFixture(engine, {
      hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "eval.sandbox.test:${port}"
view_opt_ins = ["unsafe-eval"]
[[hosts]]
origin = "${hostOrigin}"
sandbox = "strict.sandbox.test:${port}"
`,
      host: ({ hostPort }) => startSdkHost(hostPort),
      launchOptions: { webgl: true },
    });

    /** The SDK host showing the three.js view through `sandbox`; the page and the view's frame. */
    async function show(t, sandbox) {
      const proxyUrl = `http://${sandbox}:${fx.port}/sandbox.html`;
      const config = { proxyUrl, viewHtml: THREEJS_VIEW, firstTime: 'first', secondTime: 'second' };
      const { page, proxyFrame } = await showOnSdkHost(fx, t, sandbox, config);
      const scene = async () => {
        for (const frame of await page.frames()) {
          const state = await frame.evaluate(() => {
            const canvas = document.querySelector('#threejs-canvas');
            const error = document.querySelector('.error-overlay');
            return canvas || error ? { width: canvas?.width ?? 0, height: canvas?.height ?? 0, error: error?.textContent ?? null } : null;
          }).catch(() => null);
          if (state) return state;
        }
        return null;
      };
      return { page, proxyFrame, scene };
    }

    it('with view_opt_ins = ["unsafe-eval"]: the scene is drawn', { timeout: 90_000 }, async (t) => {
      const { page, scene } = await show(t, 'eval.sandbox.test');
      const drawn = await until(async () => {
        const now = await scene();
        return now && (now.error || (now.width > 0 && now.height > 0)) ? now : null;
      }, 'the scene drawn, or an error', 60_000);
      assert.equal(drawn.error, null, 'no error over the canvas');
      assert.ok(drawn.width > 0 && drawn.height > 0, JSON.stringify(drawn));
      const host = await page.evaluate(() => window.host);
      assert.deepEqual(host.violations.filter((v) => v.blockedURI === 'eval'), []);
    });

    it('without it: the host hears the violation and the console names the opt-in', { timeout: 90_000 }, async (t) => {
      const { page, proxyFrame, scene } = await show(t, 'strict.sandbox.test');
      const violation = await until(async () => {
        const host = await page.evaluate(() => window.host);
        return host?.violations.find((v) => v.effectiveDirective === 'script-src' && v.blockedURI === 'eval');
      }, 'the eval violation reaching the host', 60_000).catch(async (e) => {
        e.message += `; the host heard: ${JSON.stringify(await page.evaluate(() => window.host.violations))}`;
        throw e;
      });
      assert.equal(violation.effectiveDirective, 'script-src');
      const shown = await until(async () => (await scene())?.error, 'the view\'s error text', 30_000);
      assert.match(shown, /eval|Content Security Policy|CSP/i);
      const logged = await collectHooked(proxyFrame);
      assert.ok(logged.some((m) => m.includes('view_opt_ins = ["unsafe-eval"]')), logged.join('\n'));
    });
  });
}
