// The payload shapes real hosts send in sandbox-resource-ready, read into the spec's: the AI
// SDK's policy string and allow string, the Inspector's src, and what cannot be read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadRelay, pageConfig } from './load.mjs';

const plain = (value) => JSON.parse(JSON.stringify(value));

describe('a csp policy string is read into the four lists, never wider', () => {
  const { cspFromPolicy, logged } = loadRelay(['cspFromPolicy']);

  it("the AI SDK's policy: each list from its directive, resources only where every resource directive has them", () => {
    // As @ai-sdk/react 4.0 writes it (getMCPAppCSP), trailing spaces included.
    const policy = "default-src 'none'; base-uri 'self'; form-action 'none'; " +
      "script-src 'unsafe-inline' 'self' https://cdn.example.com; style-src 'unsafe-inline' 'self' https://cdn.example.com; " +
      "connect-src 'self' https://api.example.com wss://live.example.com; img-src 'self' data: https://cdn.example.com https://img.example.com; " +
      "font-src 'self' data: https://cdn.example.com; media-src 'self' data: https://cdn.example.com; frame-src 'self' ";
    assert.deepEqual(plain(cspFromPolicy(policy)), {
      connectDomains: ['https://api.example.com', 'wss://live.example.com'],
      resourceDomains: ['https://cdn.example.com'],
      frameDomains: [],
      baseUriDomains: [],
    });
  });

  it('keywords, nonces, hashes, bare schemes and * are dropped; CSP fallbacks apply; the first directive of a name wins', () => {
    const policy = "default-src https://all.example.com 'self' *; connect-src https: * 'nonce-x' https://a.example.com; " +
      "connect-src https://second.example.com; child-src https://frame.example.com; BASE-URI https://base.example.com";
    assert.deepEqual(plain(cspFromPolicy(policy)), {
      connectDomains: ['https://a.example.com'],
      // child-src, before default-src, governs workers, which resource domains reach too.
      resourceDomains: [],
      frameDomains: ['https://frame.example.com'],
      baseUriDomains: ['https://base.example.com'],
    });
  });

  it('without a directive for a list, and without default-src, that list is empty (not "anything")', () => {
    assert.deepEqual(plain(cspFromPolicy('script-src https://cdn.example.com')), {
      connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [],
    });
  });

  it('several policies all apply: a source must be in each', () => {
    const read = cspFromPolicy('connect-src https://a.example.com https://b.example.com, connect-src https://b.example.com');
    assert.deepEqual(plain(read.connectDomains), ['https://b.example.com']);
  });

  it('a string with no directive declares nothing, and says so', () => {
    assert.equal(cspFromPolicy('   '), undefined);
    assert.equal(cspFromPolicy('%% ; ;'), undefined);
    assert.ok(logged.some((l) => l.includes('a string with no CSP directive')), logged.join('\n'));
  });
});

// The Array methods a reading can search or walk a list with.
const SCANS = ['indexOf', 'lastIndexOf', 'includes', 'find', 'findIndex', 'some', 'every', 'filter', 'map', 'forEach', 'reduce'];

/**
 * What `read()` returns, and how many list elements it went through with Array's methods: each
 * call is charged its whole list, found early or not. A count, not a clock: the same on any
 * machine, however loaded.
 */
function scanning(read) {
  const originals = SCANS.map((name) => Array.prototype[name]);
  let elements = 0;
  SCANS.forEach((name, i) => {
    Array.prototype[name] = function scan(...args) {
      elements += this.length;
      return originals[i].apply(this, args);
    };
  });
  try {
    const result = read();
    return { result, elements };
  } finally {
    for (let i = 0; i < SCANS.length; i += 1) Array.prototype[SCANS[i]] = originals[i];
  }
}

