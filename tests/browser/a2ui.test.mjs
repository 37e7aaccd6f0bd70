// A2UI's MCP Apps component through the service, as docs/hosts.md ("4f") says, in each engine:
// a host page of the component's shape (a2ui-host.js) is built with Vite, as the sample is, with
// the guide's VITE_MCP_SANDBOX_URL in its .env file; the operator's entry is the guide's, and the
// guide's build and csp lines are put into the component as written. Built as it ships, the
// component frames its own sample proxy, not the variable's URL. With the build line, the real
// get-time view renders (opaque, as the component mounts it) and its tools/call is answered; a
// view that declares an API reaches it with the csp line and not without (the refusal reported
// to the sandbox); its localStorage works in memory; pop-ups only with the operator's
// allow-popups, and the console names what was left out once.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'vite';
import {
  serviceFixture, startHostPages, openHostPage, startTlsServer, makeCertificate, tempDir, probeView, exampleView,
  jsonApi, recipe, frameShowing, ROOT,
} from './harness.mjs';
import { selectedEngines, until, consoleKnown } from './engines.mjs';

const T = { timeout: 90_000 };
const ENV = recipe('a2ui env');
const PATH = new URL(/VITE_MCP_SANDBOX_URL=(\S+)/.exec(ENV)[1]).pathname;

/**
 * The component built with Vite as the sample is (`vite build`, the variable in `.env`): with
 * the guide's build line (`fixed`) or as it ships, the guide's csp line where its marker is.
 */
