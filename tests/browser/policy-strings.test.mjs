// A host's policy strings read as the engines read them: the engine's own enforcement is the
// oracle. Each generated CSP string (tests/relay/policy-strings.mjs) is a frame's policy, one
// <meta> per comma-separated policy (a header's list), and the frame asks for each host the way
// each list's sources are used; whatever the relay reads into a list (cspFromPolicy), the
// engine must not refuse for that list's loads. In Chromium, whose iframe.featurePolicy says
// what an `allow` string grants a frame, whatever the relay grants (permissionsFromAllow) the
// engine must grant. The spec readings the node tests use are held to the engines here too:
// never wider than the engine (Chromium splits a policy on U+000B too, so it is wider there).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTlsServer, makeCertificate, tempDir, html } from './harness.mjs';
import { launch, selectedEngines } from './engines.mjs';
import { loadRelay } from '../relay/load.mjs';
import {
  generator, cspString, REVIEWED_CSP, allowString, cspAllows, sourceMatches, allowGrants, HOSTS, LIST_LOADS, PERMISSION_FEATURES,
} from '../relay/policy-strings.mjs';

const T = { timeout: 240_000 };
// Strings per engine, each one the relay reads a host or a grant from (only those can be read
// too wide), and strings per call into the page.
const STRINGS = 100;
const BATCH = 25;
// The loads a frame can be asked for here: a worker must be same-origin, so its list is held to
// the spec's reading in node only.
const ASKED = ['script', 'style', 'img', 'font', 'media', 'connect', 'frame', 'base'];

/** In the page: for each CSP string, the loads its frame refused, as "load origin". */
async function refusals({ texts, hosts }) {
  const family = {
    'script-src-elem': 'script', 'script-src': 'script', 'style-src-elem': 'style', 'style-src': 'style',
    'img-src': 'img', 'font-src': 'font', 'media-src': 'media', 'connect-src': 'connect',
    'frame-src': 'frame', 'child-src': 'frame', 'base-uri': 'base',
  };
  // A refused port fails a load at once; WebKit never ends a failed frame's load.
  const settle = (promise) => Promise.race([promise.catch(() => {}), new Promise((r) => setTimeout(r, 1000))]);
  // Each string in a frame of its own, all at once: most of the time is waiting.
  return Promise.all(texts.map(async (text) => {
    // A document of the page's own origin and scheme (not srcdoc, whose URL is about:srcdoc),
    // as the sandbox's pages are.
    const frame = document.createElement('iframe');
    frame.src = `/policy?text=${encodeURIComponent(text)}`;
    const loaded = new Promise((resolve) => { frame.onload = resolve; });
    document.body.append(frame);
    await loaded;
    const win = frame.contentWindow;
    const doc = frame.contentDocument;
    const refused = new Set();
    doc.addEventListener('securitypolicyviolation', (e) => {
      let origin = e.blockedURI;
      try { origin = new URL(e.blockedURI).origin; } catch { /* kept as reported */ }
      refused.add(`${family[e.effectiveDirective] ?? e.effectiveDirective} ${origin}`);
    });
    const element = (name, attributes) => {
      const node = doc.createElement(name);
      const done = new Promise((resolve) => { node.onload = resolve; node.onerror = resolve; });
      Object.assign(node, attributes);
      doc.body.append(node);
      return done;
    };
    const loads = [];
    for (const host of hosts) {
      loads.push(element('script', { src: `${host}/script` }));
      loads.push(element('link', { rel: 'stylesheet', href: `${host}/style` }));
      loads.push(element('img', { src: `${host}/img` }));
      loads.push(new win.FontFace('probe', `url(${host}/font)`).load());
      loads.push(element('audio', { src: `${host}/media` }));
      loads.push(win.fetch(`${host}/connect`));
      loads.push(element('iframe', { src: `${host}/frame` }));
    }
    await Promise.all(loads.map(settle));
    for (const host of hosts) {
      const base = doc.createElement('base');
      base.href = `${host}/base/`;
      doc.head.append(base);
      base.remove();
    }
    // Violations are reported as tasks: let those of the last loads come.
    await new Promise((r) => setTimeout(r, 100));
    frame.remove();
    return [...refused];
  }));
}

/** In the page (Chromium): for each allow string, the features a frame on `src` is granted. */
async function grants({ texts, src, features }) {
  return Promise.all(texts.map(async (text) => {
    const frame = document.createElement('iframe');
    frame.setAttribute('allow', text);
    frame.src = src;
    const loaded = new Promise((resolve) => { frame.onload = resolve; });
    document.body.append(frame);
    await loaded;
    const granted = features.filter((feature) => frame.featurePolicy.allowsFeature(feature));
    frame.remove();
    return granted;
  }));
}

/** A document whose policy is the `text` of its query: a <meta> per comma-separated policy, as
 * a header's list would be, so that the string reaches the engine as it is (a header could not
 * carry every character). */
