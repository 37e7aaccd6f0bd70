// The signers hosts are given, held to the running service and to each other: the ES module
// (signer/policy-url.mjs), the Python module (signer/policy_url.py) and the openssl line of
// signer/README.md. A URL each signs is served its policy; any change to it is not; both
// answer every test vector of signer/vectors.json; and on generated URLs and declarations the
// two write the same URL byte for byte or refuse with the same reason, and the service serves
// every URL they write with exactly the policy signed.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { join } from 'node:path';
import { startTlsProxy, startProxy, makeCertificate, tlsListen, tempDir, freePort, ROOT } from './harness.mjs';
import { signPolicyUrl, cspParameter } from '../../signer/policy-url.mjs';

const KEY = '5e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f';
const OTHER_KEY = 'aa'.repeat(32);
const DECLARED = { connectDomains: ['https://api.example.com'] };
const WIDER = { connectDomains: ['https://api.example.com', 'https://evil.example'] };
const T = { timeout: 30_000 };
const SCHEME = readFileSync(join(ROOT, 'signer', 'README.md'), 'utf8');
const VECTORS = JSON.parse(readFileSync(join(ROOT, 'signer', 'vectors.json'), 'utf8'));
// A URL signed this long ago for 10 minutes has expired 100 s ago.
const EXPIRED_AGO_MS = 700_000;

/**
 * Signs each case with signer/policy_url.py in one Python process: a case is `{ url, csp, key,
 * expiresIn, maxLifetime, maxQueryBytes, now }` (now in ms, as the ES module takes it; an option
 * left out is the signer's default); each answer is the URL or `{ error }`.
 */
function pythonSign(cases) {
  const script = `
import json, sys
sys.dont_write_bytecode = True  # no __pycache__ left in signer/
sys.path.insert(0, sys.argv[1])
from policy_url import sign_policy_url
OPTIONS = {"expiresIn": "expires_in", "maxLifetime": "max_lifetime", "maxQueryBytes": "max_query_bytes"}
out = []
for case in json.load(sys.stdin):
    options = {name: case[option] for option, name in OPTIONS.items() if option in case}
    if "now" in case:
        options["now"] = case["now"] / 1000
    try:
        out.append(sign_policy_url(case["url"], case["csp"], key=case["key"], **options))
    except ValueError as error:
        out.append({"error": str(error).split(": ", 1)[1]})
print(json.dumps(out))`;
  const stdout = execFileSync('python3', ['-c', script, join(ROOT, 'signer')], {
    input: withNonFinite(cases), encoding: 'utf8', maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

/** JSON as Python's json module reads it: NaN and the infinities as its literals, not null. */
function withNonFinite(value) {
  const marked = JSON.stringify(value, (_, v) => (typeof v === 'number' && !Number.isFinite(v) ? `\u0000${v}\u0000` : v));
  return marked.replace(/"\\u0000(NaN|-?Infinity)\\u0000"/g, '$1');
}

async function esSign({ url, csp, key, expiresIn, maxLifetime, maxQueryBytes, now }) {
  try {
    return await signPolicyUrl(url, csp, { key, expiresIn, maxLifetime, maxQueryBytes, now });
  } catch (error) {
    // Without the function's name, which each language spells its own way.
    return { error: error.message.split(': ').slice(1).join(': ') };
  }
}

/** A vector of signer/vectors.json as a case of both signers, with the file's defaults. */
function vectorCase(vector) {
  const options = { expires_in: 'expiresIn', max_lifetime: 'maxLifetime', max_query_bytes: 'maxQueryBytes' };
  const found = Object.entries(options).filter(([name]) => name in vector).map(([name, option]) => [option, vector[name]]);
  return {
    url: vector.url, csp: vector.csp, key: 'key' in vector ? vector.key : VECTORS.key,
    now: ('now' in vector ? vector.now : VECTORS.now) * 1000, ...Object.fromEntries(found),
  };
}

/** The page's `Content-Security-Policy` and the relay's config, fetched as a browser would. */
function fetchPage(url, cert) {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1', port: target.port, path: target.pathname + target.search, servername: target.hostname,
      headers: { host: target.host }, ca: readFileSync(cert.cert),
    }, pageAnswer(resolve));
    req.on('error', reject);
    req.end();
  });
}

