// The relay's pure helpers, under node --test: source matching (covers), the reserved-method
// rules, the inner frame's sandbox and allow attribute, the URL of the self-upgrade and the kept
// resource. The browser suites test the same relay end to end; these pin each rule's edges.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadRelay, pageConfig } from './load.mjs';

describe('covers: whether an applied source allows every URL a requested one does', () => {
  const cases = [
    // applied, requested, on an https page, on an http page
    ['https://api.example.com', 'https://api.example.com', true, true],
    ['api.example.com', 'https://api.example.com', true, true],
    ['api.example.com', 'wss://api.example.com', true, true],
    ['api.example.com', 'http://api.example.com', false, true],
    ['api.example.com', 'api.example.com', true, true],
    ['http://api.example.com', 'https://api.example.com', true, true],
    ['https://api.example.com', 'http://api.example.com', false, false],
    ['ws://api.example.com', 'wss://api.example.com', true, true],
    ['https://*.example.com', 'https://a.b.example.com', true, true],
    ['https://*.example.com', 'https://*.a.example.com', true, true],
    ['https://*.example.com', 'https://example.com', false, false],
    ['https://*.example.com', 'https://*.example.com', true, true],
    ['https://API.Example.com', 'https://api.example.com', true, true],
    ['https://api.example.com:8443', 'https://api.example.com', false, false],
    ['https://api.example.com:*', 'https://api.example.com:8443', true, true],
    ['https://api.example.com', 'https://api.example.com/v1/x', true, true],
    ['https://api.example.com/v1/', 'https://api.example.com/v1/x', true, true],
    ['https://api.example.com/v1', 'https://api.example.com/v1/x', false, false],
    ['https://api.example.com/v1/x', 'https://api.example.com/v1/x', true, true],
    ['https://api.example.com/V1/', 'https://api.example.com/v1/x', false, false],
  ];
  for (const [scheme, index] of [['https', 2], ['http', 3]]) {
    const { covers } = loadRelay(['covers'], { href: `${scheme}://chat.sandbox.test/sandbox.html` });
    for (const row of cases) {
      it(`${row[0]} ${row[index] ? 'covers' : 'does not cover'} ${row[1]} on an ${scheme} page`, () => {
        assert.equal(covers(row[0], row[1]), row[index]);
      });
    }
  }
});

describe('reserved methods', () => {
  const { isReserved, carriesReserved } = loadRelay(['isReserved', 'carriesReserved']);
  const reserved = 'ui/notifications/sandbox-proxy-ready';

  it('a message, a batch element and a string that name one are reserved; others are not', () => {
    assert.equal(isReserved({ jsonrpc: '2.0', method: reserved }), true);
    assert.equal(isReserved([{ method: 'tools/call' }, { method: reserved }]), true);
    assert.equal(isReserved(reserved), true);
    // eslint-disable-next-line no-new-wrappers
    assert.equal(isReserved(new String(reserved)), true);
    assert.equal(isReserved({ method: 'ui/notifications/tool-result' }), false);
    assert.equal(isReserved({ method: 'x', params: { method: reserved } }), false, 'a field is for carriesReserved');
    assert.equal(isReserved(null), false);
  });

  it('under any wire, every form a host could decode carries one', () => {
    const json = JSON.stringify({ method: reserved });
    const forms = [
      { type: 'x', inner: { deeper: [{ method: reserved }] } },
      [[[{ method: reserved }]]],
      json,
      json.replace('ui/', 'ui\\/'),
      json.replace('"ui', '"\\u0075i'),
      JSON.stringify(JSON.stringify({ method: reserved })),
      new TextEncoder().encode(json),
      new TextEncoder().encode(json).buffer,
      new Map([['k', { method: reserved }]]),
      new Set([reserved]),
      { [reserved]: 1 },
      new Error(reserved),
      new Blob(['anything']),
    ];
    for (const form of forms) assert.equal(carriesReserved(form), true, String(form));
    assert.equal(carriesReserved({ type: 'tool_call', payload: { name: 'x' } }), false);
    assert.equal(carriesReserved('ui/notifications/tool-result'), false);
  });

  it('a cyclic message is looked at once, and ends', () => {
    const cyclic = { a: {} };
    cyclic.a.back = cyclic;
    assert.equal(carriesReserved(cyclic), false);
    cyclic.a.method = reserved;
    assert.equal(carriesReserved(cyclic), true);
  });
});

