// The operator's per-host grant of browser features beyond the spec's permissions
// (`view_features`) in each engine: a view's requestFullscreen() after a real click succeeds
// where the host entry grants fullscreen and the host's iframe delegates it, and is refused
// where the entry grants none; in Chromium the view's own permissions policy allows exactly
// the granted features more than a view of an entry that grants none; a host that does not
// delegate a granted feature hears it from the relay.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture, view, report } from './harness.mjs';
import { selectedEngines, consoleKnown } from './engines.mjs';

const GRANTED = ['fullscreen', 'picture-in-picture'];

// A view that is one big button: a click asks for fullscreen, and says what it got. On load it
// says what its document may use: fullscreenEnabled, and in Chromium its allowed features.
const FULLSCREEN = view(`
document.body.style.margin = '0';
const button = document.createElement('button');
button.textContent = 'fullscreen';
button.style.cssText = 'width: 100vw; height: 100vh';
document.body.append(button);
button.addEventListener('click', () => {
  document.documentElement.requestFullscreen()
    .then(() => report('fullscreen', document.fullscreenElement ? 'entered' : 'odd'))
    .catch((e) => report('fullscreen', 'refused: ' + e.name));
});
const policy = document.permissionsPolicy || document.featurePolicy;
report('loaded', { enabled: document.fullscreenEnabled, allowed: policy ? policy.allowedFeatures().sort() : null });`);

for (const engine of selectedEngines()) {
  describe(`features granted to views (${engine})`, () => {
    const fx = serviceFixture(engine, {
      tls: ['granted.sandbox.test', 'plain.sandbox.test'],
      hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "granted.sandbox.test:${port}"
view_features = ${JSON.stringify(GRANTED)}
[[hosts]]
origin = "${hostOrigin}"
sandbox = "plain.sandbox.test:${port}"
`,
    });

    /** Mounts the fullscreen view for `entry` (its sandbox `tokens`) behind a host iframe that
     * delegates `allow`, clicks it, and gives what the view reported. */
    async function tryFullscreen(entry, { allow, tokens } = {}) {
      const page = await fx.browser.newPage();
      try {
        await page.goto(`${fx.hostOrigin}/raw`);
        await page.evaluate(() => { document.body.style.margin = '0'; });
        await page.evaluate((o) => window.mountProxy(o), { proxyUrl: fx.url(`${entry}.sandbox.test`), allow });
        await page.evaluate((r) => window.sendResource(r), { html: FULLSCREEN, sandbox: tokens });
        const loaded = await report(page, 'loaded');
        const box = await page.evaluate(() => {
          const r = document.getElementById('proxy').getBoundingClientRect();
          return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
        });
        await page.clickAt(box.x, box.y);
        return { loaded, fullscreen: await report(page, 'fullscreen'), console: page.console };
      } catch (error) {
        error.message += `\nconsole:\n${page.console.join('\n')}`;
        throw error;
      } finally {
        await page.close();
      }
    }

    const delegated = GRANTED.join('; ');

    it('a granted feature the host delegates reaches the view, same-origin and opaque', { timeout: 90_000 }, async () => {
      const sameOrigin = await tryFullscreen('granted', { allow: delegated });
      assert.equal(sameOrigin.loaded.enabled, true);
      assert.equal(sameOrigin.fullscreen, 'entered');
      const opaque = await tryFullscreen('granted', { allow: delegated, tokens: 'allow-scripts' });
      assert.equal(opaque.fullscreen, 'entered');
    });

    it('an entry that grants none keeps it from the view, whatever the host delegates', { timeout: 90_000 }, async () => {
      const plain = await tryFullscreen('plain', { allow: delegated });
      assert.equal(plain.loaded.enabled, false);
      assert.match(plain.fullscreen, /^refused: /);
    });

    if (engine === 'chromium') {
      it("the view's permissions policy allows exactly the granted features more", { timeout: 90_000 }, async () => {
        const granted = await tryFullscreen('granted', { allow: delegated });
        const plain = await tryFullscreen('plain', { allow: delegated });
        const more = granted.loaded.allowed.filter((f) => !plain.loaded.allowed.includes(f));
        const fewer = plain.loaded.allowed.filter((f) => !granted.loaded.allowed.includes(f));
        assert.deepEqual({ more, fewer }, { more: GRANTED, fewer: [] });
      });
    }

    it('a granted feature the host does not delegate is refused, and the relay says so', { timeout: 90_000 }, async () => {
      const undelegated = await tryFullscreen('granted', {});
      assert.match(undelegated.fullscreen, /^refused: /);
      if (consoleKnown(engine)) {
        assert.ok(undelegated.console.some((l) => l.includes('grants its views fullscreen') && l.includes('does not delegate')),
          undelegated.console.join('\n'));
      }
    });
  });
}
