// @mcp-ui/client's AppRenderer, as a chat host uses it, through the service in each engine: it
// renders a view, and when the resource's HTML changes it sends sandbox-resource-ready again on
// the same proxy page; the proxy replaces the view, and the new one works end to end.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  serviceFixture, chatHost, CHAT_NAMES, startServer, bundleRendererHost, exampleView, javascript,
} from './harness.mjs';
import { selectedEngines, until } from './engines.mjs';

const FIRST_TIME = '2026-01-26T10:00:00.000Z';
const SECOND_TIME = '2026-01-26T10:00:01.000Z';
const VANILLA_TIME = '#server-time';
const REACT_TIME = '[class*="serverTime"]';

for (const engine of selectedEngines()) {
  describe(`AppRenderer re-rendering a changed resource (${engine})`, () => {
    const fx = serviceFixture(engine, {
      tls: CHAT_NAMES,
      hosts: chatHost(),
      host: async ({ hostPort, url }) => {
        const config = { proxyUrl: url('chat.sandbox.test'), views: [exampleView('vanillajs'), exampleView('react')], firstTime: FIRST_TIME, secondTime: SECOND_TIME };
        const bundle = await bundleRendererHost();
        return startServer({
          '/renderer': (req, res) => {
            res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
            res.end(`<!doctype html><title>AppRenderer host</title><body><div id="root"></div>
<script>window.HOST_CONFIG = ${JSON.stringify(config).replaceAll('</', '<\\/')};</script>
<script type="module" src="/renderer-host.js"></script></body>`);
          },
          '/renderer-host.js': javascript(bundle),
        }, hostPort);
      },
    });

    it('the new view replaces the old one and works; the old one is gone', { timeout: 60_000 }, async () => {
      const page = await fx.browser.newPage();
      try {
        await page.goto(`${fx.hostOrigin}/renderer`);
        // The frames showing `selector`, with its text.
        const showing = async (selector) => {
          const found = [];
          for (const frame of await page.frames()) {
            const text = await frame.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector).catch(() => null);
            if (text !== null) found.push({ frame, text });
          }
          return found;
        };
        await until(async () => (await showing(VANILLA_TIME)).some((f) => f.text.includes(FIRST_TIME)), 'the first view shows the tool result');
        await page.evaluate(() => window.showView(1));
        const [reactView] = await until(async () => {
          const react = await showing(REACT_TIME);
          return react.length === 1 && (await showing(VANILLA_TIME)).length === 0 && react;
        }, 'the second view replaced the first');
        await reactView.frame.evaluate(() => [...document.querySelectorAll('button')]
          .find((b) => b.textContent.trim() === 'Get Server Time').click());
        await until(async () => (await showing(REACT_TIME)).some((f) => f.text.includes(SECOND_TIME)),
          "the new view's tools/call is answered");
        const host = await page.evaluate(() => window.host);
        assert.deepEqual(host.calls.map((c) => c.name), ['get-time']);
        assert.deepEqual(host.errors, []);
        const proxyFrame = (await page.frames()).find((f) => f.url.startsWith(fx.url('chat.sandbox.test')));
        assert.equal(await proxyFrame.evaluate(() => document.querySelectorAll('iframe').length), 1, 'one view at a time');
      } catch (error) {
        error.message += `\nconsole:\n${page.console.join('\n')}`;
        throw error;
      } finally {
        await page.close();
      }
    });
  });
}