describe('reading a policy string is linear in its sources', () => {
  const { cspFromPolicy } = loadRelay(['cspFromPolicy']);
  // Two policies that each allow the same n hosts everywhere: every list's every chain names them.
  const policy = (n) => {
    const hosts = Array.from({ length: n }, (_, i) => `https://h${i}.example.com`).join(' ');
    return `default-src ${hosts}, default-src 'self' ${hosts}`;
  };

  it('twice the sources cost twice the work, and 20 000 are read whole', () => {
    const small = scanning(() => cspFromPolicy(policy(1000)));
    const double = scanning(() => cspFromPolicy(policy(2000)));
    assert.equal(double.result.connectDomains.length, 2000);
    // Linear work is a + b·n: twice the sources cost about twice. Searching a list for each
    // source costs four times (and twenty times the sources, four hundred).
    assert.ok(double.elements < 2.5 * small.elements, `${small.elements} elements for 1000 sources, ${double.elements} for 2000`);
    const large = scanning(() => cspFromPolicy(policy(20_000)));
    const lengths = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'].map((list) => large.result[list].length);
    assert.deepEqual(lengths, [20_000, 20_000, 20_000, 0], 'base-uri falls back to nothing');
    assert.ok(large.elements < 25 * small.elements, `${small.elements} elements for 1000 sources, ${large.elements} for 20 000`);
  });
});

describe('the resource params every host shape becomes', () => {
  it("the spec's shape passes unchanged", () => {
    const { resourceParams, logged } = loadRelay(['resourceParams']);
    const params = { html: '<p>', sandbox: 'allow-scripts', csp: { connectDomains: ['https://a.example.com'] }, permissions: { camera: {} } };
    assert.deepEqual(plain(resourceParams(params)), params);
    assert.deepEqual(logged, []);
  });

  it("the AI SDK's shape: a policy string and an allow string become the spec's csp and permissions", () => {
    const { resourceParams, logged } = loadRelay(['resourceParams']);
    const read = resourceParams({
      html: '<p>', sandbox: 'allow-scripts allow-forms',
      csp: "default-src 'none'; connect-src 'self' https://api.example.com", allow: 'camera; clipboard-write',
    });
    assert.deepEqual(plain(read.csp.connectDomains), ['https://api.example.com']);
    assert.deepEqual(plain(read.permissions), { camera: {}, clipboardWrite: {} });
    assert.equal(read.sandbox, 'allow-scripts allow-forms');
    assert.deepEqual(logged, []);
  });

  it('an allow string never overrides permissions, grants nothing for none, and names features it cannot give', () => {
    const { resourceParams, logged } = loadRelay(['resourceParams']);
    assert.deepEqual(plain(resourceParams({ html: '', permissions: { microphone: {} }, allow: 'camera' }).permissions), { microphone: {} });
    assert.deepEqual(plain(resourceParams({ html: '', allow: "camera 'none'; geolocation *; usb" }).permissions), { geolocation: {} });
    assert.ok(logged.some((l) => l.includes('params.allow asks for usb')), logged.join('\n'));
  });

  it("the Inspector's src is named with the fix; an unreadable csp is named and dropped", () => {
    const { resourceParams, logged } = loadRelay(['resourceParams']);
    const read = resourceParams({ html: '<p>', permissions: undefined, src: 'http://127.0.0.1:6278/app-document/ab', csp: 7 });
    assert.equal(read.csp, undefined);
    assert.ok(logged.some((l) => l.includes('params.src (http://127.0.0.1:6278/app-document/ab) is ignored.') &&
      l.endsWith('#params-src')), logged.join('\n'));
    assert.ok(logged.some((l) => l.includes('params.csp is a number')), logged.join('\n'));
    resourceParams({ html: '', csp: ['https://a.example.com'] });
    assert.ok(logged.some((l) => l.includes('params.csp is an array')));
  });
});