function pageAnswer(resolve) {
  return (res) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk) => { text += chunk; });
    res.on('end', () => {
      const config = text.match(/id="sandbox-config">([^<]*)</);
      resolve({ status: res.statusCode, csp: res.headers['content-security-policy'], config: config && JSON.parse(config[1]), text });
    });
  };
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
    const expired = await fetchPage(await signPolicyUrl(proxyUrl, DECLARED, { key: KEY, now: Date.now() - EXPIRED_AGO_MS }), cert);
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
      { url: proxyUrl, csp: DECLARED, key: KEY, now },
      { url: onLabel, csp: DECLARED, key: KEY, now },
      { url: proxyUrl, csp: DECLARED, key: KEY, now: now - EXPIRED_AGO_MS },
      { url: proxyUrl, csp: DECLARED, key: 'bb'.repeat(32), now },
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
});

describe('the test vectors (signer/vectors.json)', () => {
  const cases = VECTORS.vectors.map(vectorCase);
  const expected = VECTORS.vectors.map((v) => ('returns' in v ? v.returns : { error: v.refuses }));

  it('the ES module answers each vector', T, async () => {
    for (const [i, vector] of VECTORS.vectors.entries()) {
      assert.deepEqual(await esSign(cases[i]), expected[i], vector.name);
    }
  });

  it('the Python module answers each vector', T, () => {
    const answers = pythonSign(cases);
    for (const [i, vector] of VECTORS.vectors.entries()) {
      assert.deepEqual(answers[i], expected[i], vector.name);
    }
  });

  it('every URL a vector returns is one a browser writes the same, and the README works the first through', T, () => {
    for (const vector of VECTORS.vectors.filter((v) => 'returns' in v)) {
      assert.equal(new URL(vector.returns).href, vector.returns, vector.name);
    }
    const block = SCHEME.split('<!-- signer: first vector -->')[1]?.match(/```text\n([\s\S]*?)```/);
    assert.ok(block, 'signer/README.md works a vector through');
    const shown = Object.fromEntries(block[1].trim().split('\n').map((line) => line.split(/^(\w+)\s+/).slice(1)));
    const [first] = VECTORS.vectors;
    assert.equal(shown.url, first.url);
    assert.deepEqual(JSON.parse(shown.csp), first.csp);
    assert.equal(shown.key, VECTORS.key);
    assert.equal(shown.now, `${VECTORS.now} (expires_in 600)`);
    assert.equal(shown.returns, first.returns);
    const expires = new URL(first.returns).searchParams.get('expires');
    assert.equal(shown.message, `mcp-sandbox-proxy policy v1 LF ${new URL(first.url).host} LF ${expires} LF ${cspParameter(first.csp)}`);
  });
});

