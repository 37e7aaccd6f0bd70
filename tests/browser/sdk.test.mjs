// The real MCP Apps SDK host (AppBridge + PostMessageTransport) drives the real example views
// (@modelcontextprotocol/server-basic-vanillajs and -react) through the service, plain and TLS,
// in each browser engine (see engines.mjs).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  startProxy, startSdkHost, freePort, makeCertificate, exampleView, tempDir,
} from './harness.mjs';
import { launch, selectedEngines, until } from './engines.mjs';

const VIEWS = {
  vanillajs: { time: '#server-time' },
  react: { time: '[class*="serverTime"]' },
};

for (const engine of selectedEngines()) {
  describe(`real SDK host and example views through the proxy (${engine})`, () => {
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
      hostServer = await startSdkHost(hostPort);
      browser = await launch(engine, { spki: [cert.spki] });
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
      it(`${view} view over ${transport}: renders the tool result, and its tools/call reaches the host`, { timeout: 60_000 }, async () => {
        const port = transport === 'http' ? plainPort : tlsPort;
        // Over TLS, a per-server subdomain: the wildcard certificate and the label route.
        const sandbox = transport === 'http' ? `chat.sandbox.test:${port}` : `a1b2c3.chat.sandbox.test:${port}`;
        const proxyUrl = `${transport}://${sandbox}/sandbox.html`;
        const firstTime = '2026-01-26T10:00:00.000Z';
        const secondTime = '2026-01-26T10:00:01.000Z';
        const config = { proxyUrl, viewHtml: exampleView(view), csp: undefined, firstTime, secondTime };
        const name = `${transport}-${view}`;
        const path = hostServer.page(name, config);
        const page = await browser.newPage();
        try {
          await page.goto(`${hostOrigin}${path}`);
          const shown = (text) => async () => {
            for (const frame of await page.frames()) {
              const found = await frame.evaluate((s) => document.querySelector(s)?.textContent ?? null, VIEWS[view].time)
                .catch(() => null);
              if (found !== null && found.includes(text)) return frame;
            }
            return null;
          };
          const viewFrame = await until(shown(firstTime), `the view shows ${firstTime}`);
          await viewFrame.evaluate(() => [...document.querySelectorAll('button')]
            .find((b) => b.textContent.trim() === 'Get Server Time').click());
          await until(shown(secondTime), `the view shows ${secondTime} after its tools/call`);
          const host = await page.evaluate(() => window.host);
          assert.equal(host.initialized, true);
          assert.deepEqual(host.calls.map(({ name: tool, arguments: args }) => ({ name: tool, args })), [{ name: 'get-time', args: {} }]);
          assert.deepEqual(host.events, [{ proxyReadyOrigin: `${transport}://${sandbox}` }]);
        } catch (error) {
          error.message += `\nconsole:\n${page.console.join('\n')}`;
          throw error;
        } finally {
          await page.close();
        }
      });
    }
  });
}
