// Per-server labels and cookies, in Chromium over TLS (HTTP/2): a view of one MCP server that
// plants cookies for the sandbox name — a flood up to the browser's own cap — neither costs
// another server's view its page nor lets that view read them.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startTlsProxy, startServer, freePort, html, launchChromium, freshPage,
  RAW_HOST, view, report,
} from './harness.mjs';

const T = { timeout: 30_000 };

/** Frames the proxy page at `proxyUrl`; fails if its ready notification does not come. */
async function mount(page, proxyUrl) {
  await page.evaluate((u) => Promise.race([
    window.mountProxy({ proxyUrl: u }),
    new Promise((_, reject) => setTimeout(() => reject(new Error(`no sandbox-proxy-ready from ${u}`)), 10_000)),
  ]), proxyUrl);
}

describe('cookies planted by one server\'s view', () => {
  let browser, proxy, server, hostOrigin, proxyPort;

  before(async () => {
    const hostPort = await freePort();
    proxyPort = await freePort();
    hostOrigin = `http://host.localhost:${hostPort}`;
    let cert;
    ({ proxy, cert } = await startTlsProxy({ hostOrigin, port: proxyPort, perServer: true }));
    server = await startServer({ '/raw': html(RAW_HOST) }, hostPort);
    browser = await launchChromium({ spki: [cert.spki] });
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    assert.equal(await proxy?.stop(), 0);
  });

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

  it("another server's next view loads, and reads none of them", T, async (t) => {
    const { page, console } = await freshPage(browser, t);
    const answers = [];
    // allHeaders(): headers() leaves out security-related ones such as Clear-Site-Data.
    page.on('response', (r) => answers.push({ url: r.url(), status: r.status(), headers: r.allHeaders() }));
    await page.goto(`${hostOrigin}/raw`);

    const serverA = `https://server-a.chat.sandbox.test:${proxyPort}/sandbox.html`;
    await mount(page, serverA);
    await page.evaluate((h) => window.sendResource({ html: h }), view(PLANT));
    assert.ok(await report(page, 'planted') > 8000, 'the flood was planted');

    // Server B's view, in a new proxy frame on its own label.
    await page.evaluate(() => {
      document.getElementById('proxy').remove();
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
