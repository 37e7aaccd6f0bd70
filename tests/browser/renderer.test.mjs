// @mcp-ui/client's AppRenderer, as a chat host uses it, through the service in each engine: it
// renders a view, and when the resource's HTML changes it sends sandbox-resource-ready again on
// the same proxy page; the proxy replaces the view, and the new one works end to end. A host
// that re-renders while the sandbox page loads still gets its view when it keeps `sandbox.url`
// one object, as docs/hosts.md says; with a new object each render AppRenderer 7.1.1 never sends
// the view (MCP-UI-Org/mcp-ui#193), which is why the guide says so: the day that holds no more,
// the last test here fails and the guide's warning can go.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  serviceFixture, chatHost, CHAT_NAMES, startHostPages, openHostPage, frameShowing, bundleRendererHost, exampleView,
} from './harness.mjs';
import { selectedEngines, until } from './engines.mjs';

const FIRST_TIME = '2026-01-26T10:00:00.000Z';
const SECOND_TIME = '2026-01-26T10:00:01.000Z';
const VANILLA_TIME = '#server-time';
const REACT_TIME = '[class*="serverTime"]';
const READY = 'ui/notifications/sandbox-proxy-ready';

for (const engine of selectedEngines()) {
  describe(`AppRenderer re-rendering a changed resource (${engine})`, () => {
    const fx = serviceFixture(engine, {
      tls: CHAT_NAMES,
      hosts: chatHost(),
      host: async ({ hostPort }) => startHostPages(hostPort, await bundleRendererHost()),
    });
    const config = (more = {}) => ({
      proxyUrl: fx.url('chat.sandbox.test'), views: [exampleView('vanillajs'), exampleView('react')],
      firstTime: FIRST_TIME, secondTime: SECOND_TIME, ...more,
    });

    it('the new view replaces the old one and works; the old one is gone', { timeout: 60_000 }, async (t) => {
      const page = await openHostPage(fx, t, 'changed resource', config());
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
    });

    it('a host that re-renders while the sandbox page loads gets its view, with sandbox.url kept one object', { timeout: 60_000 }, async (t) => {
      const page = await openHostPage(fx, t, 're-rendered while loading', config({ rerenderWhileLoading: true }));
      const view = await frameShowing(page, VANILLA_TIME, FIRST_TIME);
      await view.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Get Server Time').click());
      await until(async () => (await page.evaluate(() => window.host)).calls.length === 1, "the view's tools/call");
      const host = await page.evaluate(() => window.host);
      assert.equal(host.rerendersWhileLoading, 1, 'the page re-rendered while the sandbox page loaded');
      assert.deepEqual(host.errors, []);
    });

    it('with a new sandbox.url object on each render, that re-render leaves the view unsent (why the guide keeps one)', { timeout: 60_000 }, async (t) => {
      const page = await openHostPage(fx, t, 'a new url each render', config({ rerenderWhileLoading: true, urlPerRender: true }));
      await until(async () => (await page.evaluate(() => window.host)).methods.includes(READY), 'the sandbox page says it is ready');
      // AppRenderer sends the view within milliseconds of that message when it sends it at all.
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const host = await page.evaluate(() => window.host);
      assert.equal(host.rerendersWhileLoading, 1);
      assert.deepEqual(host.methods.filter((m) => m !== READY), [], 'no view ever spoke to the page');
      const proxyFrame = (await page.frames()).find((f) => f.url.startsWith(fx.url('chat.sandbox.test')));
      assert.equal(await proxyFrame.evaluate(() => document.querySelectorAll('iframe').length), 0, 'no view was mounted');
    });
  });
}
