// CSP violation reports in each engine: a same-origin and an opaque view, each refused a
// connection, an image and an eval, are reported by the browser to the sandbox itself; the
// admin listener's table then shows each refusal once, under the server's label and the right
// directive, and nothing of the blocked URLs' paths or queries. Then, in Firefox, why the
// policies name `report-uri` alone: a policy that also names `report-to` is reported nowhere.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { serviceFixture, view, report, startServer, html, freePort } from './harness.mjs';
import { selectedEngines, launch, until } from './engines.mjs';

const SECRET = 'user=s3cr3t';

/** A view that tries the three refused loads, each of its own origin per mode, then says so. */
function refusedLoads(mode) {
  return view(`
const tries = [];
tries.push(fetch('https://api-${mode}.blocked.example/v1/me?${SECRET}').then(() => 'reached', () => 'refused'));
tries.push(new Promise((resolve) => {
  const img = new Image();
  img.onload = () => resolve('loaded');
  img.onerror = () => resolve('refused');
  img.src = 'https://img-${mode}.blocked.example/pixel.png?${SECRET}';
}));
let evaluated;
try { evaluated = eval('"ran"'); } catch { evaluated = 'refused'; }
Promise.all(tries).then(([fetched, image]) => report('loads', { fetched, image, evaluated, origin: self.origin }));`);
}

const EXPECTED = (mode) => [
  { directive: 'connect-src', blocked: `https://api-${mode}.blocked.example` },
  { directive: 'img-src', blocked: `https://img-${mode}.blocked.example` },
  { directive: 'script-src', blocked: 'eval' },
];

async function table(fx) {
  const answer = await fetch(`http://127.0.0.1:${fx.adminPort}/csp-reports`);
  assert.equal(answer.status, 200);
  const text = await answer.text();
  return { text, reports: JSON.parse(text).reports };
}

for (const engine of selectedEngines()) {
  describe(`CSP violation reports (${engine})`, () => {
    const fx = serviceFixture(engine, {
      tls: ['reports.sandbox.test', '*.reports.sandbox.test'],
      admin: true,
      hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "reports.sandbox.test:${port}"
per_server_subdomains = true
`,
    });

    for (const [mode, sandbox, origin] of [
      ['same', undefined, (fx) => `https://same.reports.sandbox.test:${fx.port}`],
      ['opaque', 'allow-scripts', () => 'null'],
    ]) {
      it(`${mode === 'same' ? 'a same-origin' : 'an opaque'} view's refused loads reach the table once each, as origins`, { timeout: 90_000 }, async () => {
        const page = await fx.browser.newPage();
        try {
          await page.goto(`${fx.hostOrigin}/raw`);
          await page.evaluate((proxyUrl) => window.mountProxy({ proxyUrl }), fx.url(`${mode}.reports.sandbox.test`));
          await page.evaluate((r) => window.sendResource(r), { html: refusedLoads(mode), ...(sandbox ? { sandbox } : {}) });
          assert.deepEqual(await report(page, 'loads'), { fetched: 'refused', image: 'refused', evaluated: 'refused', origin: origin(fx) });
          const expected = EXPECTED(mode).map((row) => ({ host: fx.hostOrigin, label: mode, from: 'view', ...row }));
          const mine = (reports) => reports.filter((row) => row.label === mode)
            .map(({ host, label, from, directive, blocked }) => ({ host, label, from, directive, blocked }));
          const sorted = (rows) => [...rows].sort((a, b) => `${a.directive}${a.blocked}`.localeCompare(`${b.directive}${b.blocked}`));
          // Browsers send reports when they choose to: wait for all three, then compare.
          const seen = await until(async () => {
            const { reports } = await table(fx);
            return mine(reports).length >= expected.length && reports;
          }, `three reports under the label ${mode}`, 30_000, 250);
          assert.deepEqual(sorted(mine(seen)), sorted(expected), 'one row each, with the right label and directive');
          const { text } = await table(fx);
          for (const leak of [SECRET, '/v1/me', 'pixel.png', 'sandbox.html', '?csp']) {
            assert.ok(!text.includes(leak), `the table keeps ${leak}: ${text}`);
          }
        } catch (error) {
          error.message += `\nconsole:\n${page.console.join('\n')}`;
          throw error;
        } finally {
          await page.close();
        }
      });
    }

    it('the counter per host entry and directive counts them', { timeout: 30_000 }, async () => {
      const metrics = await (await fetch(`http://127.0.0.1:${fx.adminPort}/metrics`)).text();
      for (const directive of ['connect-src', 'img-src', 'script-src']) {
        const line = metrics.split('\n').find((l) => l.startsWith(`mcp_sandbox_proxy_csp_violations_total{host="${fx.hostOrigin}",directive="${directive}"}`));
        assert.ok(line && Number(line.split(' ').pop()) >= 2, `${directive}: ${line}`);
      }
    });
  });
}

// Firefox ESR 153 drops a policy's report-uri when it also names report-to, and sends nothing
// at all: the reason the service names report-uri alone (docs/http.md). When a Firefox starts
// reporting such a policy, this fails, and the policies may name report-to as well.
if (selectedEngines().includes('firefox')) {
  describe('report-uri beside report-to (firefox)', () => {
    it('a policy with report-to is reported nowhere, the same policy without it is', { timeout: 60_000 }, async () => {
      const port = await freePort();
      const received = [];
      const collector = (req, res) => {
        let body = '';
        req.on('data', (chunk) => { body += chunk; });
        req.on('end', () => { received.push({ path: req.url, body }); res.writeHead(204).end(); });
      };
      const page = (policy, headers = {}) => html(`<img src="https://img.blocked.example/x.png">`, {
        'content-security-policy': policy, ...headers,
      });
      const endpoint = `http://127.0.0.1:${port}`;
      const server = await startServer({
        '/both': page(`img-src 'none'; report-uri ${endpoint}/report?both; report-to group`,
          { 'reporting-endpoints': `group="${endpoint}/report?group"` }),
        '/alone': page(`img-src 'none'; report-uri ${endpoint}/report?alone`),
        '/report': collector,
      }, port);
      const browser = await launch('firefox');
      try {
        const tab = await browser.newPage();
        await tab.goto(`${endpoint}/both`);
        await tab.goto(`${endpoint}/alone`);
        await until(() => received.some((r) => r.path === '/report?alone'), 'the report of the policy without report-to', 20_000);
        // Reports of /both were due first: none came in the time /alone's took, and none after.
        await new Promise((r) => setTimeout(r, 2000));
        assert.deepEqual(received.filter((r) => r.path !== '/report?alone').map((r) => r.path), []);
        await tab.close();
      } finally {
        await browser.close();
        await server.close();
      }
    });
  });
}
