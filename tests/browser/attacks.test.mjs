// What the proxy must refuse, each shown in each browser engine (see engines.mjs) against the
// running service over TLS: framing by other origins, forged and repeated sandbox messages, top
// navigation, undeclared connections, permissive view-side policies, hostile ?csp= entries; and
// what it must allow: declared connections, opaque views that still relay, delegated permissions.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  serviceFixture, chatHost, CHAT_NAMES, startProxy, startServer, startTlsServer, freePort, html, makeCertificate, tempDir, RAW_HOST, view, report,
  freshPage as freshPageOf,
} from './harness.mjs';
import { selectedEngines, consoleKnown, hookConsole, collectHooked, until } from './engines.mjs';

/** Round trip through the relay: once the echo is back, everything sent before it was handled. */
async function roundTrip(page, token) {
  await page.evaluate((t) => window.toProxy({ jsonrpc: '2.0', method: 'test/echo', params: t }), token);
  await page.waitForFunction((t) => window.received.find(
    (m) => m.data && m.data.method === 'test/report' && m.data.params.key === 'echo' && m.data.params.value === t), token);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Mounts a view and sends it `test/early` 1, 2, 3 at once, before it can listen; the view
 * reports `early` once it has all three, and runs `then` (which posts its first message).
 */
async function mountWithEarlyMessages(page, then) {
  await page.evaluate((html) => {
    window.sendResource({ html });
    for (const n of [1, 2, 3]) window.toProxy({ jsonrpc: '2.0', method: 'test/early', params: n });
  }, view(`
    const early = [];
    window.addEventListener('message', (e) => { if (e.data.method === 'test/early') { early.push(e.data.params); if (early.length === 3) report('early', early); } });
    ${then};`));
}

function reports(received) {
  return received.filter((m) => m.data && m.data.method === 'test/report').map((m) => m.data.params.key);
}

// Each test stops by itself: a relay that loses a message fails at its timeout, never hangs.
const T = { timeout: 30_000 };

for (const engine of selectedEngines()) describe(`attacks on the proxy fail; declared capabilities work (${engine})`, () => {
  // A host page beside the proxy's frame that forges a resource for it.
  const sibling = `<!doctype html><script>
window.addEventListener('message', (e) => {
  if (e.data !== 'fire') return;
  parent.frames[0].postMessage({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-resource-ready',
    params: { html: ${JSON.stringify(view("report('mounted', 'forged-by-sibling')")).replaceAll('</', '<\\/')} } }, '*');
  parent.postMessage('fired', '*');
});
</script>`;
  // What a view reaches beyond the sandbox, over https: WebKit blocks plain http from an https
  // page even on loopback (mixed content), where Chromium and Firefox allow 127.0.0.1.
  const outside = makeCertificate(tempDir(), ['allowed.api.test', 'blocked.api.test', 'third.party.test']);
  // The host's sandbox, and a second one for the same host whose views may never keep an
  // origin (view_sandbox).
  const fx = serviceFixture(engine, {
    tls: [...CHAT_NAMES, 'opaque.sandbox.test'],
    hosts: (names) => `${chatHost()(names)}[[hosts]]
origin = "${names.hostOrigin}"
sandbox = "opaque.sandbox.test:${names.port}"
view_sandbox = ["allow-scripts", "allow-forms"]
`,
    host: ({ hostPort }) => startServer({ '/raw': html(RAW_HOST), '/sibling': html(sibling) }, hostPort),
    trust: [outside],
  });
  let browser, proxy, servers = [], hostOrigin, evilOrigin, proxyUrl, allowedApi, blockedApi, thirdPartyOrigin;
  let opaqueProxyUrl;
  // What reached the attacker's page from a view that left the sandbox: `?how=` of each hit.
  const escapes = [];

  before(async () => {
    ({ browser, proxy, hostOrigin } = fx);
    proxyUrl = fx.url('chat.sandbox.test');
    opaqueProxyUrl = fx.url('opaque.sandbox.test');
    const evilPort = await freePort();
    evilOrigin = `http://evil.localhost:${evilPort}`;
    const thirdParty = await startTlsServer({
      // A page the view navigates itself to: it tries to speak for the view, and records what it hears.
      '/third-party': html(`<!doctype html><script>
window.addEventListener('message', (e) => parent.postMessage({ jsonrpc: '2.0', method: 'test/report', params: { key: 'third-party-heard', value: e.data } }, '*'));
parent.postMessage({ jsonrpc: '2.0', method: 'test/report', params: { key: 'third-party-early', value: 'spoke' } }, '*');
window.addEventListener('load', () => setTimeout(() => {
  parent.postMessage({ jsonrpc: '2.0', method: 'test/report', params: { key: 'third-party', value: 'spoke' } }, '*');
  parent.postMessage({ jsonrpc: '2.0', id: 99, method: 'tools/call', params: { name: 'steal', arguments: {} } }, '*');
}, 200));
</script>`),
    }, outside);
    servers.push(thirdParty);
    thirdPartyOrigin = `https://third.party.test:${thirdParty.port}`;
    servers.push(await startServer({
      '/frame': html(`<!doctype html><body><script>
window.messages = [];
window.addEventListener('message', (e) => window.messages.push(e.data));
const f = document.createElement('iframe');
f.onload = () => { window.loaded = true; };
f.src = ${JSON.stringify(proxyUrl)};
document.body.appendChild(f);
</script></body>`),
      '/escaped': (req, res, url) => { escapes.push(url.searchParams.get('how')); res.writeHead(200).end('escaped'); },
    }, evilPort));
    const api = (name) => (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
      res.end(JSON.stringify({ api: name }));
    };
    const a = await startTlsServer({ '/data': api('allowed') }, outside);
    const b = await startTlsServer({ '/data': api('blocked') }, outside);
    servers.push(a, b);
    allowedApi = `https://allowed.api.test:${a.port}`;
    blockedApi = `https://blocked.api.test:${b.port}`;
  });

  after(async () => {
    for (const server of servers) await server.close();
  });

  /** A fresh page, closed after `t`; its console is printed if `t` failed. */
  const freshPage = (t) => freshPageOf(browser, t);

  /** The frame whose URL starts with `prefix`, once there is one. */
  async function frameAt(page, prefix) {
    return until(async () => (await page.frames()).find((f) => f.url.startsWith(prefix)), `a frame at ${prefix}`);
  }

  /**
   * A fresh page on the host origin with the proxy mounted (no resource sent yet). `logged()`:
   * what the proxy page has logged since it was mounted (hooked, so in every engine).
   */
  async function hostPage(t, opts = {}) {
    const page = await freshPage(t);
    await page.goto(`${hostOrigin}/raw`);
    await page.evaluate((o) => window.mountProxy(o), { proxyUrl, ...opts });
    const proxyFrame = await frameAt(page, proxyUrl);
    await hookConsole(proxyFrame);
    return { page, proxyFrame, logged: () => collectHooked(proxyFrame) };
  }

  it('a page on an unlisted origin cannot frame the proxy', T, async (t) => {
    const page = await freshPage(t);
    await page.goto(`${evilOrigin}/frame`);
    await page.waitForFunction(() => window.loaded === true);
    await sleep(300);
    assert.deepEqual(await page.evaluate(() => window.messages), [], 'no sandbox-proxy-ready reaches the framer');
    // The refused frame holds the browser's error page (or nothing), never the proxy page.
    for (const frame of await page.frames()) {
      const refusal = await frame.evaluate(() => document.querySelector('.refusal, #relay') !== null).catch(() => false);
      assert.ok(!refusal, `the proxy page is not loaded in the frame (${frame.url})`);
    }
    // The browser's own console line; WebKit's driver cannot read it (see engines.mjs).
    if (consoleKnown(engine)) assert.ok(page.console.some((m) => m.includes('frame-ancestors')), page.console.join('\n'));
    // The operator sees it too: the request said who framed it (fetch metadata and Referer).
    const warned = await until(() => proxy.logs.find((e) => e.framed_by === evilOrigin),
      'the mismatched-embedder warning in the service log');
    assert.equal(warned.configured, hostOrigin);
    assert.match(warned.message, /framed by an origin this sandbox does not serve/);
  });

  it('the proxy refuses to run unframed', T, async (t) => {
    const page = await freshPage(t);
    await page.goto(proxyUrl);
    assert.match(await page.evaluate(() => document.querySelector('.refusal').textContent),
      /sandbox proxy for http:\/\/host\.localhost:\d+\. It only runs inside an iframe of that host/);
  });

  it('sandbox-proxy-ready is posted once, to the host origin only', T, async (t) => {
    const { page } = await hostPage(t);
    const ready = (await page.evaluate(() => window.received)).filter(
      (m) => m.data.method === 'ui/notifications/sandbox-proxy-ready');
    assert.equal(ready.length, 1);
    assert.deepEqual(ready[0].data, { jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} });
  });

  it("a sibling frame's forged sandbox-resource-ready is ignored, even from the host's origin", T, async (t) => {
    const { page, proxyFrame } = await hostPage(t);
    await page.evaluate(() => new Promise((resolve) => {
      const sibling = document.createElement('iframe');
      sibling.src = '/sibling';
      sibling.onload = () => {
        window.addEventListener('message', (e) => { if (e.data === 'fired') resolve(); });
        sibling.contentWindow.postMessage('fire', '*');
      };
      document.body.appendChild(sibling);
    }));
    // The proxy handles messages in order: a host round trip after the forgery settles it.
    await page.evaluate(() => window.toProxy({ jsonrpc: '2.0', method: 'ping-before-mount', id: 1 }));
    assert.equal(await proxyFrame.evaluate(() => document.querySelectorAll('iframe').length), 0, 'nothing was mounted');
    await page.evaluate((html) => window.sendResource({ html }), view("report('mounted', 'from-host')"));
    assert.equal(await report(page, 'mounted'), 'from-host');
    assert.equal(await proxyFrame.evaluate(() => document.querySelectorAll('iframe').length), 1);
  });

  it('a resource a view plants in its frame\'s name or sessionStorage never reaches a later proxy page', T, async (t) => {
    // The relay carries a resource in its frame's name across its own reload (a host that
    // sends the csp only in sandbox-resource-ready). A same-origin view can write that name,
    // and this origin's sessionStorage: it plants a resource shaped like a carried one in both,
    // then the host mounts a new proxy page in the same tab, which must neither take it nor
    // skip its ready notification.
    const { page } = await hostPage(t);
    const forged = view("report('mounted', 'planted')");
    await page.evaluate((html) => window.sendResource({ html }), view(`
      const entry = JSON.stringify({ at: Date.now(), resource: { html: ${JSON.stringify(forged).replaceAll('</', '<\\/')} }, held: [] });
      // Where the browser denies this cross-site frame its storage, there is none to plant in.
      try {
        for (const key of ['mcp-sandbox-proxy:kept:planted', 'mcp-sandbox-proxy:kept:', 'mcp-sandbox-proxy:kept:undefined']) sessionStorage.setItem(key, entry);
      } catch { /* denied */ }
      parent.name = 'mcp-sandbox-proxy:kept:planted:""\\n' + entry;
      report('planted', parent.name.length);`));
    assert.ok(await report(page, 'planted') > 0);
    await page.evaluate(() => {
      document.getElementById('proxy').remove();
      window.received.length = 0;
    });
    await page.evaluate((o) => window.mountProxy(o), { proxyUrl });
    // Resolved by the new page's ready notification: a page that mounted the planted entry
    // instead would never send it, and this test would time out.
    const second = await frameAt(page, proxyUrl);
    await sleep(300);
    const received = await page.evaluate(() => window.received);
    assert.equal(received.filter((m) => m.data.method === 'ui/notifications/sandbox-proxy-ready').length, 1,
      'the new proxy page says it is ready, as any');
    assert.ok(!reports(received).includes('mounted'), 'the planted resource was not mounted');
    assert.equal(await second.evaluate(() => document.querySelectorAll('iframe').length), 0, 'nothing was mounted');
  });

  it('the view cannot forge sandbox-* messages to the host or the proxy', T, async (t) => {
    const { page, proxyFrame } = await hostPage(t);
    const forged = view("report('mounted', 'forged-by-view')");
    await page.evaluate((html) => window.sendResource({ html }), view(`
      parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-resource-ready', params: { html: ${JSON.stringify(forged).replaceAll('</', '<\\/')} } }, '*');
      parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} }, '*');
      report('done', true);`));
    assert.equal(await report(page, 'done'), true);
    await roundTrip(page, 'settled');
    const received = await page.evaluate(() => window.received);
    assert.equal(received.filter((m) => m.data.method?.startsWith('ui/notifications/sandbox-')).length, 1,
      'only the proxy\'s own sandbox-proxy-ready reached the host');
    assert.ok(!reports(received).includes('mounted'));
    assert.equal(await proxyFrame.evaluate(() => document.querySelectorAll('iframe').length), 1);
  });

  it('a new sandbox-resource-ready replaces the view: the old one is gone and holding starts again', T, async (t) => {
    const { page, logged, proxyFrame } = await hostPage(t);
    await page.evaluate((html) => window.sendResource({ html }), view(`
      report('mounted', 'first');
      let n = 0;
      setInterval(() => report('tick-a', n++), 10);`));
    assert.equal(await report(page, 'mounted'), 'first');
    await page.waitForFunction(() => window.received.filter((m) => m.data.params?.key === 'tick-a').length >= 3);
    await mountWithEarlyMessages(page, "report('mounted', 'second')");
    assert.deepEqual(await report(page, 'early'), [1, 2, 3], 'held for the new view and delivered to it');
    await sleep(200);
    await roundTrip(page, 'after-replacement');
    const keys = (await page.evaluate(() => window.received)).map((m) => m.data.params?.key);
    const firstOfNew = keys.findIndex((k, i) => k === 'mounted' && keys.indexOf('mounted') !== i);
    assert.ok(firstOfNew > 0, keys.join(' '));
    assert.equal(keys.lastIndexOf('tick-a') < firstOfNew, true, `nothing of the old view after the new one: ${keys.join(' ')}`);
    assert.equal(await proxyFrame.evaluate(() => document.querySelectorAll('iframe').length), 1);
    const console = await logged();
    assert.ok(console.some((m) => m.includes('the view is replaced')), console.join('\n'));
  });

  it('a sandbox-resource-ready without html replaces nothing', T, async (t) => {
    const { page, proxyFrame } = await hostPage(t);
    await page.evaluate((html) => window.sendResource({ html }), view("report('mounted', 'first')"));
    assert.equal(await report(page, 'mounted'), 'first');
    await page.evaluate(() => window.sendResource({ sandbox: 'allow-scripts' }));
    await roundTrip(page, 'still-the-first');
    assert.equal(await proxyFrame.evaluate(() => document.querySelectorAll('iframe').length), 1);
  });

  it('host messages sent before the view listens are held and delivered in order', T, async (t) => {
    const { page } = await hostPage(t);
    await mountWithEarlyMessages(page, "report('listening', true)");
    assert.deepEqual(await report(page, 'early'), [1, 2, 3]);
  });

  it('the view cannot navigate the top window', T, async (t) => {
    const { page } = await hostPage(t);
    const before = await page.url();
    await page.evaluate(([html]) => window.sendResource({ html }), [view(`
      let outcome = 'navigated';
      try { window.top.location.href = ${JSON.stringify(`${evilOrigin}/frame`)}; } catch (e) { outcome = 'threw ' + e.name; }
      report('top', outcome);`)]);
    await report(page, 'top');
    await roundTrip(page, 'after-navigation-attempt');
    assert.equal(await page.url(), before, 'the host page is still there');
  });

  // WebKit forgets an ancestor's sandbox flags for a child frame whose attribute is removed or
  // widened before it is navigated: from there a view opened windows and moved the chat's tab,
  // after a real click in it. The page's own CSP sandbox policy keeps the flags for everything
  // below it.
  it('a view cannot leave the sandbox through a child frame whose sandbox it changes', T, async (t) => {
    const { page } = await hostPage(t);
    const before = await page.url();
    escapes.length = 0;
    const target = `${evilOrigin}/escaped`;
    await page.evaluate(([html]) => window.sendResource({ html }), [view(`
      const target = ${JSON.stringify(target)};
      let ready = 0;
      window.addEventListener('message', (e) => { if (e.data === 'child-ready' && ++ready === 2) report('children', 'ready'); });
      document.body.style.margin = '0';
      ['removed', 'widened'].forEach((how, i) => {
        const child = document.createElement('iframe');
        child.setAttribute('sandbox', 'allow-scripts');
        child.style.cssText = 'position:fixed;top:0;height:100vh;width:50vw;border:0;left:' + (i * 50) + 'vw';
        document.body.appendChild(child);
        if (how === 'removed') child.removeAttribute('sandbox');
        else child.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox allow-top-navigation');
        const escape = (what) => 'try { ' + what + ' } catch (e) {}';
        child.srcdoc = '<body style="margin:0;height:100vh"><script>' +
          'document.addEventListener("click", () => {' +
          escape('window.open(' + JSON.stringify(target + '?how=' + how + '-popup') + ');') +
          escape('top.location.href = ' + JSON.stringify(target + '?how=' + how + '-top') + ';') +
          '}); parent.postMessage("child-ready", "*");<' + '/script></body>';
      });`)]);
    assert.equal(await report(page, 'children'), 'ready');
    const box = await page.evaluate(() => {
      const r = document.querySelector('iframe').getBoundingClientRect();
      return { x: r.left, y: r.top, width: r.width, height: r.height };
    });
    for (const share of [0.25, 0.75]) await page.clickAt(box.x + box.width * share, box.y + box.height / 2);
    await sleep(1500);
    assert.deepEqual(escapes, [], 'no window opened on, and no navigation to, the attacker\'s page');
    assert.equal(await page.url(), before, 'the host page is still there');
  });

  it('connectDomains: a declared loopback API is reachable, an undeclared one is not', T, async (t) => {
    const { page } = await hostPage(t, { csp: { connectDomains: [allowedApi] } });
    await page.evaluate(([html, csp]) => window.sendResource({ html, csp }), [view(`
      const get = (url) => fetch(url).then((r) => r.json()).then((j) => j.api, () => 'blocked');
      Promise.all([get(${JSON.stringify(`${allowedApi}/data`)}), get(${JSON.stringify(`${blockedApi}/data`)})])
        .then(([a, b]) => report('fetch', { a, b }));`), { connectDomains: [allowedApi] }]);
    assert.deepEqual(await report(page, 'fetch'), { a: 'allowed', b: 'blocked' });
    const notices = await page.waitForFunction(() => {
      const found = window.received.filter((m) => m.data.method === 'ui/notifications/sandbox-csp-violation');
      return found.length > 0 && found;
    });
    assert.ok(notices.some((m) => m.data.params.effectiveDirective === 'connect-src' && m.data.params.blockedURI.startsWith(blockedApi)),
      JSON.stringify(notices));
  });

  it("a view's own permissive <meta> policy does not loosen the header", T, async (t) => {
    const { page } = await hostPage(t, { csp: { connectDomains: [allowedApi] } });
    await page.evaluate((html) => window.sendResource({ html }), view(`
      fetch(${JSON.stringify(`${blockedApi}/data`)}).then(() => report('fetch', 'allowed'), () => report('fetch', 'blocked'));`,
    '<meta http-equiv="Content-Security-Policy" content="default-src * \'unsafe-inline\' \'unsafe-eval\'; connect-src *">'));
    assert.equal(await report(page, 'fetch'), 'blocked');
  });

  it('hostile ?csp= entries never reach the header', T, async (t) => {
    const hostile = ['*', `${blockedApi}; connect-src *`, "'unsafe-eval'", 'https:', 'http:', 'data:', `${blockedApi} *`];
    const { page, proxyFrame } = await hostPage(t, { csp: { connectDomains: hostile, resourceDomains: hostile } });
    // The header of the page at the very URL the frame loaded, fetched by the page itself.
    const header = await proxyFrame.evaluate(() => fetch(location.href).then((r) => r.headers.get('content-security-policy')));
    const directives = header.split(/;\s*|,\s*/);
    // Nothing was kept: the directives that take declared domains hold only the template's words.
    assert.ok(directives.includes("connect-src 'self'"), directives.join('\n'));
    assert.ok(directives.includes("script-src 'self' 'unsafe-inline'"), directives.join('\n'));
    assert.ok(directives.includes("img-src 'self' data:"), directives.join('\n'));
    await page.evaluate((html) => window.sendResource({ html }), view(`
      let evaluated = 'blocked'; try { eval('1'); evaluated = 'ran'; } catch (e) {}
      fetch(${JSON.stringify(`${blockedApi}/data`)}).then(() => 'allowed', () => 'blocked').then((f) => report('hostile', { evaluated, fetch: f }));`));
    assert.deepEqual(await report(page, 'hostile'), { evaluated: 'blocked', fetch: 'blocked' });
  });

  it('an opaque sandbox override really gives origin null, drops forbidden tokens, and still relays', T, async (t) => {
    const { page, proxyFrame, logged } = await hostPage(t);
    await page.evaluate((html) => window.sendResource({ html, sandbox: 'allow-scripts allow-top-navigation allow-top-navigation-by-user-activation' }),
      view("report('origin', self.origin)"));
    assert.equal(await report(page, 'origin'), 'null');
    assert.equal(await proxyFrame.evaluate(() => document.querySelector('iframe').getAttribute('sandbox')), 'allow-scripts');
    assert.equal(await proxyFrame.evaluate(() => document.querySelector('iframe').hasAttribute('srcdoc')), true);
    await roundTrip(page, 'opaque-relay');
    assert.ok(!(await logged()).some((m) => m.includes("shares this page's origin")), 'no same-origin note for an opaque view');
  });

  it("a host entry's view_sandbox keeps every view opaque, whatever the host asks, and unable to script its page", T, async (t) => {
    const page = await freshPage(t);
    await page.goto(`${hostOrigin}/raw`);
    await page.evaluate((o) => window.mountProxy(o), { proxyUrl: opaqueProxyUrl });
    const proxyFrame = await frameAt(page, opaqueProxyUrl);
    const probe = view(`
      let page = 'unreachable';
      try { page = parent.document.title || 'reached'; } catch (e) {}
      report('opaque', { origin: self.origin, page });`);
    for (const sandbox of [undefined, 'allow-scripts allow-same-origin allow-forms allow-popups']) {
      await page.evaluate(([html, sandbox]) => window.sendResource({ html, sandbox }), [probe, sandbox]);
      await until(async () => (await page.evaluate(() => window.received.filter(
        (m) => m.data && m.data.params && m.data.params.key === 'opaque').length)) > (sandbox ? 1 : 0), 'the view reports');
    }
    const seen = await page.evaluate(() => window.received.filter((m) => m.data.params && m.data.params.key === 'opaque')
      .map((m) => m.data.params.value));
    assert.deepEqual(seen, [{ origin: 'null', page: 'unreachable' }, { origin: 'null', page: 'unreachable' }]);
    assert.equal(await proxyFrame.evaluate(() => document.querySelector('iframe').getAttribute('sandbox')), 'allow-scripts allow-forms');
  });

  it('the default mount is same-origin with the proxy, through document.write', T, async (t) => {
    const { page, proxyFrame, logged } = await hostPage(t);
    await page.evaluate((html) => window.sendResource({ html }), view("report('origin', self.origin)"));
    assert.equal(await report(page, 'origin'), new URL(proxyUrl).origin);
    const console = await logged();
    assert.ok(console.some((m) => m.startsWith('info:') && m.includes("shares this page's origin")
      && m.endsWith('#same-origin-view')), `the host's requirements are noted:\n${console.join('\n')}`);
    assert.ok(!console.some((m) => m.includes('not a secure context')), 'served over TLS: no transport warning');
    const attrs = await proxyFrame.evaluate(() => {
      const f = document.querySelector('iframe');
      return { sandbox: f.getAttribute('sandbox'), srcdoc: f.hasAttribute('srcdoc'), allow: f.getAttribute('allow') };
    });
    // The spec's four, not requested, then every feature an operator may grant, none granted.
    const [spec, granted] = [attrs.allow.split('; ').slice(0, 4), attrs.allow.split('; ').slice(4)];
    assert.deepEqual({ ...attrs, allow: spec.join('; ') }, {
      sandbox: 'allow-scripts allow-same-origin allow-forms',
      srcdoc: false,
      allow: "camera 'none'; microphone 'none'; geolocation 'none'; clipboard-write 'none'",
    });
    assert.ok(granted.includes("fullscreen 'none'") && granted.every((f) => f.endsWith(" 'none'")), attrs.allow);
  });

  // The camera, asked for by the view itself (each engine has a fake one, granted without a
  // prompt): it reaches the view only when the resource requests it and the host delegates it.
  // An opaque view gets it only in WebKit: Chromium and Firefox never give a camera to an
  // opaque origin, and the relay says so. The fake camera answers at once; 8 s stays within
  // report()'s 10 s.
  const CAMERA = view(`Promise.race([
    navigator.mediaDevices.getUserMedia({ video: true }).then(() => 'granted', (e) => 'denied'),
    new Promise((r) => setTimeout(() => r('timeout'), 8_000)),
  ]).then((v) => report('camera', v));`);
  for (const { name, allow, permissions, sandbox, expected, warning } of [
    { name: 'requested and delegated: allowed', allow: 'camera', permissions: { camera: {} }, expected: 'granted' },
    { name: 'requested, not delegated by the host: denied', allow: undefined, permissions: { camera: {} }, expected: 'denied',
      // Only Chromium lets a page read what its own frame was delegated.
      warning: engine === 'chromium' ? "the host's iframe does not delegate camera" : undefined },
    { name: 'delegated, not requested: denied', allow: 'camera', permissions: {}, expected: 'denied' },
    { name: 'requested and delegated to an opaque view: WebKit only', allow: 'camera', permissions: { camera: {} },
      sandbox: 'allow-scripts', expected: engine === 'webkit' ? 'granted' : 'denied', warning: 'it is opaque (no allow-same-origin)' },
  ]) {
    it(`camera permission ${name}`, T, async (t) => {
      const { page, logged } = await hostPage(t, { allow });
      await page.evaluate(([html, p, s]) => window.sendResource({ html, permissions: p, sandbox: s }), [CAMERA, permissions, sandbox]);
      assert.equal(await report(page, 'camera'), expected);
      const console = await logged();
      const warned = console.filter((m) => m.includes('the view asks for camera'));
      if (warning) assert.ok(warned.some((m) => m.includes(warning)), console.join('\n'));
      else assert.deepEqual(warned, [], 'no permission warning');
    });
  }

  it("the draft spec's newer messages pass through unchanged, both ways", T, async (t) => {
    // ui/download-file, ui/notifications/request-teardown and sampling/createMessage (a view
    // asking the host's model): the relay knows none of them and needs to know none.
    const fromView = [
      { jsonrpc: '2.0', id: 1, method: 'ui/download-file', params: { contents: [{ type: 'resource', resource: { uri: 'file:///report.csv', mimeType: 'text/csv', text: 'a,b\n1,2' } }] } },
      { jsonrpc: '2.0', method: 'ui/notifications/request-teardown', params: {} },
      { jsonrpc: '2.0', id: 2, method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 16 } },
    ];
    const fromHost = [
      { jsonrpc: '2.0', id: 1, result: {} },
      { jsonrpc: '2.0', id: 2, result: { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm', stopReason: 'endTurn' } },
      { jsonrpc: '2.0', id: 7, method: 'sampling/createMessage', params: { messages: [], maxTokens: 1 } },
    ];
    const { page } = await hostPage(t);
    await page.evaluate(([html]) => window.sendResource({ html }), [view(`
      const got = [];
      window.addEventListener('message', (e) => { if (e.source === parent && e.data.method !== 'test/echo') { got.push(e.data); if (got.length === ${fromHost.length}) report('host-messages', got); } });
      for (const m of ${JSON.stringify(fromView)}) parent.postMessage(m, '*');`)]);
    const relayed = await page.waitForFunction((n) => {
      const found = window.received.filter((m) => m.data.method !== 'test/report').map((m) => m.data)
        .filter((d) => d.method !== 'ui/notifications/sandbox-proxy-ready');
      return found.length >= n && found;
    }, fromView.length);
    assert.deepEqual(relayed, fromView);
    await page.evaluate((messages) => messages.forEach((m) => window.toProxy(m)), fromHost);
    assert.deepEqual(await report(page, 'host-messages'), fromHost);
  });

  it('non-JSON-RPC data is dropped and the relay keeps relaying', T, async (t) => {
    const { page } = await hostPage(t);
    await page.evaluate((html) => window.sendResource({ html }), view(`
      for (const junk of ['text', 42, null, [1], { jsonrpc: '1.0', method: 'x' }, { jsonrpc: '2.0', method: 7 }]) parent.postMessage(junk, '*');
      report('after-junk', true);`));
    assert.equal(await report(page, 'after-junk'), true);
    await page.evaluate(() => {
      for (const junk of ['text', 42, null, [1], { method: 'x' }]) window.toProxy(junk);
    });
    await roundTrip(page, 'still-relaying');
    const received = await page.evaluate(() => window.received);
    assert.ok(received.every((m) => m.data && m.data.jsonrpc === '2.0'), JSON.stringify(received));
  });

  it('a host that passed ?csp= decides the policy: no reload widens it, and the relay names what is missing', T, async (t) => {
    // The host narrowed the server's declaration in ?csp= (the spec lets a host narrow) and sent
    // the whole declaration in sandbox-resource-ready, as the SDK does.
    const { page, proxyFrame, logged } = await hostPage(t, { csp: { connectDomains: ['https://a.example.com'] } });
    const declared = { connectDomains: ['https://a.example.com', 'https://b.example.com'] };
    await page.evaluate(([html, csp]) => window.sendResource({ html, csp }), [view("report('mounted', true)"), declared]);
    await report(page, 'mounted');
    const console = await logged();
    assert.ok(console.some((m) => m.includes('connectDomains https://b.example.com but')
      && m.includes("the host's ?csp= did not name them") && m.endsWith('#missing-domains')), console.join('\n'));
    assert.equal(new URL(proxyFrame.url).searchParams.get('upgrade'), null, 'no reload');
  });

  /** The proxy frame's current URL: it changes when the relay reloads its page. */
  async function proxyUrlNow(page) {
    return new URL((await page.frames()).find((f) => f.url.startsWith(proxyUrl.split('/sandbox.html')[0])).url);
  }

  it('a second resource during the relay\'s reload replaces the first: the reload stops, or runs for the second', T, async (t) => {
    const { page } = await hostPage(t);
    // The first needs a reload (no ?csp=, a declared domain); the second, sent at once, does not.
    await page.evaluate(([first, second]) => {
      window.sendResource({ html: first, csp: { connectDomains: ['https://a.example.com'] } });
      window.sendResource({ html: second });
    }, [view("report('mounted', 'first')"), view("report('mounted', 'second')")]);
    assert.equal(await report(page, 'mounted'), 'second');
    await sleep(500);
    assert.deepEqual(reports(await page.evaluate(() => window.received)), ['mounted'], 'the first never ran');
    assert.equal((await proxyUrlNow(page)).searchParams.get('upgrade'), null, 'the reload was stopped');
  });

  // Chromium may finish the page it began for the first reload with the first resource's name
  // (about one time in three here): a few rounds make that case come up.
  it('a second resource that needs a reload too gets its own', T, async (t) => {
    for (let round = 0; round < 4; round++) {
      const { page } = await hostPage(t);
      const second = { connectDomains: ['https://b.example.com', 42] };
      await page.evaluate(([first, html, csp]) => {
        window.sendResource({ html: first, csp: { connectDomains: ['https://a.example.com'] } });
        window.sendResource({ html, csp });
      }, [view("report('mounted', 'first')"), view("report('mounted', 'second')"), second]);
      assert.equal(await report(page, 'mounted'), 'second', `round ${round}`);
      const ready = (await page.evaluate(() => window.received)).filter(
        (m) => m.data.method === 'ui/notifications/sandbox-proxy-ready');
      assert.equal(ready.length, 1, 'the host heard ready once, through both reloads');
      const url = await proxyUrlNow(page);
      assert.equal(url.searchParams.get('upgrade'), '1');
      // Only strings go in the query: the service would answer 400 to the number.
      assert.deepEqual(JSON.parse(url.searchParams.get('csp')), { connectDomains: ['https://b.example.com'] });
    }
  });

  it('the missing-domains check matches as CSP does: sources without a scheme, wildcards, paths', T, async (t) => {
    // Every declared domain the served policy covers is not missing; the three that are
    // missing were named in ?csp= and dropped by the service (a query, a fragment), so the
    // relay names them instead of reloading.
    const dropped = { connect: 'https://other.example.org/?q', resource: 'static.example.com/other/#x' };
    const served = {
      connectDomains: ['api.example.com', '*.cdn.example.com', dropped.connect, 'http://api.example.com'],
      resourceDomains: ['https://*.img.example.com', 'static.example.com/assets/', dropped.resource],
    };
    const { page, proxyFrame, logged } = await hostPage(t, { csp: served });
    const asked = {
      connectDomains: ['https://api.example.com', 'wss://api.example.com', 'API.example.com', 'https://x.cdn.example.com',
        dropped.connect, 'http://api.example.com'],
      resourceDomains: ['a.img.example.com', '*.b.img.example.com', 'https://static.example.com/assets/app.js', dropped.resource],
    };
    await page.evaluate(([html, csp]) => window.sendResource({ html, csp }), [view("report('mounted', true)"), asked]);
    await report(page, 'mounted');
    const warnings = (await logged()).filter((m) => m.includes('the view asks for'));
    assert.deepEqual(warnings.map((m) => m.match(/asks for (\w+) (.*) but/).slice(1)), [
      ['connectDomains', `${dropped.connect}, http://api.example.com`],
      ['resourceDomains', dropped.resource],
    ], warnings.join('\n'));
    assert.equal(new URL(proxyFrame.url).searchParams.get('upgrade'), null, 'no reload');
  });

  for (const sandbox of [undefined, 'allow-scripts']) {
    it(`a view that navigates away is no longer relayed (${sandbox ? 'opaque' : 'same-origin'} view)`, T, async (t) => {
      // A declared frame domain, where the view can go.
      const thirdParty = `${thirdPartyOrigin}/third-party`;
      const csp = { frameDomains: [thirdPartyOrigin] };
      const { page } = await hostPage(t, { csp });
      await page.evaluate(([html, sandbox, csp]) => window.sendResource({ html, sandbox, csp }), [view(`
        report('before-navigation', true);
        setTimeout(() => { location.href = ${JSON.stringify(thirdParty)}; }, 50);`), sandbox, csp]);
      assert.equal(await report(page, 'before-navigation'), true);
      const navigated = await frameAt(page, thirdParty);
      await until(() => navigated.evaluate(() => document.readyState === 'complete').catch(() => false), 'the third-party page loaded');
      await page.evaluate(() => window.toProxy({ jsonrpc: '2.0', method: 'test/secret', params: 'host-data' }));
      await page.evaluate(() => window.toProxy({ jsonrpc: '2.0', method: 'test/echo', params: 'after' }));
      await sleep(600);
      const received = await page.evaluate(() => window.received);
      assert.ok(!received.some((m) => m.data.method === 'tools/call'), 'the third-party page did not reach the host');
      assert.ok(!reports(received).includes('third-party'), JSON.stringify(received));
      assert.ok(!reports(received).includes('third-party-heard'), 'nothing of the host reached it');
      if (!sandbox) {
        // A same-origin view's document is checked on every message: not even the first gets by.
        assert.ok(!reports(received).includes('third-party-early'), JSON.stringify(received));
      }
    });
  }

  it('refuses to run when the host iframe lacks allow-same-origin', T, async (t) => {
    const page = await freshPage(t);
    await page.goto(`${hostOrigin}/raw`);
    await page.evaluate((o) => { window.mountProxy(o); }, { proxyUrl, outerSandbox: 'allow-scripts' });
    const proxyFrame = await frameAt(page, proxyUrl);
    const refusal = await until(() => proxyFrame.evaluate(() => document.querySelector('.refusal')?.textContent).catch(() => null),
      'the proxy page shows its refusal');
    assert.match(refusal, /allow-scripts allow-same-origin/);
    assert.deepEqual(await page.evaluate(() => window.received), [], 'no sandbox-proxy-ready');
  });

  it("a view's synthetic securitypolicyviolation is not forwarded as the proxy's notice", T, async (t) => {
    const { page } = await hostPage(t);
    await page.evaluate((html) => window.sendResource({ html }), view(`
      document.dispatchEvent(new Event('securitypolicyviolation'));
      report('dispatched', true);`));
    await report(page, 'dispatched');
    await roundTrip(page, 'after-synthetic');
    const received = await page.evaluate(() => window.received);
    assert.ok(!received.some((m) => m.data.method === 'ui/notifications/sandbox-csp-violation'), JSON.stringify(received));
  });

  it('a malformed sandbox override mounts with the narrowest sandbox, not the default', T, async (t) => {
    const { page, proxyFrame } = await hostPage(t);
    await page.evaluate((html) => window.sendResource({ html, sandbox: ['allow-scripts', 'allow-same-origin'] }),
      view("report('origin', self.origin)"));
    assert.equal(await report(page, 'origin'), 'null');
    assert.equal(await proxyFrame.evaluate(() => document.querySelector('iframe').getAttribute('sandbox')), 'allow-scripts');
  });
  it("the page follows the host's theme, so it stays transparent over a dark host", T, async (t) => {
    const { page, proxyFrame } = await hostPage(t);
    await page.evaluate((html) => window.sendResource({ html }), view("report('mounted', true)"));
    await report(page, 'mounted');
    const scheme = () => proxyFrame.evaluate(() => document.documentElement.style.colorScheme);
    assert.equal(await scheme(), '');
    await page.evaluate(() => window.toProxy({ jsonrpc: '2.0', id: 1, result: { hostContext: { theme: 'dark' } } }));
    await roundTrip(page, 'after-initialize-result');
    assert.equal(await scheme(), 'dark');
    await page.evaluate(() => window.toProxy({ jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: { theme: 'light' } }));
    await roundTrip(page, 'after-context-change');
    assert.equal(await scheme(), 'light');
    await page.evaluate(() => window.toProxy({ jsonrpc: '2.0', method: 'ui/notifications/host-context-changed', params: { theme: 'red; x' } }));
    await roundTrip(page, 'after-junk-theme');
    assert.equal(await scheme(), 'light', 'only light or dark');
  });

  it('warns when the proxy page is not a secure context (plain http off loopback)', T, async (t) => {
    const port = await freePort();
    const plain = await startProxy(`listen = "127.0.0.1:${port}"
[[hosts]]
origin = "${hostOrigin}"
sandbox = "plain.sandbox.test:${port}"
`);
    t.after(() => plain.stop());
    const page = await freshPage(t);
    await page.goto(`${hostOrigin}/raw`);
    await page.evaluate((proxyUrl) => window.mountProxy({ proxyUrl }), `http://plain.sandbox.test:${port}/sandbox.html`);
    // Logged as the page loads, before a test could hook the frame's console: WebKit's driver
    // cannot show it (see engines.mjs). There, the page is at least not a secure context.
    const frame = await frameAt(page, `http://plain.sandbox.test:${port}/`);
    assert.equal(await frame.evaluate(() => isSecureContext), false);
    if (consoleKnown(engine)) {
      assert.ok(page.console.some((m) => m.startsWith('warning:') && m.includes('not a secure context')), page.console.join('\n'));
    }
  });
});