function policyDocument(req, res, url) {
  const escape = (text) => text.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  const metas = url.searchParams.get('text').split(',')
    .map((policy) => `<meta http-equiv="Content-Security-Policy" content="${escape(policy)}">`).join('');
  html(`<!doctype html><html><head>${metas}</head><body></body></html>`)(req, res);
}

/** `count` strings of `make(next)` for which `wanted` holds. */
function generated(seed, count, make, wanted) {
  const next = generator(seed);
  const texts = [];
  while (texts.length < count) {
    const text = make(next);
    if (wanted(text)) texts.push(text);
  }
  return texts;
}

for (const engine of selectedEngines()) describe(`policy strings as ${engine} reads them`, () => {
  let server, browser, page, pageOrigin;

  before(async () => {
    // On https, as the sandbox's pages are: a source without a scheme means the page's own.
    const cert = makeCertificate(tempDir(), ['page.sandbox.test', 'view.test']);
    server = await startTlsServer({
      '/': html('<!doctype html><title>policy strings</title><body>'),
      '/blank': html('<p>'),
      '/policy': policyDocument,
    }, cert);
    pageOrigin = `https://page.sandbox.test:${server.port}`;
    browser = await launch(engine, { spki: [cert.spki] });
    page = await browser.newPage();
    await page.goto(`${pageOrigin}/`);
  });

  after(async () => {
    await page?.close();
    await browser?.close();
    await server?.close();
  });

  it(`the relay reads no CSP string wider than ${engine} enforces it (${STRINGS} strings)`, T, async () => {
    const { cspFromPolicy } = loadRelay(['cspFromPolicy'], { href: `${pageOrigin}/sandbox.html` });
    const readsHosts = (text) => Object.values(cspFromPolicy(text) ?? {}).some((list) => list.length > 0);
    const texts = [...REVIEWED_CSP.map(([text]) => text), ...generated(0x0b5e, STRINGS, cspString, readsHosts)];
    let checked = 0;
    const disagreements = [];
    for (let at = 0; at < texts.length; at += BATCH) {
      const batch = texts.slice(at, at + BATCH);
      const refused = await page.evaluate(refusals, { texts: batch, hosts: HOSTS });
      batch.forEach((text, i) => {
        const read = cspFromPolicy(text);
        for (const host of HOSTS) {
          const origin = new URL(host).origin;
          for (const load of ASKED) {
            // The node tests hold the relay to the spec's reading: that must be no wider.
            if (refused[i].includes(`${load} ${origin}`) && cspAllows(text, load, `${host}/${load}`, pageOrigin)) {
              disagreements.push(`${JSON.stringify(text)}: ${load} of ${host}, which ${engine} refuses`);
            }
          }
          for (const [list, loads] of Object.entries(LIST_LOADS)) {
            if (!(read?.[list] ?? []).some((source) => sourceMatches(source, `${host}/`, pageOrigin))) continue;
            for (const load of loads.filter((l) => ASKED.includes(l))) {
              checked += 1;
              assert.ok(!refused[i].includes(`${load} ${origin}`),
                `${JSON.stringify(text)}: the relay put ${host} in ${list}, which ${engine} refuses for ${load}`);
            }
          }
        }
      });
    }
    assert.ok(checked > STRINGS, `the strings give the relay hosts to check (${checked})`);
    assert.deepEqual(disagreements, [], 'the spec reading the node tests use allows only what the engine does');
  });

  // Firefox and WebKit have no iframe.featurePolicy to read a grant from: Chromium's reading
  // is the oracle, and the node tests hold the relay to the spec's.
  if (engine === 'chromium') it('the relay grants no feature an allow string does not (iframe.featurePolicy)', T, async () => {
    const { permissionsFromAllow } = loadRelay(['permissionsFromAllow']);
    const src = `https://view.test:${server.port}/blank`;
    const texts = generated(0xa110, STRINGS, allowString, (text) => allowGrants(text, new URL(src).origin).size > 0);
    const features = Object.values(PERMISSION_FEATURES);
    let granted = 0;
    for (let at = 0; at < texts.length; at += BATCH) {
      const batch = texts.slice(at, at + BATCH);
      const engineGrants = await page.evaluate(grants, { texts: batch, src, features });
      batch.forEach((text, i) => {
        for (const feature of allowGrants(text, new URL(src).origin)) {
          if (features.includes(feature)) assert.ok(engineGrants[i].includes(feature), `the spec reading of ${JSON.stringify(text)} grants ${feature}`);
        }
        for (const key of Object.keys(permissionsFromAllow(text))) {
          granted += 1;
          assert.ok(engineGrants[i].includes(PERMISSION_FEATURES[key]), `${JSON.stringify(text)}: the relay grants ${key}`);
        }
      });
    }
    assert.ok(granted > STRINGS / 4, `the strings make the relay grant (${granted})`);
  });
});