describe("the inner frame's sandbox and allow attribute", () => {
  it('the default is cut to the operator ceiling; an override picks from it; anything else is allow-scripts', () => {
    const opaque = loadRelay(['sandboxTokens'], { config: pageConfig({ viewSandbox: ['allow-forms', 'allow-scripts'] }) });
    assert.deepEqual([...opaque.sandboxTokens(undefined)], ['allow-scripts', 'allow-forms']);
    assert.deepEqual([...opaque.sandboxTokens('allow-scripts allow-same-origin allow-top-navigation allow-scripts')], ['allow-scripts']);
    const warned = opaque.logged.filter((l) => l.includes('ignored sandbox tokens'));
    assert.equal(warned.length, 1, 'one line for every token refused');
    assert.match(warned[0], /"allow-same-origin": not in this host entry's view_sandbox \("allow-forms allow-scripts"\)\./);
    assert.match(warned[0], /"allow-top-navigation": never given\. See \S+#sandbox-tokens$/);
    opaque.sandboxTokens('allow-scripts allow-same-origin allow-popups');
    const again = opaque.logged.filter((l) => l.includes('ignored sandbox tokens'));
    assert.equal(again.length, 2, 'a token already named is not named again');
    assert.match(again[1], /"allow-popups": not in/);
    assert.doesNotMatch(again[1], /allow-same-origin/);
    assert.deepEqual([...opaque.sandboxTokens(['allow-same-origin'])], ['allow-scripts']);
    assert.deepEqual([...opaque.sandboxTokens('')], []);
    const wide = loadRelay(['sandboxTokens']);
    assert.deepEqual([...wide.sandboxTokens(null)], ['allow-scripts', 'allow-same-origin', 'allow-forms']);
  });

  it("the operator's per-host default stands for the spec's when the host asks for nothing", () => {
    const config = pageConfig({ viewSandboxDefault: ['allow-forms', 'allow-scripts'] });
    const { sandboxTokens } = loadRelay(['sandboxTokens'], { config });
    assert.deepEqual([...sandboxTokens(undefined)], ['allow-forms', 'allow-scripts']);
    assert.deepEqual([...sandboxTokens('allow-scripts allow-same-origin')], ['allow-scripts', 'allow-same-origin'],
      'a host that asks still gets what it asks, within the ceiling');
  });

  it('requested features are delegated (to * for an opaque view); the rest are denied', () => {
    const { allowAttribute } = loadRelay(['allowAttribute']);
    // Every feature an operator may grant follows, denied: this entry grants none.
    const denied = "; accelerometer 'none'; autoplay 'none'";
    const spec = (allow) => allow.slice(0, allow.indexOf(denied));
    assert.equal(spec(allowAttribute({ camera: {} }, false)),
      "camera; microphone 'none'; geolocation 'none'; clipboard-write 'none'");
    assert.equal(spec(allowAttribute({ camera: {}, clipboardWrite: {} }, true)),
      "camera *; microphone 'none'; geolocation 'none'; clipboard-write *");
    assert.equal(spec(allowAttribute('camera', false)),
      "camera 'none'; microphone 'none'; geolocation 'none'; clipboard-write 'none'");
    const rest = allowAttribute({}, false).split('; ').slice(4);
    assert.equal(rest.length, 31);
    assert.ok(rest.every((feature) => / 'none'$/.test(feature)), rest.join('; '));
  });

  it("the operator's granted features are delegated like a requested one; the engine's unknown denials left out", () => {
    const granted = pageConfig({ viewFeatures: ['fullscreen', 'web-share'] });
    const { allowAttribute } = loadRelay(['allowAttribute'], { config: granted });
    const features = (allow) => allow.split('; ').slice(4);
    assert.ok(features(allowAttribute({}, false)).includes('fullscreen'));
    assert.ok(features(allowAttribute({}, true)).includes('fullscreen *'));
    assert.ok(features(allowAttribute({}, false)).includes("autoplay 'none'"));
    // An engine that lists what it knows (Chromium) gets no denial it does not know, and every grant.
    const chromium = { featurePolicy: { features: () => ['fullscreen', 'autoplay'] } };
    const listed = loadRelay(['allowAttribute'], { config: granted, page: chromium }).allowAttribute;
    assert.equal(listed({}, true), "camera 'none'; microphone 'none'; geolocation 'none'; clipboard-write 'none'; " +
      "autoplay 'none'; fullscreen *; web-share *");
  });
});

describe('the self-upgrade', () => {
  const page = 'https://chat.sandbox.test/sandbox.html';
  const declared = { connectDomains: ['https://api.example.com', 7], other: ['x'] };
  const policyUrl = (href, config) => loadRelay(['policyUrl'], { href, config }).policyUrl;

  it('a page without ?csp= reloads with the declared lists (strings only) and the marker', () => {
    const target = new URL(policyUrl(page)(declared));
    assert.equal(target.searchParams.get('csp'), '{"connectDomains":["https://api.example.com"]}');
    assert.equal(target.searchParams.get('upgrade'), '1');
    assert.equal(policyUrl(page)({ connectDomains: [] }), null, 'nothing declared: this page serves it');
    assert.equal(policyUrl(page)(undefined), null);
  });

  it('the parameters it writes are the ones the service reads: the shared vocabulary', () => {
    const { CSP_PARAMETER, UPGRADE_PARAMETER } = loadRelay(['CSP_PARAMETER', 'UPGRADE_PARAMETER']);
    assert.deepEqual([CSP_PARAMETER, UPGRADE_PARAMETER], ['csp', 'upgrade']);
    const target = new URL(policyUrl(page)(declared));
    assert.deepEqual([...target.searchParams.keys()].sort(), [CSP_PARAMETER, UPGRADE_PARAMETER].sort());
  });

  it('never for a page the host asked with ?csp=, nor for a host that signs', () => {
    assert.equal(policyUrl(`${page}?csp=%7B%7D`)(declared), null);
    assert.equal(policyUrl(page, pageConfig({ signedPolicies: true }))(declared), null);
  });

  it('a page the relay reloaded compares policies as values, whatever the rest of the query', () => {
    const lists = encodeURIComponent('{"connectDomains":["https://api.example.com"]}');
    const upgraded = `${page}?embedder=https://pr-1.preview.example.com&csp=${lists}&upgrade=1`;
    assert.equal(policyUrl(upgraded)(declared), null, 'the policy it has');
    const back = new URL(policyUrl(upgraded)({}));
    assert.equal(back.searchParams.has('csp'), false, 'no declaration: back to no ?csp=');
    assert.equal(back.searchParams.get('embedder'), 'https://pr-1.preview.example.com');
  });

  it('a kept entry is read only as the relay wrote it', () => {
    const { parseKept } = loadRelay(['parseKept']);
    assert.equal(parseKept('not json'), null);
    assert.equal(parseKept('{"resource":{"html":"x"}}'), null, 'held is required');
    assert.equal(parseKept('{"resource":"x","held":[]}'), null);
    const many = JSON.stringify({ resource: { html: 'x' }, held: new Array(300).fill(1) });
    const kept = parseKept(many);
    assert.equal(kept.held.length, 256, 'at most MAX_HELD');
    assert.equal(kept.reloads, 2, 'no count: as if every reload was spent');
  });
});

describe('sunpeak/sandbox-load-src from the host', () => {
  it('is refused, named once per page, and neither relayed nor held', () => {
    const relay = loadRelay(['fromHost', 'state']);
    const message = { jsonrpc: '2.0', method: 'sunpeak/sandbox-load-src', params: { src: 'https://inspector.example/view.html' } };
    relay.fromHost(message);
    relay.fromHost(message);
    const named = relay.logged.filter((l) => l.includes('sunpeak/sandbox-load-src'));
    assert.equal(named.length, 1, relay.logged.join('\n'));
    assert.match(named[0], /this sandbox mounts only HTML, never a URL\. See \S+#load-src$/);
    assert.deepEqual(relay.state.held, [], 'not held for a view');
  });
});

describe("a same-origin view's CSP violations, passed to the host", () => {
  const violation = { isTrusted: true, violatedDirective: 'connect-src', effectiveDirective: 'connect-src',
    blockedURI: 'https://api.example.com/v1', sourceFile: 'about:srcdoc', lineNumber: 3, columnNumber: 7,
    originalPolicy: "connect-src 'self'", disposition: 'enforce' };

  function posted(config) {
    const sent = [];
    const relay = loadRelay(['reportViolation', 'state'], {
      config, scope: { parent: { postMessage: (message, target) => sent.push({ message, target }) } },
    });
    relay.reportViolation(violation);
    relay.reportViolation({ ...violation, isTrusted: false });
    return sent;
  }

  it('as the spec extension, and nothing a view dispatches itself', () => {
    const sent = posted(pageConfig());
    assert.deepEqual(sent.map((s) => s.message.method), ['ui/notifications/sandbox-csp-violation']);
    assert.deepEqual(sent.map((s) => s.target), ['https://chat.example.com']);
  });

  it('and, with relay_messages = "any", also as mcp-use\'s inspector reads it', () => {
    const sent = posted(pageConfig({ anyMessages: true }));
    assert.equal(sent.length, 2);
    const { timestamp, ...inspector } = sent[1].message;
    assert.deepEqual(inspector, {
      type: 'mcp-apps:csp-violation', directive: 'connect-src', effectiveDirective: 'connect-src',
      blockedUri: 'https://api.example.com/v1', sourceFile: 'about:srcdoc', lineNumber: 3, columnNumber: 7,
      originalPolicy: "connect-src 'self'", disposition: 'enforce',
    });
    assert.equal(typeof timestamp, 'number');
    assert.equal(sent[1].target, 'https://chat.example.com', 'to the host\'s origin only');
  });
});