describe('the two signers on generated URLs and declarations, against the service', () => {
  // Every name the generator writes in a form a browser keeps, on each port it writes: each
  // signs with KEY or OTHER_KEY, and lets a URL live up to two hours (the generator states
  // that maximum for some cases). plain.sandbox.test signs nothing: the same `?csp=` there
  // is the policy a signed page must get.
  const NAMES = ['chat.sandbox.test', '127.0.0.1'];
  const PORTS = ['', ':80', ':8443', ':1'];
  let proxy, cert, agent, port;

  before(async () => {
    port = await freePort();
    cert = makeCertificate(tempDir(), ['chat.sandbox.test', '*.chat.sandbox.test', 'plain.sandbox.test']);
    const entries = NAMES.flatMap((name) => PORTS.map((p) => `[[hosts]]
origin = ["https://chat.example.com", "https://*.preview.test"]
sandbox = "${name}${p}"
per_server_subdomains = ${name === 'chat.sandbox.test'}
policy_keys = ["${KEY}", "${OTHER_KEY}"]
policy_max_lifetime = "2h"
page_paths = ["/", "/sandbox.html", "/mcp-app-sandbox", "/sandbox/", "/a/b.html"]
`));
    const plain = `[[hosts]]\norigin = "https://chat.example.com"\nsandbox = "plain.sandbox.test"\n`;
    proxy = await startProxy(`${tlsListen(port, cert)}${entries.join('')}${plain}`);
    agent = new Agent({ keepAlive: true, maxSockets: 8, ca: readFileSync(cert.cert) });
  });

  after(async () => {
    agent?.destroy();
    assert.equal(await proxy?.stop(), 0);
  });

  /** A page as a browser asks for `url`: over the service's port, with the URL's host. */
  function fetchAs(url) {
    const target = new URL(url);
    const servername = /^[0-9.]+$/.test(target.hostname) ? undefined : target.hostname;
    return new Promise((resolve, reject) => {
      const req = request({
        host: '127.0.0.1', port, path: target.pathname + target.search, servername, agent,
        headers: { host: target.host },
        // The name is checked by the service (SNI against Host); an IP address has no SAN here.
        checkServerIdentity: () => undefined,
      }, pageAnswer(resolve));
      req.on('error', reject);
      req.end();
    });
  }

  /** The view's policy in a page's header, without the report URL (it names the host served). */
  function viewPolicy(header) {
    // The page's own policy is the one with frame-ancestors, in whichever order they come.
    const view = header.split(/,\s*/).filter((policy) => !policy.startsWith('frame-ancestors'));
    assert.equal(view.length, 1, header);
    return view[0].replace(/; report-uri \S+/, '');
  }

  it('write the same bytes or refuse alike, and the service serves each URL with the policy signed', { timeout: 120_000 }, async (t) => {
    const cases = generatedCases(1500, Date.now());
    const started = Date.now();
    const fromPython = pythonSign(cases);
    const fromModule = await Promise.all(cases.map(esSign));
    const differ = cases.filter((_, i) => !sameAnswer(fromPython[i], fromModule[i]));
    assert.equal(differ.length, 0, `${differ.length} of ${cases.length} differ; the first:\n${
      JSON.stringify(differ[0])}\nPython: ${JSON.stringify(fromPython[cases.indexOf(differ[0])])}\nES:     ${JSON.stringify(fromModule[cases.indexOf(differ[0])])}`);
    const urls = fromModule.filter((answer) => typeof answer === 'string');
    for (const url of urls) assert.equal(new URL(url).href, url, 'a browser writes the URL as signed');

    const twins = new Map();
    const twin = (csp) => {
      if (!twins.has(csp)) twins.set(csp, fetchAs(`https://plain.sandbox.test/sandbox.html?csp=${encodeURIComponent(csp)}`));
      return twins.get(csp);
    };
    const failures = [];
    await inBatches(urls, 16, async (url) => {
      const page = await fetchAs(url);
      const csp = new URL(url).searchParams.get('csp');
      const fail = (why) => failures.push(`${url.slice(0, 300)}: ${why}`);
      if (page.status !== 200) return fail(`${page.status} ${page.text.slice(0, 200)}`);
      if (page.config.policyRefused !== null) return fail(page.config.policyRefused);
      if (csp === null) {
        if (page.config.applied !== null) fail('declares nothing, yet has a policy');
        return;
      }
      const expected = await twin(csp);
      assert.equal(expected.status, 200, expected.text);
      if (viewPolicy(page.csp) !== viewPolicy(expected.csp)) fail(`${viewPolicy(page.csp)} is not ${viewPolicy(expected.csp)}`);
      assert.deepEqual([page.config.applied, page.config.dropped], [expected.config.applied, expected.config.dropped], url);
    });
    assert.deepEqual(failures.slice(0, 5), [], `${failures.length} of ${urls.length} not served as signed`);

    // The generator must reach every side: URLs signed and unsigned, and inputs refused.
    const signed = urls.filter((url) => url.includes('&signature=')).length;
    const refused = fromModule.length - urls.length;
    assert.ok(signed > 300 && urls.length - signed > 30 && refused > 300, `${signed} signed, ${urls.length - signed} unsigned, ${refused} refused`);
    t.diagnostic(`${cases.length} cases: ${signed} signed, ${urls.length - signed} unsigned, ${refused} refused; ${urls.length + twins.size} pages in ${Date.now() - started} ms`);
  });
});

