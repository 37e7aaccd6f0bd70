// A host that writes each view's policy into its HTML as a CSP <meta> (MCP Inspector 2.x does),
// in each engine. Under the service's own policy the header's default blocks what the <meta>
// allows; with the operator's view_policy = "host" the header holds only framing and sandbox,
// the <meta> is the view's policy, and a view that came without one gets the spec's default.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture, startTlsServer, makeCertificate, tempDir, view, report, jsonApi, freshPage } from './harness.mjs';
import { selectedEngines } from './engines.mjs';

const T = { timeout: 30_000 };

for (const engine of selectedEngines()) describe(`hosts that write their views' policies (${engine})`, () => {
  const apiCert = makeCertificate(tempDir(), ['api.outside.test']);
  const fx = serviceFixture(engine, {
    tls: ['host.sandbox.test', 'service.sandbox.test'],
    hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "host.sandbox.test:${port}"
view_policy = "host"
[[hosts]]
origin = "${hostOrigin}"
sandbox = "service.sandbox.test:${port}"
`,
    trust: [apiCert],
  });
  let api, apiOrigin;

  before(async () => {
    api = await startTlsServer({
      '/data': jsonApi,
    }, apiCert);
    apiOrigin = `https://api.outside.test:${api.port}`;
  });

  after(async () => api?.close());

  /** What a view's fetch of the API came to, on the sandbox `name`, with `meta` in its head. */
  async function fetched(t, name, meta) {
    const html = view(`fetch(${JSON.stringify(`${apiOrigin}/data`)}).then((r) => r.json())
      .then((j) => report('fetched', j.ok ? 'reached' : 'odd'), () => report('fetched', 'blocked'));`, meta);
    return mounted(t, name, { html });
  }

  /** What the view of `params` (its html, its sandbox) on the sandbox `name` reported under
   * `key` (by default what it fetched). */
  async function mounted(t, name, params, key = 'fetched') {
    const page = await freshPage(fx.browser, t);
    await page.goto(`${fx.hostOrigin}/raw`);
    await page.evaluate((proxyUrl) => window.mountProxy({ proxyUrl }), fx.url(name));
    await page.evaluate((p) => window.sendResource(p), params);
    return report(page, key);
  }

  const allowsApi = () => `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; connect-src ${apiOrigin}">`;

  it("with view_policy = \"host\", the view's own <meta> is its policy", T, async (t) => {
    assert.equal(await fetched(t, 'host.sandbox.test', allowsApi()), 'reached');
  });

  it("without it, the header's default blocks what the <meta> allows", T, async (t) => {
    assert.equal(await fetched(t, 'service.sandbox.test', allowsApi()), 'blocked');
  });

  // Every template of the spec has object-src 'none'; a host's <meta> that leaves it out still
  // loads no plugin content: the page's own policy keeps that floor under it.
  for (const element of ['object', 'embed']) {
    it(`with view_policy = "host", a <meta> without object-src loads no <${element}>`, T, async (t) => {
      const meta = `<meta http-equiv="Content-Security-Policy" content="script-src 'unsafe-inline'">`;
      const html = view(`
document.addEventListener('securitypolicyviolation', (e) => {
  if (e.effectiveDirective === 'object-src') report('plugin', 'blocked');
});
const plugin = document.createElement(${JSON.stringify(element)});
plugin.${element === 'object' ? 'data' : 'src'} = ${JSON.stringify(`${apiOrigin}/data`)};
plugin.type = 'text/plain';
plugin.onload = () => report('plugin', 'loaded');
document.body.appendChild(plugin);
setTimeout(() => report('plugin', 'neither'), 5000);`, meta);
      assert.equal(await mounted(t, 'host.sandbox.test', { html }, 'plugin'), 'blocked');
    });
  }

  it('a view that came without a <meta> gets the spec default, not no policy', T, async (t) => {
    assert.equal(await fetched(t, 'host.sandbox.test', ''), 'blocked');
  });

  // A <meta> that blocks the API, but that the browser does not apply from the start: in a
  // comment or in the body it is no policy at all, and a script before it runs before it. Each
  // view fetches the API first thing; only the spec's default, in force from the start, stops it.
  const blocksAll = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'">`;
  const early = () => `<script>
const early = (value) => parent.postMessage({ jsonrpc: '2.0', method: 'test/report', params: { key: 'fetched', value } }, '*');
// Synchronous, so that the request is made while the script runs, before the <meta> below it.
const request = new XMLHttpRequest();
request.open('GET', ${JSON.stringify(`${apiOrigin}/data`)}, false);
try { request.send(); early(request.status === 200 ? 'reached' : 'odd'); } catch { early('blocked'); }
</script>`;
  for (const [where, head] of [
    ['in a comment', () => `<!-- ${blocksAll} -->`],
    ['after a script', () => `${early()}${blocksAll}`],
    ['after text, so in the body', () => `early text ${blocksAll}`],
  ]) {
    it(`a view whose only CSP <meta> is ${where} gets the spec default from the start`, T, async (t) => {
      assert.equal(await fetched(t, 'host.sandbox.test', head()), 'blocked');
    });
  }

  // Where the parser, not a reader of our own, says a policy starts: text that looks like space
  // before the doctype starts the body, a comment ends at "--!>", a title only at "</title" and
  // a space, "/" or ">", and "&#32;" is an empty policy. In a same-origin view and an opaque one.
  for (const [where, html] of [
    ['a byte order mark before its doctype', () => `\ufeff<!doctype html><html><head></head><body>${early()}</body></html>`],
    ['U+00A0 before its doctype', () => `\u00a0<!doctype html><html><head></head><body>${early()}</body></html>`],
    ['a comment that "--!>" ends', () => `<!doctype html><!-- --!>${early()}<!-- -->${blocksAll}`],
    ['a title that "</titlex>" does not end', () => `<!doctype html><title>t</titlex>${blocksAll}</title>${early()}`],
    ['a <meta> whose content is "&#32;"', () => `<!doctype html><meta http-equiv="Content-Security-Policy" content="&#32;">${early()}`],
  ]) {
    for (const sandbox of ['allow-scripts allow-same-origin', 'allow-scripts']) {
      it(`a view with ${where} gets the spec default from the start (${sandbox})`, T, async (t) => {
        assert.equal(await mounted(t, 'host.sandbox.test', { html: html(), sandbox }), 'blocked');
      });
    }
  }
});
