// The real MCP Apps SDK host (AppBridge + PostMessageTransport) drives the real example views
// (@modelcontextprotocol/server-basic-vanillajs and -react) through the service, plain and TLS.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startProxy, startServer, freePort, html, makeCertificate, bundleSdkHost, exampleView,
  launchChromium, collectConsole, tempDir,
} from './harness.mjs';

const VIEWS = {
  vanillajs: { time: '#server-time' },
  react: { time: '[class*="serverTime"]' },
};

describe('real SDK host and example views through the proxy', () => {
  let browser, hostServer, plain, tls, hostOrigin, plainPort, tlsPort;

  before(async () => {
    const hostPort = await freePort();
    plainPort = await freePort();
    tlsPort = await freePort();
    hostOrigin = `http://host.localhost:${hostPort}`;
    const cert = makeCertificate(tempDir(), ['chat.sandbox.test', '*.chat.sandbox.test']);
    const hosts = (port) => `[[hosts]]\norigin = "${hostOrigin}"\nsandbox = "chat.sandbox.test:${port}"\nper_server_subdomains = true\n`;
    plain = await startProxy(`listen = "127.0.0.1:${plainPort}"\n${hosts(plainPort)}`);
    tls = await startProxy(`listen = "127.0.0.1:${tlsPort}"\n[tls]\ncert = "${cert.cert}"\nkey = "${cert.key}"\n${hosts(tlsPort)}`);
    const bundle = await bundleSdkHost();
    hostServer = await startServer({
      '/sdk': html('<!doctype html><title>sdk host</title><body><script type="module" src="/sdk-host.js"></script></body>'),
      '/sdk-host.js': (req, res) => {
        res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
        res.end(bundle);
      },
    }, hostPort);
    browser = await launchChromium({ spki: [cert.spki] });
  });

  after(async () => {
    await browser?.close();
    await hostServer?.close();
    assert.equal(await plain?.stop(), 0, 'the plain proxy exits 0 on SIGTERM');
    assert.equal(await tls?.stop(), 0, 'the TLS proxy exits 0 on SIGTERM');
  });

  const cases = [];
  for (const transport of ['http', 'https']) {
    for (const view of Object.keys(VIEWS)) cases.push({ transport, view });
  }

  for (const { transport, view } of cases) {
    it(`${view} view over ${transport}: renders the tool result, and its tools/call reaches the host`, async () => {
      const port = transport === 'http' ? plainPort : tlsPort;
      // Over TLS, a per-server subdomain: the wildcard certificate and the label route.
      const sandbox = transport === 'http' ? `chat.sandbox.test:${port}` : `a1b2c3.chat.sandbox.test:${port}`;
      const proxyUrl = `${transport}://${sandbox}/sandbox.html`;
      const firstTime = '2026-01-26T10:00:00.000Z';
      const secondTime = '2026-01-26T10:00:01.000Z';
      const context = await browser.newContext();
      const page = await context.newPage();
      const console = collectConsole(page);
      try {
        await page.addInitScript((config) => { window.HOST_CONFIG = config; }, {
          proxyUrl, viewHtml: exampleView(view), csp: undefined, firstTime, secondTime,
        });
        await page.goto(`${hostOrigin}/sdk`);
        const frame = page.frameLocator('iframe').frameLocator('iframe');
        const time = frame.locator(VIEWS[view].time);
        await time.filter({ hasText: firstTime }).waitFor({ timeout: 15000 });
        await frame.getByRole('button', { name: 'Get Server Time' }).click();
        await time.filter({ hasText: secondTime }).waitFor({ timeout: 15000 });
        const host = await page.evaluate(() => window.host);
        assert.equal(host.initialized, true);
        assert.deepEqual(host.calls.map(({ name, arguments: args }) => ({ name, args })), [{ name: 'get-time', args: {} }]);
        assert.deepEqual(host.events, [{ proxyReadyOrigin: `${transport}://${sandbox}` }]);
      } catch (error) {
        error.message += `\nconsole:\n${console.join('\n')}`;
        throw error;
      } finally {
        await context.close();
      }
    });
  }
});
