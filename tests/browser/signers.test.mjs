// The signers hosts are given, held to the running service and to each other: the ES module
// (signer/policy-url.mjs), the Python module (signer/policy_url.py) and the openssl line of
// signer/README.md. A URL each signs is served its policy; any change to it is not; the two
// modules write the same URL byte for byte on generated URLs and declarations, and each
// reproduces the README's test vectors.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { startTlsProxy, freePort, ROOT } from './harness.mjs';
import { signPolicyUrl, cspParameter } from '../../signer/policy-url.mjs';

const KEY = '5e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f';
const OTHER_KEY = 'aa'.repeat(32);
const DECLARED = { connectDomains: ['https://api.example.com'] };
const WIDER = { connectDomains: ['https://api.example.com', 'https://evil.example'] };
const T = { timeout: 30_000 };
const SCHEME = readFileSync(join(ROOT, 'signer', 'README.md'), 'utf8');

/**
 * Signs each case with signer/policy_url.py in one Python process: a case is `{ url, csp, key,
 * expiresIn, now }` (now in ms, as the ES module takes it); each answer is the URL or
 * `{ error }`.
 */
function pythonSign(cases) {
  const script = `
import json, sys
sys.path.insert(0, sys.argv[1])
from policy_url import sign_policy_url
out = []
for case in json.load(sys.stdin):
    try:
        out.append(sign_policy_url(case["url"], case["csp"], key=case["key"],
                                   expires_in=case["expiresIn"], now=case["now"] / 1000))
    except ValueError as error:
        out.append({"error": str(error).split(": ", 1)[1]})
print(json.dumps(out))`;
  const stdout = execFileSync('python3', ['-c', script, join(ROOT, 'signer')], {
    input: JSON.stringify(cases), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

async function esSign({ url, csp, key, expiresIn, now }) {
  try {
    return await signPolicyUrl(url, csp, { key, expiresIn, now });
  } catch (error) {
    // Without the function's name, which each language spells its own way.
    return { error: error.message.split(': ').slice(1).join(': ') };
  }
}

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

/** The README's openssl line, run as written, with the values a host would give it. */
function opensslSignature(values) {
  const block = SCHEME.match(/<!-- signer: openssl -->\s*```sh\n([\s\S]*?)```/);
  assert.ok(block, 'signer/README.md shows the openssl signer');
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

  it('the openssl line in signer/README.md signs as the service verifies', T, async () => {
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

  it('a URL the Python module signs is served its policy, on its label and nowhere else', T, async () => {
    const now = Date.now();
    const onLabel = proxyUrl.replace('//chat.', '//weather.chat.');
    const [plain, labelled, expired, wrongKey] = pythonSign([
      { url: proxyUrl, csp: DECLARED, key: KEY, expiresIn: 600, now },
      { url: onLabel, csp: DECLARED, key: KEY, expiresIn: 600, now },
      { url: proxyUrl, csp: DECLARED, key: KEY, expiresIn: -5, now },
      { url: proxyUrl, csp: DECLARED, key: 'bb'.repeat(32), expiresIn: 600, now },
    ]);
    for (const signed of [plain, labelled]) {
      const served = await fetchPage(signed, cert);
      assert.equal(served.config.policyRefused, null, signed);
      assert.match(served.csp, /connect-src [^;,]*https:\/\/api\.example\.com/);
    }
    const replayed = await fetchPage(`${proxyUrl}${new URL(labelled).search}`, cert);
    assert.match(replayed.config.policyRefused, /does not match/);
    assert.match((await fetchPage(expired, cert)).config.policyRefused, /expired \d+ s ago/);
    assert.match((await fetchPage(wrongKey, cert)).config.policyRefused, /does not match/);
  });

  it('the two modules write the same URL byte for byte, and the README\'s test vectors', T, async () => {
    const table = SCHEME.split('<!-- signer: vectors -->')[1].split('\n\n')[0];
    const vectors = table.split('\n').filter((line) => line.startsWith('| `'))
      .map((line) => line.split(' | ').map((cell) => cell.replace(/^\|? ?`|`$|` \|$/g, '')));
    assert.equal(vectors.length, 3, table);
    const fixed = { key: KEY, expiresIn: 600, now: 1796284200 * 1000 };
    const vectorCases = vectors.map(([url, csp]) => ({ url, csp: JSON.parse(csp), ...fixed }));
    const generated = generatedCases(1000);
    const cases = [...vectorCases, ...generated];
    const fromPython = pythonSign(cases);
    const fromModule = await Promise.all(cases.map(esSign));
    vectors.forEach(([, , expected], i) => {
      assert.equal(fromModule[i], expected, `ES module, vector ${i + 1}`);
      assert.equal(fromPython[i], expected, `Python module, vector ${i + 1}`);
    });
    for (let i = 0; i < cases.length; i++) {
      assert.deepEqual(fromPython[i], fromModule[i], JSON.stringify(cases[i]));
    }
    // The generator must reach both sides: URLs signed, and inputs refused or left unsigned.
    const signedCount = fromModule.filter((u) => typeof u === 'string' && u.includes('signature=')).length;
    assert.ok(signedCount > 200 && signedCount < cases.length - 200, `${signedCount} of ${cases.length} signed`);
  });
});

/** xorshift32: the same cases on every run, so a failure can be replayed. */
function rng(seed) {
  let x = seed;
  return (n) => {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    return x % n;
  };
}

/**
 * Proxy URLs (names in any case, default and other ports, labels, paths, queries with
 * parameters to keep, to replace and to re-encode, fragments) and declarations (every list,
 * non-strings, empty lists, unknown keys, quotes, backslashes, control characters, non-ASCII,
 * an unpaired surrogate), with keys good and bad.
 */
function generatedCases(count) {
  const pick = rng(0x5eed);
  const one = (list) => list[pick(list.length)];
  const hosts = ['chat.sandbox.test', 'CHAT.Sandbox.Test', 'weather.chat.sandbox.test', 'sandbox.localhost', '127.0.0.1', '[::1]'];
  const ports = ['', ':443', ':80', ':8443', ':1'];
  const paths = ['/sandbox.html', '/', '', '/mcp-app-sandbox', '/a/b.html'];
  const queries = ['', '?embedder=https%3A%2F%2Fpr-7.preview.test', '?csp=old&x=1', '?a=b+c&a=d', '?signature=zz&expires=1&k',
    '?q=%zz', '?emoji=%F0%9F%98%80', '?t=a~b*c', '?=&&x', '?p=%2B%20'];
  const fragments = ['', '', '#', '#frag'];
  const entries = ['https://api.example.com', 'wss://live.example.com', '*.cdn.example.com', 'https://a.example:8443',
    'quote"d', 'back\\slash', 'tab\tnl\n', 'ctl\u0001\u001f', 'é中😀', '\u2028', 'del\u007f', '\ud800', 7, null, { x: 1 }];
  const lists = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains', 'toolDomains'];
  const keys = [KEY, KEY, KEY, ` ${OTHER_KEY}\n`, 'AB'.repeat(64), 'abc', 'zz'.repeat(32), 'ab'.repeat(129)];
  return Array.from({ length: count }, () => {
    const scheme = one(['https', 'https', 'http', 'HTTPS']);
    const url = `${scheme}://${one(hosts)}${one(ports)}${one(paths)}${one(queries)}${one(fragments)}`;
    let csp;
    switch (pick(6)) {
      case 0: csp = null; break;
      case 1: csp = one([[], 'x', 3, {}]); break;
      default:
        csp = {};
        for (let l = pick(4); l >= 0; l--) {
          csp[one(lists)] = pick(8) === 0 ? 'not a list' : Array.from({ length: pick(4) }, () => one(entries));
        }
    }
    return { url, csp, key: one(keys), expiresIn: one([600, 60, 0, -5, 3600.7]), now: 1796284200123 + pick(100_000) };
  });
}

