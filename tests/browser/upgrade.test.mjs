// The self-upgrade where storage fails: a host that sends the csp only in sandbox-resource-ready
// (the mcp-use inspector, MCP Inspector, A2UI's component) relies on the relay reloading its
// page with ?csp= and carrying the resource to the new page. The relay carries it in the frame's
// own name, with no storage API, so the view keeps its declared domains:
// - where the browser denies the proxy frame third-party storage: Chromium as playwright-core
//   launches it (storage partitioning off: a cross-site frame's sessionStorage throws), and
//   Firefox blocking all cookies (network.cookie.cookieBehavior = 2). WebKitGTK has no setting
//   that denies a frame its storage (its cookie policy, ITP and the local-storage switch leave
//   sessionStorage working: measured), so WebKit is held to the next case;
// - for a 10 MB resource, over every engine's sessionStorage quota, in all three;
// and a URL that already carries the declaration as mcp-use writes it (?widget_csp=) mounts with
// its domains in one load, with no reload at all.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sdkHostFixture, startTlsServer, makeCertificate, probeView, tempDir, jsonApi, reportOnSdkHost } from './harness.mjs';
import { selectedEngines } from './engines.mjs';

const T = { timeout: 120_000 };

/** Each engine's launches: how, the launch options, and whether the browser then denies a
 * cross-site frame its storage. Chromium does as playwright-core launches it. */
const LAUNCHES = {
  chromium: [['as launched, third-party storage denied', {}, true]],
  firefox: [['as launched', {}, false], ['third-party storage denied', { storage: 'denied' }, true]],
  webkit: [['as launched', {}, false]],
};

for (const engine of selectedEngines()) {
  for (const [how, launchOptions, denied] of LAUNCHES[engine]) describe(`the self-upgrade without storage (${engine}, ${how})`, () => {
    const outsideCert = makeCertificate(tempDir(), ['api.outside.test']);
    const fx = sdkHostFixture(engine, [outsideCert], launchOptions);
    let outside, declared, probe;

    before(async () => {
      outside = await startTlsServer({ '/data': jsonApi }, outsideCert);
      declared = { connectDomains: [`https://api.outside.test:${outside.port}`] };
      probe = { connect: `https://api.outside.test:${outside.port}/data` };
    });

    after(async () => outside?.close());

    async function upgrades() {
      const text = await (await fetch(`http://127.0.0.1:${fx.adminPort}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`mcp_sandbox_proxy_policy_upgrades_total{host="${fx.hostOrigin}"}`));
      return Number(line.split(' ').pop());
    }

    /** The SDK host with the csp only in sandbox-resource-ready; what the view reported, the
     * host's state, and what the proxy page said and can see of its own storage. */
    async function run(t, viewHtml, query = '') {
      const label = `u${Math.random().toString(16).slice(2, 10)}`;
      const proxyUrl = `https://${label}.chat.sandbox.test:${fx.port}/sandbox.html${query}`;
      const config = { proxyUrl, viewHtml, csp: declared, cspInQuery: false, firstTime: 'first', secondTime: 'second' };
      const { page, report, host } = await reportOnSdkHost(fx, t, label, config, 60_000);
      const proxyFrame = (await page.frames()).find((f) => f.url.includes(`${label}.chat.sandbox.test`));
      const proxy = await proxyFrame.evaluate(() => {
        let storage = 'available';
        try { sessionStorage.getItem('x'); } catch (e) { storage = `denied (${e.name})`; }
        return { url: location.href, name: window.name, storage };
      });
      return { report, host, proxy };
    }

    if (denied) {
      it('a host that sends the csp only in sandbox-resource-ready keeps its declared domains', T, async (t) => {
        const before = await upgrades();
        const { report, host, proxy } = await run(t, await probeView(probe));
        assert.match(proxy.storage, /^denied/, 'the browser denies this frame its storage');
        assert.equal(report.connect, 'ok', 'the declared API is reached');
        assert.equal(host.proxyReadyCount, 1);
        assert.equal(await upgrades(), before + 1, 'one reload');
        assert.equal(proxy.name, '', 'nothing is left in the frame\'s name');
      });
    }
    if (launchOptions.storage) return;

    it('a 10 MB resource crosses the reload and keeps its declared domains', T, async (t) => {
      const before = await upgrades();
      const padding = `<!-- ${'x'.repeat(10 * 1024 * 1024)} -->`;
      const { report, host, proxy } = await run(t, await probeView(probe, padding));
      assert.equal(report.connect, 'ok', 'the declared API is reached');
      assert.equal(host.proxyReadyCount, 1);
      assert.equal(await upgrades(), before + 1, 'one reload');
      assert.equal(new URL(proxy.url).searchParams.get('upgrade'), '1');
      assert.equal(proxy.name, '', 'nothing is left in the frame\'s name');
    });

    it('a URL that carries the declaration as widget_csp mounts with its domains in one load', T, async (t) => {
      const before = await upgrades();
      const query = `?csp_mode=widget-declared&widget_csp=${encodeURIComponent(JSON.stringify(declared))}`;
      const { report, host, proxy } = await run(t, await probeView(probe), query);
      assert.equal(report.connect, 'ok', 'the declared API is reached');
      assert.equal(host.proxyReadyCount, 1);
      assert.equal(await upgrades(), before, 'no reload');
      assert.equal(new URL(proxy.url).searchParams.has('upgrade'), false);
    });
  });
}
