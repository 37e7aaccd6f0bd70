// Mattermost's agents plugin's host shape (mattermost/mattermost-plugin-agents, its MCP Apps
// support): @mcp-ui/client's AppRenderer frames `<SandboxURL>/sandbox.html` with `?csp=` from
// the resource's declared domains, on a page Mattermost serves with `Referrer-Policy:
// no-referrer`, as it serves every page. In each engine the real basic view renders and its
// tools/call reaches the host, and the page the frame got carries the declared domains, though
// neither its request nor the page has a referrer: nothing the service or the relay does
// depends on one (docs/hosts.md, "Mattermost").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  serviceFixture, chatHost, CHAT_NAMES, startHostPages, openHostPage, frameShowing, bundleRendererHost, exampleView,
} from './harness.mjs';
import { selectedEngines, until } from './engines.mjs';

const [FIRST_TIME, SECOND_TIME] = ['2026-01-26T10:00:00.000Z', '2026-01-26T10:00:01.000Z'];
const CSP = { connectDomains: ['https://api.example.com'] };

for (const engine of selectedEngines()) {
  describe(`Mattermost's host shape, no referrer (${engine})`, () => {
    const fx = serviceFixture(engine, {
      tls: CHAT_NAMES,
      hosts: chatHost(),
      host: async ({ hostPort }) => startHostPages(hostPort, await bundleRendererHost(),
        { headers: { 'referrer-policy': 'no-referrer' } }),
    });

    it('the view renders and calls its tool, under the declared domains, with no referrer to the page', { timeout: 60_000 }, async (t) => {
      // The plugin's SandboxURL is the sandbox's origin; it loads <SandboxURL>/sandbox.html.
      const proxyUrl = fx.url('chat.sandbox.test');
      const page = await openHostPage(fx, t, 'mattermost', {
        proxyUrl, views: [exampleView('vanillajs')], csp: CSP, firstTime: FIRST_TIME, secondTime: SECOND_TIME,
      });
      const view = await frameShowing(page, '#server-time', FIRST_TIME);
      await view.evaluate(() => [...document.querySelectorAll('button')]
        .find((b) => b.textContent.trim() === 'Get Server Time').click());
      await frameShowing(page, '#server-time', SECOND_TIME);
      assert.deepEqual((await page.evaluate(() => window.host)).calls.map((c) => c.name), ['get-time']);
      const proxy = await until(async () => (await page.frames()).find((f) => f.url.startsWith(proxyUrl)), 'the proxy frame');
      assert.equal(new URL(proxy.url).searchParams.get('csp'), JSON.stringify(CSP), 'AppRenderer put the csp in the URL');
      const seen = await proxy.evaluate(() => ({
        referrer: document.referrer,
        applied: JSON.parse(document.getElementById('sandbox-config').textContent).applied.connectDomains,
      }));
      assert.deepEqual(seen, { referrer: '', applied: CSP.connectDomains });
    });
  });
}
