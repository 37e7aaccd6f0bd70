// Each kind of chat host as it is (issue: hosts that do not all talk to a sandbox proxy the same
// way), through the service, with the real SDK on both sides (AppBridge in the host, App in the
// view), in each browser engine:
// - a host that follows the spec's flow literally: no ?csp=, the csp only in
//   sandbox-resource-ready. The relay reloads its page once with the declared domains;
// - a host that also injects its own policy into the view's HTML (a <meta> CSP): both apply;
// - a host that keeps its views opaque (sandbox="allow-scripts allow-forms"), as it did with
//   srcdoc on its own page.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { sdkHostFixture, startTlsServer, makeCertificate, probeView, tempDir, jsonApi, reportOnSdkHost } from './harness.mjs';
import { selectedEngines } from './engines.mjs';

// A 1×1 transparent PNG, for the resource-domain probe.
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

for (const engine of selectedEngines()) {
  describe(`host shapes through the proxy (${engine})`, () => {
    // What the view reaches beyond the sandbox, over https (WebKit blocks plain http from an
    // https page): an API, a CDN, and a name declared in a form the service drops.
    const outsideCert = makeCertificate(tempDir(), ['api.outside.test', 'cdn.outside.test', 'dropped.outside.test']);
    const fx = sdkHostFixture(engine, [outsideCert]);
    let outside, declared, outsidePort;

    before(async () => {
      outside = await startTlsServer({
        '/data': jsonApi,
        '/pixel.png': (req, res) => {
          res.writeHead(200, { 'content-type': 'image/png' });
          res.end(PIXEL);
        },
      }, outsideCert);
      outsidePort = outside.port;
      declared = {
        connectDomains: [`https://api.outside.test:${outsidePort}`, `https://dropped.outside.test:${outsidePort}/data?x=1`],
        resourceDomains: [`https://cdn.outside.test:${outsidePort}`],
      };
    });

    after(async () => outside?.close());

    const probe = () => ({
      connect: `https://api.outside.test:${outsidePort}/data`,
      resource: `https://cdn.outside.test:${outsidePort}/pixel.png`,
      dropped: `https://dropped.outside.test:${outsidePort}/data`,
    });

    async function upgrades() {
      const text = await (await fetch(`http://127.0.0.1:${fx.adminPort}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`mcp_sandbox_proxy_policy_upgrades_total{host="${fx.hostOrigin}"}`));
      return Number(line.split(' ').pop());
    }

    /** Runs the SDK host with `config` on a fresh page; what the view reported through tools/call. */
    async function run(t, name, config) {
      const label = `${name.replace(/\W+/g, '-')}-${Math.random().toString(16).slice(2, 8)}`;
      const proxyUrl = `https://${label}.chat.sandbox.test:${fx.port}/sandbox.html`;
      return reportOnSdkHost(fx, t, name, { proxyUrl, firstTime: 'first', secondTime: 'second', ...config });
    }

    it('a host that sends the csp only in sandbox-resource-ready: the relay reloads once, and the view reaches what it declared', { timeout: 90_000 }, async (t) => {
      const before = await upgrades();
      const viewHtml = await probeView(probe());
      const { report, host, page } = await run(t, 'spec-literal', { viewHtml, csp: declared, cspInQuery: false });
      assert.deepEqual(
        { connect: report.connect, resource: report.resource, dropped: report.dropped },
        { connect: 'ok', resource: 'ok', dropped: 'blocked' },
        'the declared domains are reached; the one the service drops stays blocked',
      );
      assert.equal(host.initialized, true);
      assert.equal(host.proxyReadyCount, 1, 'the host hears sandbox-proxy-ready once, not again after the reload');
      assert.equal(await upgrades(), before + 1, 'the reload is counted');
      // The proxy frame now carries the declared domains in its own URL, and no kept-resource
      // fragment: what its predecessor carried in the frame's name was taken and cleared.
      const proxyFrame = (await page.frames()).find((f) => f.url.includes('.chat.sandbox.test'));
      const url = new URL(proxyFrame.url);
      assert.equal(url.searchParams.get('upgrade'), '1');
      assert.deepEqual(JSON.parse(url.searchParams.get('csp')), declared);
      assert.equal(url.hash, '');
      assert.equal(await proxyFrame.evaluate(() => window.name), '', 'nothing is left in the frame\'s name');
    });

    it('a host that passes ?csp= itself: no reload, even for a domain the service dropped', { timeout: 90_000 }, async (t) => {
      const before = await upgrades();
      const viewHtml = await probeView(probe());
      const { report, host } = await run(t, 'csp-in-query', { viewHtml, csp: declared });
      assert.deepEqual(
        { connect: report.connect, resource: report.resource, dropped: report.dropped },
        { connect: 'ok', resource: 'ok', dropped: 'blocked' },
      );
      assert.equal(host.proxyReadyCount, 1);
      assert.equal(await upgrades(), before, 'no reload');
    });

    it('a host that injects its own <meta> CSP into the view: both policies apply', { timeout: 90_000 }, async (t) => {
      // The host sanitized the resource's domains into its own policy and, for its own reasons,
      // allows no images from the CDN: the service's header allows them, the host's does not.
      const meta = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; connect-src https://api.outside.test:${outsidePort}; img-src 'none'">`;
      const viewHtml = await probeView(probe(), meta);
      const { report } = await run(t, 'meta-csp', { viewHtml, csp: declared, cspInQuery: false });
      assert.deepEqual(
        { connect: report.connect, resource: report.resource, dropped: report.dropped },
        { connect: 'ok', resource: 'blocked', dropped: 'blocked' },
        'connect works (both allow it); the image is blocked by the host\'s own policy',
      );
    });

    it('a host that keeps the view opaque (allow-scripts allow-forms): a separate origin, the policy, and the SDK round trip', { timeout: 90_000 }, async (t) => {
      const viewHtml = await probeView(probe());
      const { report, host } = await run(t, 'opaque', {
        viewHtml, csp: declared, cspInQuery: false, sandbox: 'allow-scripts allow-forms',
      });
      assert.deepEqual(
        { connect: report.connect, resource: report.resource, dropped: report.dropped, origin: report.origin },
        { connect: 'ok', resource: 'ok', dropped: 'blocked', origin: 'null' },
      );
      assert.equal(host.initialized, true);
    });
  });
}