function sameAnswer(a, b) {
  return typeof a === 'string' ? a === b : typeof b === 'object' && a.error === b.error;
}

async function inBatches(items, width, each) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await each(items[next++]);
  };
  await Promise.all(Array.from({ length: width }, worker));
}

/**
 * mulberry32: the same cases on every run, so a failure can be replayed. (xorshift32 taken
 * modulo small numbers drew correlated choices: a good key came with a bad lifetime.)
 */
function rng(seed) {
  let state = seed >>> 0;
  return (n) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 2 ** 32) * n);
  };
}

/**
 * Proxy URLs and declarations, drawn the same on every run, signed at `now` (ms). URLs: names
 * in any case, per-server labels, punycode, IPv4 shorthands, percent-encoded names, IPv6,
 * trailing dots, users; default, odd and bad ports; paths with dot segments, backslashes and
 * percent-encoding; queries with signed parameters to replace, embedders, parameters twice,
 * bytes that are not UTF-8, padding up to the query limit; fragments the browser keeps and
 * ones it encodes. Declarations: every list, non-strings, empty lists, unknown keys, quotes,
 * backslashes, control characters, non-ASCII, an unpaired surrogate, entries long enough to
 * pass the limit. Keys good and bad; lifetimes, maxima and limits in range and out.
 */
