// Policies bound to the host (`policy_keys`). Without it, a same-origin view chooses its own
// policy: it plants a kept resource and navigates its proxy page to a ?csp= of its choice, as
// SECURITY.md says. With it, in each engine, the service serves a ?csp= only with the host's
// signature and the relay never takes a kept resource. The signers themselves are held to the
// service in signers.test.mjs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture, view, report } from './harness.mjs';
import { selectedEngines, consoleKnown, until } from './engines.mjs';
import { signPolicyUrl } from '../../signer/policy-url.mjs';

const KEY = '5e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f';
const DECLARED = { connectDomains: ['https://api.example.com'] };
const WIDER = { connectDomains: ['https://api.example.com', 'https://evil.example'] };
const T = { timeout: 30_000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The view the attack mounts: it reports the policy of the page it runs in.
const POLICY_REPORT = "report('planted-policy', JSON.parse(parent.document.getElementById('sandbox-config').textContent).applied)";

/**
 * A same-origin view that plants a kept resource and navigates its proxy page, by a script it
 * writes into the page, to `target(currentUrl)` with the fragment naming the planted entry.
 */
function plantingView(target) {
  const planted = JSON.stringify(view(POLICY_REPORT)).replaceAll('</', '<\\/');
  return view(`
    parent.name = 'mcp-sandbox-proxy:kept:planted:""\\n' + JSON.stringify({ resource: { html: ${planted} }, held: [] });
    const url = new URL((${target})(parent.location.href));
    url.hash = 'sandbox-kept=planted';
    report('navigating', url.href);
    // A script the view writes into its page runs as the page: the navigation is the page's own.
    const script = parent.document.createElement('script');
    script.textContent = 'setTimeout(() => location.replace(' + JSON.stringify(url.href) + '), 50)';
    parent.document.body.appendChild(script);`);
}

const TO_WIDER = `(href) => { const u = new URL(href); u.search = '?csp=' + encodeURIComponent(${JSON.stringify(JSON.stringify(WIDER))}); return u.href; }`;
// Another parameter beside the signed ones makes it a new load (a fragment alone would not).
const TO_ITSELF = "(href) => { const u = new URL(href); u.searchParams.set('again', '1'); return u.href; }";

for (const engine of selectedEngines()) describe(`policies bound to the host (${engine})`, () => {
  // One service, two host entries for the same host page: one signs its policies, one does not.
  const fx = serviceFixture(engine, {
    tls: ['unsigned.sandbox.test', 'signed.sandbox.test'],
    hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "unsigned.sandbox.test:${port}"
[[hosts]]
origin = "${hostOrigin}"
sandbox = "signed.sandbox.test:${port}"
policy_keys = ["${KEY}"]
`,
  });
  const unsignedUrl = () => fx.url('unsigned.sandbox.test');
  const signedUrl = () => fx.url('signed.sandbox.test');

  /** A fresh host page with the proxy at `proxyUrl` mounted; closed after `t`. */
  async function hostPage(t, proxyUrl) {
    const page = await fx.browser.newPage();
    t.after(async () => {
      if (t.error !== undefined) console.log(`console of ${t.name}:\n${page.console.join('\n')}`);
      await page.close();
    });
    await page.goto(`${fx.hostOrigin}/raw`);
    await page.evaluate((o) => window.mountProxy(o), { proxyUrl });
    return page;
  }

  const readies = (page) => page.evaluate(() => window.received.filter(
    (m) => m.data && m.data.method === 'ui/notifications/sandbox-proxy-ready').length);

  it('without policy_keys a same-origin view chooses its own policy (as SECURITY.md says)', T, async (t) => {
    const page = await hostPage(t, unsignedUrl());
    await page.evaluate((h) => window.sendResource({ html: h }), plantingView(TO_WIDER));
    await report(page, 'navigating');
    const applied = await report(page, 'planted-policy');
    assert.ok(applied.connectDomains.includes('https://evil.example'), 'the planted view runs under the policy it chose');
    assert.equal(await readies(page), 1, 'and the host heard nothing');
  });

  for (const [name, target] of [['a wider unsigned ?csp=', TO_WIDER], ['its own signed URL', TO_ITSELF]]) {
    it(`with policy_keys a view navigating its page to ${name} mounts nothing it planted`, T, async (t) => {
      const page = await hostPage(t, await signPolicyUrl(signedUrl(), DECLARED, { key: KEY }));
      await page.evaluate((h) => window.sendResource({ html: h }), plantingView(target));
      await report(page, 'navigating');
      // The new page says it is ready, as any page the host did not get a resource from yet.
      await until(async () => (await readies(page)) === 2, 'a second sandbox-proxy-ready');
      await sleep(300);
      const reported = await page.evaluate(() => window.received.filter((m) => m.data.method === 'test/report').map((m) => m.data.params.key));
      assert.ok(!reported.includes('planted-policy'), 'the planted resource was not mounted');
      const frame = await until(async () => (await page.frames()).find((f) => f.url.startsWith(signedUrl())), 'the proxy frame');
      const state = await frame.evaluate(() => ({
        views: document.querySelectorAll('iframe').length,
        config: JSON.parse(document.getElementById('sandbox-config').textContent),
      }));
      assert.equal(state.views, 0, 'nothing was mounted');
      if (target === TO_WIDER) {
        assert.equal(state.config.applied, null, 'the unsigned ?csp= got the spec default policy');
        assert.match(state.config.policyRefused, /no \?signature=/);
      } else {
        assert.deepEqual(state.config.applied.connectDomains, DECLARED.connectDomains, 'the host\'s own signed policy, no wider');
      }
      if (consoleKnown(engine)) {
        assert.ok(page.console.some((m) => m.includes('ignored a kept resource')), page.console.join('\n'));
      }
    });
  }

  it('an expired signature: the default policy, the relay says why, and never reloads', T, async (t) => {
    // Signed 11 minutes ago for 10: expired a minute ago (the signer takes no lifetime below 1 s).
    const expired = await signPolicyUrl(signedUrl(), DECLARED, { key: KEY, now: Date.now() - 660_000 });
    const page = await hostPage(t, expired);
    // The host sends the csp in sandbox-resource-ready too: a relay that reloaded for it would
    // say ready again on its new page.
    await page.evaluate((o) => window.sendResource({ html: o.html, csp: o.csp }), { html: view("report('mounted', true)"), csp: WIDER });
    assert.equal(await report(page, 'mounted'), true);
    const frame = await until(async () => (await page.frames()).find((f) => f.url.startsWith(signedUrl())), 'the proxy frame');
    const href = await frame.evaluate(() => location.href);
    assert.equal(new URL(href).searchParams.get('signature'), new URL(expired).searchParams.get('signature'));
    assert.ok(!href.includes('upgrade='), 'the page did not reload');
    assert.equal(await readies(page), 1);
    const config = await frame.evaluate(() => JSON.parse(document.getElementById('sandbox-config').textContent));
    assert.equal(config.applied, null);
    assert.match(config.policyRefused, /expired \d+ s ago/);
    if (consoleKnown(engine)) {
      const logged = page.console.join('\n');
      assert.match(logged, /this page has the spec's default policy, not its \?csp=: the signature expired/);
      assert.match(logged, /the signature of this page's \?csp= was refused \(see above\)\. See \S+#missing-domains/);
    }
  });
});