describe("a csp written for the Apps SDK (openai/widgetCSP's snake_case keys)", () => {
  const declared = {
    connect_domains: ['https://api.example.com'], resource_domains: ['https://cdn.example.com'],
    frame_domains: ['https://player.example.com'],
  };
  const spec = {
    connectDomains: ['https://api.example.com'], resourceDomains: ['https://cdn.example.com'],
    frameDomains: ['https://player.example.com'],
  };

  it("reads each list as the spec's, and the upgrade's ?csp= as for the spec's spelling", () => {
    const { resourceParams, policyUrl, logged } = loadRelay(['resourceParams', 'policyUrl']);
    const read = resourceParams({ html: '<p>', csp: declared });
    assert.deepEqual(plain(read.csp), spec);
    assert.equal(policyUrl(read.csp), policyUrl(spec));
    assert.deepEqual(logged, []);
  });

  it("the spec's key wins where both are given, even empty; null counts as absent", () => {
    const { resourceParams } = loadRelay(['resourceParams']);
    const read = resourceParams({
      html: '', csp: { connectDomains: [], connect_domains: ['https://api.example.com'], frameDomains: null, frame_domains: ['https://player.example.com'] },
    });
    assert.deepEqual(plain(read.csp), { connectDomains: [], frameDomains: ['https://player.example.com'] });
  });

  it('redirect_domains grants nothing, and is said once with its link, in params.csp and in ?csp=', () => {
    const { resourceParams, logged } = loadRelay(['resourceParams']);
    const read = resourceParams({ html: '', csp: { ...declared, redirect_domains: ['https://shop.example.com'] } });
    assert.deepEqual(plain(read.csp), spec);
    assert.equal(logged.length, 1, logged.join('\n'));
    assert.match(logged[0], /^warning: \[sandbox\] params\.csp\.redirect_domains grants nothing in a view's policy\. See \S+#redirect-domains$/);
    const query = encodeURIComponent(JSON.stringify({ redirect_domains: ['https://shop.example.com'] }));
    const page = loadRelay(['noteQueryRedirectDomains'], { href: `https://chat.sandbox.test/sandbox.html?csp=${query}` });
    page.noteQueryRedirectDomains();
    assert.equal(page.logged.length, 1);
    assert.ok(page.logged[0].includes("the query's csp.redirect_domains grants nothing"), page.logged[0]);
    const quiet = loadRelay(['noteQueryRedirectDomains'], { href: 'https://chat.sandbox.test/sandbox.html?csp=%7B%7D' });
    quiet.noteQueryRedirectDomains();
    assert.deepEqual(quiet.logged, []);
  });
});

describe('opt-in hints', () => {
  it('a refused eval is a note that it may be a probe; other refusals are warnings', () => {
    const { hintAtOptIn, logged } = loadRelay(['hintAtOptIn']);
    hintAtOptIn('script-src', 'eval');
    hintAtOptIn('script-src', 'eval');
    hintAtOptIn('worker-src', 'blob');
    assert.equal(logged.length, 2, 'each once per view');
    assert.match(logged[0], /^info: .*\(script-src\); if the view needs it, .*view_opt_ins = \["unsafe-eval"\]\. See \S+#refused-eval$/);
    assert.match(logged[1], /^warning: .*view_opt_ins = \["worker-blob"\].*also needs "script-data"\. See \S+#refused-capability$/);
  });

  it('a refused data: script names script-data', () => {
    const { hintAtOptIn, logged } = loadRelay(['hintAtOptIn']);
    hintAtOptIn('script-src-elem', 'data');
    hintAtOptIn('script-src', 'data');
    assert.equal(logged.length, 1, 'script-src-elem is script-src, and each hint comes once');
    assert.match(logged[0], /^warning: .*a script from a data: URL \(script-src-elem\)\. The operator can allow it for this host: view_opt_ins = \["script-data"\]/);
  });

  it('every opt-in the service knows is named by the refusal it would allow, and none other', () => {
    const { OPT_INS } = loadRelay(['OPT_INS']);
    assert.deepEqual(OPT_INS.map((o) => o.name).sort(),
      ['blob-media', 'script-data', 'unsafe-eval', 'wasm-unsafe-eval', 'worker-blob']);
    // What an engine reports as the blocked URI for each source an opt-in adds.
    const blocked = { "'unsafe-eval'": 'eval', "'wasm-unsafe-eval'": 'wasm-eval', 'blob:': 'blob:https://x/1', 'data:': 'data:text/javascript,1' };
    OPT_INS.forEach((optIn) => {
      optIn.adds.forEach(([directive, source]) => {
        const { hintAtOptIn, logged } = loadRelay(['hintAtOptIn']);
        hintAtOptIn(directive, blocked[source]);
        assert.equal(logged.length, 1, `${directive} ${source}`);
        assert.ok(logged[0].includes(`view_opt_ins = ["${optIn.name}"]`), logged[0]);
      });
    });
    const { hintAtOptIn, logged } = loadRelay(['hintAtOptIn']);
    hintAtOptIn('connect-src', 'blob:https://x/1');
    hintAtOptIn('img-src', 'https://x/1.png');
    assert.deepEqual(logged, [], 'no opt-in adds these');
  });

  it('each hint reads as one sentence after another', () => {
    const { hintAtOptIn, logged } = loadRelay(['hintAtOptIn']);
    hintAtOptIn('script-src', 'eval');
    hintAtOptIn('worker-src', 'blob');
    assert.match(logged[0], /; if the view needs it, the operator can allow it/);
    assert.match(logged[1], /\(worker-src\)\. The operator can allow it/);
    assert.ok(logged.every((line) => !/\b(the|The) the\b/.test(line)), logged.join('\n'));
  });
});

describe('a host that writes its views\' policies (view_policy = "host")', () => {
  const config = pageConfig({ hostPolicy: true, defaultPolicy: "default-src 'none'; connect-src 'none'" });

  it('a view with a CSP <meta> is left as the host wrote it', () => {
    const { withPolicyOf, logged } = loadRelay(['withPolicyOf'], { config });
    // As MCP Inspector 2.x wraps a view.
    const html = '<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src \'none\'"><meta charset="utf-8"></head><body><p>view</p></body></html>';
    assert.equal(withPolicyOf(html), html);
    assert.equal(withPolicyOf("<META HTTP-EQUIV=content-security-policy CONTENT=\"img-src x\"><p>"), "<META HTTP-EQUIV=content-security-policy CONTENT=\"img-src x\"><p>");
    assert.deepEqual(logged, []);
  });

  it('a view without one gets the spec default, after its doctype, and the developer is told', () => {
    const { withPolicyOf, logged } = loadRelay(['withPolicyOf'], { config });
    assert.equal(withPolicyOf('<!doctype html><p>view</p>'),
      '<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src \'none\'; connect-src \'none\'"><p>view</p>');
    assert.equal(withPolicyOf('<p>x</p>'),
      '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; connect-src \'none\'"><p>x</p>');
    assert.equal(logged.length, 2);
    assert.match(logged[0], /^warning: .*does not start with a CSP <meta> \(view_policy = "host"\): it gets the spec's default policy\. See \S+#view-without-policy$/);
  });

  it('the relay never reloads for a policy, and names no missing domain', () => {
    const { policyUrl, warnAboutMissingDomains, logged } = loadRelay(['policyUrl', 'warnAboutMissingDomains'], { config });
    assert.equal(policyUrl({ connectDomains: ['https://api.example.com'] }), null);
    warnAboutMissingDomains({ connectDomains: ['https://api.example.com'] });
    assert.deepEqual(logged, []);
  });
});

describe('missing domains: why the served policy lacks them', () => {
  const csp = { connectDomains: ['https://api.example.com'] };

  it("a page the host asked for names the host's ?csp= or the service", () => {
    const { warnAboutMissingDomains, logged } = loadRelay(['warnAboutMissingDomains']);
    warnAboutMissingDomains(csp, false);
    assert.equal(logged.length, 1);
    assert.match(logged[0], /connectDomains https:\/\/api\.example\.com .*the host's \?csp= did not name them.*#missing-domains$/);
  });

  it('a page that could not reload itself with them says that, not a cause that was not there', () => {
    const { warnAboutMissingDomains, logged } = loadRelay(['warnAboutMissingDomains']);
    warnAboutMissingDomains(csp, true);
    assert.equal(logged.length, 1);
    assert.match(logged[0], /this page could not reload itself with them \(see above\)\. See \S+#missing-domains$/);
    assert.doesNotMatch(logged[0], /dropped/);
  });
});

describe('a host that writes the policy into the HTML without view_policy = "host"', () => {
  const meta = '<meta http-equiv="Content-Security-Policy" content="connect-src https://api.example.com">';

  it('is told both policies apply and what fixes it', () => {
    const { noteHostWrittenPolicy, logged } = loadRelay(['noteHostWrittenPolicy']);
    noteHostWrittenPolicy({ html: `${meta}<p>view</p>` });
    noteHostWrittenPolicy({ html: `${meta}<p>view</p>`, csp: { connectDomains: [] } });
    assert.equal(logged.length, 2);
    assert.match(logged[0], /^warning: .*and the host declared no domains: both policies apply\. See \S+#host-written-policy$/);
  });

  it('says nothing when the host also declared the domains, or the HTML has no policy first', () => {
    const { noteHostWrittenPolicy, logged } = loadRelay(['noteHostWrittenPolicy']);
    noteHostWrittenPolicy({ html: `${meta}<p>view</p>`, csp: { connectDomains: ['https://api.example.com'] } });
    noteHostWrittenPolicy({ html: '<p>view</p>' });
    noteHostWrittenPolicy({ html: `<!-- ${meta} -->` });
    assert.deepEqual(logged, []);
  });
});