function generatedCases(count, now) {
  const pick = rng(0x5eed);
  const one = (list) => list[pick(list.length)];
  // Each part is odd in one case of `oneIn`, so that about a third of the cases are signed.
  const either = (good, odd, oneIn) => (pick(oneIn) === 0 ? one(odd) : one(good));
  const schemes = ['https', 'https', 'https', 'HTTPS', 'Https', 'http'];
  const hosts = ['chat.sandbox.test', 'chat.sandbox.test', 'CHAT.Sandbox.Test', 'weather.chat.sandbox.test', 'Weather.CHAT.sandbox.test',
    'a1--b.chat.sandbox.test', 'xn--wtr-qla.chat.sandbox.test', '127.0.0.1'];
  const oddHosts = ['ch%61t.sandbox.test', 'chat.sandbox.test.', 'weather.chat.sandbox.test.', '127.1', '0x7f.0.0.1', '127.000.000.001',
    '2130706433', '[::1]', 'chät.sandbox.test', 'chat_1.sandbox.test', '-a.chat.sandbox.test', 'user@chat.sandbox.test',
    `${'a'.repeat(64)}.chat.sandbox.test`, 'chat.sandbox.0x1f', ''];
  const ports = ['', '', '', ':443', ':80', ':8443', ':1'];
  const oddPorts = [':08443', ':', ':0', ':65536', ':x'];
  const paths = ['/sandbox.html', '/sandbox.html', '/', '', '/mcp-app-sandbox', '/sandbox/', '/a/b.html'];
  const oddPaths = ['/a/../sandbox.html', '/./sandbox.html', '/sandbox.html/..', '/%73andbox.html', '\\sandbox.html', '/a\\b.html',
    '//sandbox.html', '/csp-report', '/sandbox.html;x'];
  const queries = ['', '', '', '?', '?embedder=https%3A%2F%2Fpr-7.preview.test', '?embedder=https://pr-7.preview.test', '?csp=old&x=1',
    '?a=b+c&a=d', '?signature=zz&expires=1&k', '?q=%zz', '?emoji=%F0%9F%98%80', '?bom=%EF%BB%BFx', '?t=a~b*c\'!(', '?=&&x', '?p=%2B%20',
    '?upgrade=1', '?theme=dark&csp=%7B%7D&csp=x', '?q=a"b<c>`d', '?EMBEDDER=x&Csp=y'];
  const oddQueries = ['?embedder=https%3A%2F%2Fa.preview.test&embedder=https%3A%2F%2Fb.preview.test', '?upgrade=1&upgrade=1', '?q=é', '?q=a b'];
  const fragments = ['', '', '', '#', '#frag', '#sandbox-kept=x', '#%20', '#a#b'];
  const oddFragments = ['#a b', '#a"b', '#<x>', '#a`b'];
  const entries = ['https://api.example.com', 'wss://live.example.com', '*.cdn.example.com', 'https://a.example:8443',
    'quote"d', 'back\\slash', 'tab\tnl\n', 'ctl\u0001\u001f', 'é中😀', '\u2028', 'del\u007f', '\ud800', 7, null, { x: 1 }];
  const lists = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'];
  const keys = [KEY, KEY, KEY, ` ${OTHER_KEY}\n`, KEY.toUpperCase()];
  const oddKeys = ['abc', 'zz'.repeat(32), 'ab'.repeat(129), `\u00a0${KEY}`, null];
  const lifetimes = [600, 600, undefined, 60];
  const oddLifetimes = [7200, 7201, 0, -5, 3600.7, NaN, Infinity, -Infinity, null, '600', 1e21, 2 ** 53];
  const maxima = [undefined, undefined, 7200];
  const oddMaxima = [0, 3600.5, NaN];
  const limits = [undefined, undefined, 16384];
  const oddLimits = [4096, 300, 0];
  return Array.from({ length: count }, () => {
    const scheme = one(schemes);
    // A browser never sends plain http to the service's TLS port, and the service takes 443,
    // its own port's default, as the default there: http://name:443 is left out.
    const port = either(scheme === 'http' ? ports.filter((p) => p !== ':443') : ports, oddPorts, 8);
    let query = either(queries, oddQueries, 8);
    const add = (param) => { query += `${query ? '&' : '?'}${param}`; };
    if (pick(10) === 0) add(`r=${Array.from({ length: 1 + pick(6) }, () => `%${pick(256).toString(16).padStart(2, '0')}`).join('')}`);
    // Padding to near the query limit, so both sides of it are reached.
    if (pick(10) === 0) add(`pad=${'p'.repeat(15_800 + pick(800))}`);
    const url = `${scheme}://${either(hosts, oddHosts, 8)}${port}${either(paths, oddPaths, 8)}${query}${either(fragments, oddFragments, 8)}`;
    let csp;
    switch (pick(16)) {
      case 0: csp = null; break;
      case 1: csp = one([[], 'x', 3, {}, { connectDomains: [] }, { toolDomains: ['x'] }]); break;
      default:
        csp = {};
        for (let l = pick(3); l >= 0; l--) {
          const list = pick(6) === 0 ? 'toolDomains' : one(lists);
          csp[list] = pick(10) === 0 ? 'not a list' : Array.from({ length: pick(8) === 0 ? 0 : 1 + pick(3) }, () => one(entries));
        }
        if (pick(12) === 0) csp.connectDomains = [`https://${'l'.repeat(4000 + pick(14_000))}.example`];
    }
    // The longest lifetime the stated maximum allows is one of the good ones.
    const maxLifetime = either(maxima, oddMaxima, 20);
    return {
      url, csp, key: either(keys, oddKeys, 16), maxLifetime,
      expiresIn: either([...lifetimes, maxLifetime ?? 3600], oddLifetimes, 12), maxQueryBytes: either(limits, oddLimits, 16),
      now: pick(20) === 0 ? one([-1, NaN, Infinity, 1e16]) : now + pick(1000),
    };
  });
}
