// The relay's readers of a host's policy strings (cspFromPolicy, permissionsFromAllow in
// proxy-page/relay/15-resource.js), under node --test, held to the specs' readings
// (policy-strings.mjs) on generated strings: whatever the relay reads into a list, the string
// itself allows for every load that list reaches; whatever it grants, the string grants the view.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadRelay } from './load.mjs';
import {
  generator, cspString, REVIEWED_CSP, allowString, cspAllows, sourceMatches, allowGrants, HOSTS, LIST_LOADS, PERMISSION_FEATURES,
} from './policy-strings.mjs';

const PAGE = 'https://chat.sandbox.test';
const { cspFromPolicy, permissionsFromAllow } = loadRelay(['cspFromPolicy', 'permissionsFromAllow'], { href: `${PAGE}/sandbox.html` });

/** Where the relay's reading of `text` is wider than the spec's: [{list, host, load}]. */
function widerCsp(read, text, pageOrigin) {
  const wider = [];
  for (const [list, loads] of Object.entries(LIST_LOADS)) {
    for (const host of HOSTS) {
      const url = `${host}/`;
      if (!(read?.[list] ?? []).some((source) => sourceMatches(source, url, pageOrigin))) continue;
      for (const load of loads) if (!cspAllows(text, load, url, pageOrigin)) wider.push({ list, host, load });
    }
  }
  return wider;
}

describe('a policy string is read no wider than CSP reads it', () => {
  for (const [text, list] of REVIEWED_CSP) {
    it(`${JSON.stringify(text)}: not in ${list}`, () => {
      const read = cspFromPolicy(text);
      assert.ok(!(read?.[list] ?? []).includes('https://evil.test:1'), JSON.stringify(read));
      assert.deepEqual(widerCsp(read, text, PAGE), [], JSON.stringify(read));
    });
  }

  it('never allows what the string does not, in any list (20 000 generated strings)', () => {
    const next = generator(0xc5b);
    let hosts = 0;
    for (let n = 0; n < 20_000; n += 1) {
      const text = cspString(next);
      const read = cspFromPolicy(text);
      hosts += Object.values(read ?? {}).flat().length;
      assert.deepEqual(widerCsp(read, text, PAGE), [], `${JSON.stringify(text)} read as ${JSON.stringify(read)}`);
    }
    assert.ok(hosts > 2000, `the generator makes strings the relay reads hosts from (${hosts})`);
  });

  it('still reads a plain policy whole: a host every governing directive names is kept', () => {
    const read = cspFromPolicy("default-src 'none'; script-src https://cdn.test; style-src https://cdn.test; " +
      'img-src https://cdn.test; font-src https://cdn.test; media-src https://cdn.test; worker-src https://cdn.test; ' +
      'connect-src https://api.test; frame-src https://frame.test; base-uri https://base.test');
    assert.deepEqual(JSON.parse(JSON.stringify(read)), {
      connectDomains: ['https://api.test'], resourceDomains: ['https://cdn.test'],
      frameDomains: ['https://frame.test'], baseUriDomains: ['https://base.test'],
    });
  });
});

describe('a string outside printable ASCII and its whitespace', () => {
  it('declares and grants nothing, and says which character and where', () => {
    const { cspFromPolicy: csp, permissionsFromAllow: allow, logged } = loadRelay(['cspFromPolicy', 'permissionsFromAllow']);
    assert.equal(csp('connect-src https://a.test\u000bhttps://b.test'), undefined);
    assert.deepEqual(allow('camera;\u00a0microphone'), {});
    assert.equal(logged.length, 2, logged.join('\n'));
    assert.match(logged[0], /^warning: \[sandbox\] params\.csp holds U\+000B at 26, outside printable ASCII: ignored\. See \S+#not-ascii$/);
    assert.match(logged[1], /^warning: \[sandbox\] params\.allow holds U\+00A0 at 7, outside printable ASCII: ignored\. See \S+#not-ascii$/);
  });

  it('names the character by its code point, beyond the first plane too, not by half of it', () => {
    const { cspFromPolicy: csp, permissionsFromAllow: allow, logged } = loadRelay(['cspFromPolicy', 'permissionsFromAllow']);
    assert.equal(csp('connect-src https://a.test \u{1F600}'), undefined);
    assert.deepEqual(allow('camera \u{1F600}'), {});
    assert.deepEqual(allow('camera; caf\u00e9'), {});
    // A lone surrogate is no character: it is named as the code unit it is.
    assert.deepEqual(allow('camera \ud83d'), {});
    assert.equal(logged.length, 4, logged.join('\n'));
    assert.match(logged[0], /^warning: \[sandbox\] params\.csp holds U\+1F600 at 27, /);
    assert.match(logged[1], /^warning: \[sandbox\] params\.allow holds U\+1F600 at 7, /);
    assert.match(logged[2], /^warning: \[sandbox\] params\.allow holds U\+00E9 at 11, /);
    assert.match(logged[3], /^warning: \[sandbox\] params\.allow holds U\+D83D at 7, /);
  });
});

describe('an allow string grants the view no feature the string does not', () => {
  // The view's frame is on another origin than the document that wrote the string.
  const VIEW = 'https://view.test';
  const granted = (text) => Object.keys(permissionsFromAllow(text)).map((key) => PERMISSION_FEATURES[key]);

  for (const [text, expected] of [
    ["camera 'none'; camera", []],
    ["geolocation 'none'; geolocation *", []],
    ['camera https://other.test', []],
    ["camera 'self'", []],
    ['CAMERA', []],
    ['camera\u00a0*', []],
    ["camera; camera 'none'", ['camera']],
    ["camera *; microphone 'src'; geolocation; clipboard-write", ['camera', 'microphone', 'geolocation', 'clipboard-write']],
  ]) {
    it(JSON.stringify(text), () => {
      assert.deepEqual(granted(text), expected);
      for (const feature of expected) assert.ok(allowGrants(text, VIEW).has(feature), 'the reference agrees');
    });
  }

  it('never grants what Permissions Policy does not (20 000 generated strings)', () => {
    const next = generator(0xa11);
    let grants = 0;
    for (let n = 0; n < 20_000; n += 1) {
      const text = allowString(next);
      const reference = allowGrants(text, VIEW);
      for (const feature of granted(text)) {
        grants += 1;
        assert.ok(reference.has(feature), `${JSON.stringify(text)} granted ${feature}`);
      }
    }
    assert.ok(grants > 2000, `the generator makes strings that grant (${grants})`);
  });
});
