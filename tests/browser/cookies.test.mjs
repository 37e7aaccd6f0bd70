// Per-server labels and cookies, in Chromium over TLS (HTTP/2): a view of one MCP server that
// plants cookies for the sandbox name — a flood up to the browser's own cap — neither costs
// another server's view its page nor lets that view read them.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startTlsProxy, startServer, freePort, html, freshPage, RAW_HOST, view, report,
} from './harness.mjs';
import { launch } from './engines.mjs';

const T = { timeout: 30_000 };

/** Frames the proxy page at `proxyUrl`; fails if its ready notification does not come. */
async function mount(page, proxyUrl) {
  await page.evaluate((u) => Promise.race([
    window.mountProxy({ proxyUrl: u }),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`no sandbox-proxy-ready from ${u}`)), 10_000)),
  ]), proxyUrl);
}

// Cookies for the parent sandbox name (shared by every label) and for the view's own label,
// as many as the view can make: Chromium keeps at most 180 partitioned cookies, 10 KiB in all.
const PLANT = `
const attributes = '; Path=/; Secure; SameSite=None; Partitioned';
for (let i = 0; i < 200; i++) {
document.cookie = 'flood' + i + '=' + 'x'.repeat(60) + '; Domain=chat.sandbox.test' + attributes;
}
document.cookie = 'secret=from-server-a' + attributes;
document.cookie = 'shared=from-server-a; Domain=chat.sandbox.test' + attributes;
report('planted', document.cookie.length);`;

describe('cookies planted by one server\'s view (Chromium)', () => {
  let browser, proxy, server, hostOrigin, proxyPort;

  before(async () => {
    const hostPort = await freePort();
    proxyPort = await freePort();
    hostOrigin = `http://host.localhost:${hostPort}`;
    let cert;
    ({ proxy, cert } = await startTlsProxy({ hostOrigin, port: proxyPort, perServer: true }));
    server = await startServer({ '/raw': html(RAW_HOST) }, hostPort);
    browser = await launch('chromium', { spki: [cert.spki] });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    assert.equal(await proxy?.stop(), 0);
  });



  it("another server's next view loads, and reads none of them", T, async (t) => {
    const page = await freshPage(browser, t);
    const { console } = page;
    const answers = [];
    // allHeaders(): headers() leaves out security-related ones such as Clear-Site-Data.
    page.raw.on('response', (r) => answers.push({ url: r.url(), status: r.status(), headers: r.allHeaders() }));
    await page.goto(`${hostOrigin}/raw`);

    const serverA = `https://server-a.chat.sandbox.test:${proxyPort}/sandbox.html`;
    await mount(page, serverA);
    await page.evaluate((h) => window.sendResource({ html: h }), view(PLANT));
    assert.ok(await report(page, 'planted') > 8000, 'the flood was planted');

    // Server B's view, in a new proxy frame on its own label, while A's is still open (so A's
    // page has not cleared them on its way out): B's request carries them, its answer clears them.
    await page.evaluate(() => {
      document.getElementById('proxy').id = 'proxy-a';
      window.received = [];
    });
    const serverB = `https://server-b.chat.sandbox.test:${proxyPort}/sandbox.html`;
    await mount(page, serverB);
    await page.evaluate((h) => window.sendResource({ html: h }),
      view("report('cookies', document.cookie)"));
    assert.equal(await report(page, 'cookies'), '', "server A's cookies are not readable");

    const pageB = answers.find((a) => a.url.startsWith(serverB));
    assert.equal(pageB.status, 200, 'the flood did not cost the page');
    assert.equal((await pageB.headers)['clear-site-data'], '"cookies"', 'the answer cleared them');
    assert.ok(console.some((m) => m.includes('Cleared data types: "cookies"')), 'and Chromium cleared them');
  });
});

// Firefox lets a cross-site frame plant far more (its partition takes 180 cookies of 4 KiB) and
// ignores Clear-Site-Data in a frame: the relay's own clearing is what protects the next view.
describe('cookies planted by one server\'s view (Firefox)', () => {
  let browser, proxy, server, hostOrigin, proxyPort;

  before(async () => {
    const hostPort = await freePort();
    proxyPort = await freePort();
    hostOrigin = `http://host.localhost:${hostPort}`;
    ({ proxy } = await startTlsProxy({ hostOrigin, port: proxyPort, perServer: true }));
    server = await startServer({ '/raw': html(RAW_HOST) }, hostPort);
    browser = await launch('firefox');
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    assert.equal(await proxy?.stop(), 0);
  });

  /** The host page in a new Firefox page, closed after `t`; its console is printed if `t` failed. */
  async function hostPage(t) {
    const page = await freshPage(browser, t);
    await page.goto(`${hostOrigin}/raw`);
    return { page, console: page.console };
  }

  it("another server's next view reads none of them", T, async (t) => {
    const { page, console } = await hostPage(t);
    await mount(page, `https://server-a.chat.sandbox.test:${proxyPort}/sandbox.html`);
    await page.evaluate((h) => window.sendResource({ html: h }), view(PLANT));
    assert.ok(await report(page, 'planted') > 8000, 'the flood was planted');
    await page.evaluate(() => {
      document.getElementById('proxy').remove();
      window.received = [];
    });
    await mount(page, `https://server-b.chat.sandbox.test:${proxyPort}/sandbox.html`);
    await page.evaluate((h) => window.sendResource({ html: h }), view("report('cookies', document.cookie)"));
    assert.equal(await report(page, 'cookies'), '', "server A's cookies are not readable");
    assert.ok(console.some((m) => m.includes('cleared') && m.includes('cookie(s) a view had set')),
      console.join('\n'));
  });

  it('a flood larger than HTTP/2 takes is gone when its view goes, so the next view loads', T, async (t) => {
    const { page, console } = await hostPage(t);
    await mount(page, `https://server-a.chat.sandbox.test:${proxyPort}/sandbox.html`);
    // About 400 KB: far over limits.h2_cookie_bytes (32 KiB), within what Firefox keeps.
    await page.evaluate((h) => window.sendResource({ html: h }), view(`
for (let i = 0; i < 100; i++) {
  document.cookie = 'big' + i + '=' + 'x'.repeat(4000) + '; Domain=chat.sandbox.test; Path=/; Secure; SameSite=None';
}
report('planted', document.cookie.length);`));
    assert.ok(await report(page, 'planted') > 300_000, 'the flood was planted');
    // The host closes that view: its frame is removed.
    await page.evaluate(() => {
      document.getElementById('proxy').remove();
      window.received = [];
    });
    await mount(page, `https://server-b.chat.sandbox.test:${proxyPort}/sandbox.html`);
    await page.evaluate((h) => window.sendResource({ html: h }), view("report('cookies', document.cookie)"));
    assert.equal(await report(page, 'cookies'), '');
  });
});