async function buildComponent(env, { fixed }) {
  let source = readFileSync(join(ROOT, 'tests', 'browser', 'a2ui-host.js'), 'utf8');
  const csp = '/* recipe: a2ui csp */';
  const reading = /\/\/ <a2ui build>\n[\s\S]*?\/\/ <\/a2ui build>\n/;
  assert.ok(source.includes(csp) && reading.test(source));
  source = source.replace(csp, recipe('a2ui csp'));
  if (fixed) source = source.replace(reading, recipe('a2ui build'));
  mkdirSync(join(ROOT, 'target', 'browser-hosts'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'target', 'browser-hosts', 'a2ui-'));
  writeFileSync(join(dir, 'component.js'), source);
  writeFileSync(join(dir, '.env'), env);
  try {
    const [output] = await build({
      configFile: false, root: dir, envDir: dir, mode: 'production', logLevel: 'error',
      build: {
        write: false, minify: false, target: 'esnext',
        lib: { entry: join(dir, 'component.js'), formats: ['es'], fileName: 'component' },
      },
    });
    return output.output[0].code;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let shipped;
/** The component built as it ships, once: the variable's URL plays no part in it. */
const asShipped = () => (shipped ??= buildComponent(ENV, { fixed: false }));

/** The guide's .env, naming the service at `name`. */
const envFor = (name) => ENV.replace('chat.example-sandbox.net', name);

/** The guide's entry for the A2UI app at `hostOrigin`, on `name`; and one without `view_sandbox`. */
function entries({ hostOrigin, port }) {
  const guide = recipe('a2ui config')
    .replace('https://app.example.com', hostOrigin)
    .replace('chat.example-sandbox.net', `popups.sandbox.test:${port}`);
  assert.match(guide, /view_sandbox = \[.*"allow-popups"/);
  assert.match(guide, /opaque_view_storage = "memory"/);
  return `${guide}\n[[hosts]]\norigin = "${hostOrigin}"\nsandbox = "plain.sandbox.test:${port}"\nopaque_view_storage = "memory"\n`;
}

for (const engine of selectedEngines()) {
  describe(`A2UI's MCP Apps component through the service (${engine})`, () => {
    const apiCert = makeCertificate(tempDir(), ['api.outside.test']);
    const fx = serviceFixture(engine, {
      tls: ['popups.sandbox.test', 'plain.sandbox.test'],
      admin: true,
      hosts: entries,
      trust: [apiCert],
      host: async ({ hostPort, port }) => startHostPages(hostPort, await buildComponent(envFor(`plain.sandbox.test:${port}`), { fixed: true }), {
        scripts: {
          '/popups.js': await buildComponent(envFor(`popups.sandbox.test:${port}`), { fixed: true }),
          '/as-shipped.js': await asShipped(),
        },
      }),
    });
    let api;
    before(async () => { api = await startTlsServer({ '/data': jsonApi }, apiCert); });
    after(async () => api?.close());

    const open = (t, name, config) => openHostPage(fx, t, name, config);

    const sandboxUrl = (name) => `https://${name}:${fx.port}${PATH}`;

    const viewFrame = (page, selector, text) => frameShowing(page, selector, text);

    it('built as it ships, it frames its own sample proxy and not VITE_MCP_SANDBOX_URL', T, async (t) => {
      const page = await open(t, 'as-shipped', {
        hostScript: '/as-shipped.js', htmlContent: exampleView('vanillajs'), firstTime: 'first', secondTime: 'second',
      });
      const framed = await until(async () => (await page.evaluate(() => window.host)).framed, 'the URL the component framed');
      assert.equal(framed, `http://127.0.0.1:${fx.hostPort}/sample-sandbox/sandbox.html`);
    });

    it('the real get-time view renders, opaque, its tools/call is answered, and the ready came from the configured origin', T, async (t) => {
      const [first, second] = ['2026-12-03T08:00:00.000Z', '2026-12-03T08:00:01.000Z'];
      const page = await open(t, 'get-time', { htmlContent: exampleView('vanillajs'), firstTime: first, secondTime: second });
      const frame = await viewFrame(page, '#server-time', first);
      assert.equal(await frame.evaluate(() => window.origin), 'null', 'the component mounts views opaque');
      await frame.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Get Server Time').click());
      await viewFrame(page, '#server-time', second);
      const host = await page.evaluate(() => window.host);
      assert.equal(host.initialized, true);
      assert.deepEqual(host.calls.map((c) => c.name), ['get-time']);
      assert.deepEqual(host.readyOrigins, [`https://plain.sandbox.test:${fx.port}`]);
      assert.equal(host.framed, sandboxUrl('plain.sandbox.test'));
    });

    for (const [mode, reached] of [['as it ships', 'blocked'], ['with the guide\'s csp line', 'ok']]) {
      it(`a view that declares an API: ${reached === 'ok' ? 'reached' : 'refused'} ${mode}`, T, async (t) => {
        const connect = `https://api.outside.test:${api.port}/data`;
        const page = await open(t, `probe-${reached}`, {
          htmlContent: await probeView({ connect, camera: true }),
          resourceCsp: { connectDomains: [`https://api.outside.test:${api.port}`] },
          recipe: reached === 'ok',
        });
        const report = await until(async () => (await page.evaluate(() => window.host)).calls.find((c) => c.name === 'report'),
          'the view\'s report', 45_000);
        assert.equal(report.arguments.connect, reached);
        // The component's iframe delegates nothing: no camera, whatever the view asks.
        assert.notEqual(report.arguments.camera, 'granted');
        // The component sends no permissions, so only the browser can say why: Chromium does.
        if (engine === 'chromium') {
          assert.ok(page.console.some((m) => m.includes('Permissions policy violation: camera is not allowed')), page.console.join('\n'));
        }
        if (reached === 'blocked') {
          await until(async () => {
            const rows = (await (await fetch(`http://127.0.0.1:${fx.adminPort}/csp-reports`)).json()).reports;
            return rows.some((r) => r.directive === 'connect-src' && r.blocked === `https://api.outside.test:${api.port}`);
          }, 'the refusal in the report table', 30_000);
        }
      });
    }

    for (const [name, popups] of [['popups.sandbox.test', true], ['plain.sandbox.test', false]]) {
      it(`pop-ups ${popups ? 'with' : 'without'} the operator's allow-popups, the console says what was left out, and storage in memory`, T, async (t) => {
        const page = await open(t, `popups-${popups}`, {
          hostScript: popups ? '/popups.js' : '/host.js', htmlContent: exampleView('vanillajs'), firstTime: 'first', secondTime: 'second',
        });
        const frame = await viewFrame(page, '#server-time', 'first');
        // The entry's opaque_view_storage: the opaque view's localStorage works, in memory.
        assert.equal(await frame.evaluate(() => { localStorage.setItem('theme', 'dark'); return localStorage.getItem('theme'); }), 'dark');
        const proxyFrame = (await page.frames()).find((f) => f.url.startsWith(sandboxUrl(name)));
        const tokens = (await proxyFrame.evaluate(() => document.querySelector('iframe').getAttribute('sandbox'))).split(' ');
        assert.equal(tokens.includes('allow-popups'), popups, tokens.join(' '));
        assert.ok(tokens.includes('allow-modals') && !tokens.includes('allow-same-origin'), tokens.join(' '));
        if (consoleKnown(engine)) {
          const warned = page.console.filter((m) => m.includes('ignored sandbox tokens'));
          assert.equal(warned.length, popups ? 0 : 1, page.console.join('\n'));
          if (!popups) assert.match(warned[0], /"allow-popups": not in this host entry's view_sandbox/);
        }
      });
    }
  });
}
