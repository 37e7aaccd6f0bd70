// Policies bound to the host (`policy_keys`). Without it, a same-origin view chooses its own
// policy: it plants a kept resource and navigates its proxy page to a ?csp= of its choice, as
// SECURITY.md says. With it, in each engine, the service serves a ?csp= only with the host's
// signature and the relay never takes a kept resource. The signers hosts are given (the ES
// module in signer/ and the openssl line in docs/hosts.md) are held to the running service.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { serviceFixture, startTlsProxy, freePort, ROOT, view, report } from './harness.mjs';
import { selectedEngines, consoleKnown, until } from './engines.mjs';
import { signPolicyUrl, cspParameter } from '../../signer/policy-url.mjs';

const KEY = '5e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f';
const OTHER_KEY = 'aa'.repeat(32);
const DECLARED = { connectDomains: ['https://api.example.com'] };
const WIDER = { connectDomains: ['https://api.example.com', 'https://evil.example'] };
const T = { timeout: 30_000 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The page's `Content-Security-Policy` and the relay's config, fetched as a browser would. */
function fetchPage(url, cert) {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port: target.port, path: target.pathname + target.search, servername: target.hostname,
      headers: { host: target.host }, ca: readFileSync(cert.cert),
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => {
        const config = text.match(/id="sandbox-config">([^<]*)</);
        resolve({ status: res.statusCode, csp: res.headers['content-security-policy'], config: config && JSON.parse(config[1]) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The docs' openssl line, run as written, with the values a host would give it. */
function opensslSignature(values) {
  const docs = readFileSync(join(ROOT, 'docs', 'hosts.md'), 'utf8');
  const block = docs.match(/<!-- signer: openssl -->\s*```sh\n([\s\S]*?)```/);
  assert.ok(block, 'docs/hosts.md shows the openssl signer');
  return execFileSync('sh', ['-c', block[1]], { env: { ...process.env, ...values } }).toString().trim();
}

describe('the host signers against the service', () => {
  let proxy, cert, proxyUrl;

  before(async () => {
    const port = await freePort();
    proxyUrl = `https://chat.sandbox.test:${port}/sandbox.html`;
    ({ proxy, cert } = await startTlsProxy({ hostOrigin: 'https://chat.example.com', port, perServer: true, hostKeys: `policy_keys = ["${OTHER_KEY}", "${KEY}"]` }));
  });

  after(async () => assert.equal(await proxy?.stop(), 0));

  it('a URL the ES module signs is served its policy; any change to it is not', T, async () => {
    const signed = await signPolicyUrl(proxyUrl, DECLARED, { key: KEY });
    const served = await fetchPage(signed, cert);
    assert.equal(served.status, 200);
    assert.match(served.csp, /connect-src [^;,]*https:\/\/api\.example\.com/);
    assert.equal(served.config.policyRefused, null);
    const url = new URL(signed);
    const tampered = [
      ['csp', JSON.stringify(WIDER)],
      ['expires', String(Number(url.searchParams.get('expires')) + 1)],
      ['signature', url.searchParams.get('signature').replace(/^./, (c) => (c === '0' ? '1' : '0'))],
    ];
    for (const [name, value] of tampered) {
      const changed = new URL(signed);
      changed.searchParams.set(name, value);
      const refused = await fetchPage(changed.href, cert);
      assert.equal(refused.status, 200, name);
      assert.doesNotMatch(refused.csp, /api\.example\.com/, `${name} changed: the default policy`);
      assert.match(refused.config.policyRefused, /does not match/, name);
    }
    const expired = await fetchPage(await signPolicyUrl(proxyUrl, DECLARED, { key: KEY, expiresIn: -5 }), cert);
    assert.match(expired.config.policyRefused, /expired \d+ s ago/);
    const wrongKey = await fetchPage(await signPolicyUrl(proxyUrl, DECLARED, { key: 'bb'.repeat(32) }), cert);
    assert.match(wrongKey.config.policyRefused, /does not match/);
  });

  it('a URL signed for one server\'s label is served its policy there and on no other name', T, async () => {
    const onLabel = (label) => proxyUrl.replace('//chat.', `//${label}.chat.`);
    const weather = await signPolicyUrl(onLabel('weather'), DECLARED, { key: KEY });
    const served = await fetchPage(weather, cert);
    assert.equal(served.config.policyRefused, null);
    assert.match(served.csp, /https:\/\/api\.example\.com/);
    const query = new URL(weather).search;
    for (const other of [onLabel('mail'), proxyUrl]) {
      const replayed = await fetchPage(`${other}${query}`, cert);
      assert.doesNotMatch(replayed.csp, /api\.example\.com/, `${other}: the default policy`);
      assert.match(replayed.config.policyRefused, /does not match/, other);
    }
  });

  it('a resource that declares nothing needs no signature, and non-strings are left out', T, async () => {
    assert.equal(await signPolicyUrl(proxyUrl, { connectDomains: [] }, { key: KEY }), proxyUrl);
    assert.equal(await signPolicyUrl(proxyUrl, undefined, { key: KEY }), proxyUrl);
    assert.equal(cspParameter({ connectDomains: ['https://a.example', 7], other: ['x'] }), '{"connectDomains":["https://a.example"]}');
    await assert.rejects(signPolicyUrl(proxyUrl, DECLARED, { key: 'abc' }), /the key must be/);
  });

  it('the openssl line in docs/hosts.md signs as the service verifies', T, async () => {
    const csp = cspParameter(DECLARED);
    const expires = String(Math.floor(Date.now() / 1000) + 600);
    const signature = opensslSignature({ POLICY_KEY: KEY, SANDBOX: new URL(proxyUrl).host, EXPIRES: expires, CSP: csp });
    assert.match(signature, /^[0-9a-f]{64}$/);
    const url = new URL(proxyUrl);
    url.searchParams.set('csp', csp);
    url.searchParams.set('expires', expires);
    url.searchParams.set('signature', signature);
    const served = await fetchPage(url.href, cert);
    assert.equal(served.config.policyRefused, null);
    assert.match(served.csp, /https:\/\/api\.example\.com/);
    // And both signers agree byte for byte.
    const fromModule = new URL(await signPolicyUrl(proxyUrl, DECLARED, { key: KEY, now: Number(expires) * 1000 - 600_000 }));
    assert.equal(fromModule.searchParams.get('signature'), signature);
  });
});

// The view the attack mounts: it reports the policy of the page it runs in.
const POLICY_REPORT = "report('planted-policy', JSON.parse(parent.document.getElementById('sandbox-config').textContent).applied)";

/**
 * A same-origin view that plants a kept resource and navigates its proxy page, by a script it
 * writes into the page, to `target(currentUrl)` with the fragment naming the planted entry.
 */
function plantingView(target) {
  const planted = JSON.stringify(view(POLICY_REPORT)).replaceAll('</', '<\\/');
  return view(`
    sessionStorage.setItem('mcp-sandbox-proxy:kept:planted', JSON.stringify({ at: Date.now(), resource: { html: ${planted} }, held: [] }));
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
    const expired = await signPolicyUrl(signedUrl(), DECLARED, { key: KEY, expiresIn: -60 });
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
      assert.match(logged, /Sign a \?csp= with these domains on the host's backend/);
    }
  });
});
