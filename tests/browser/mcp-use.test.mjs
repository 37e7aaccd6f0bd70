// mcp-use's inspector (@mcp-use/inspector, what `mcp-use dev` serves) through the service, as
// docs/hosts.md ("4g") says: the operator's entry and the inspector's mount options are read
// from the guide and run as written but for names and ports, the inspector mounted on a test
// server, its web UI driven as a developer does (open it on a server's URL, pick a tool,
// Execute), in each engine:
// - the real get-time example view (its server over Streamable HTTP) renders in the inspector's
//   MCP Apps panel from the sandbox origin, its tools/call changes the time, and the eval its
//   bundled zod probes for reaches the inspector's CSP panel (relay_messages = "any");
// - a view of our own (probe-server.mjs) reaches the API its _meta.ui.csp declares (in the
//   sandbox URL as widget_csp: one load, no reload) and gets the camera it asks for, which the
//   inspector delegates.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  serviceFixture, startTlsServer, makeCertificate, tempDir, probeView, freePort, ROOT, jsonApi, recipe,
} from './harness.mjs';
import { selectedEngines, until } from './engines.mjs';

const T = { timeout: 120_000 };
const SANDBOX = 'mcp-use.sandbox.test';
const VANILLA = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs', 'dist', 'index.js');

/** The guide's entry, for the inspector's page on `uiPort` and the sandbox on `port`. */
function entry(uiPort, port) {
  return recipe('mcp-use config')
    .replaceAll(':3000', `:${uiPort}`)
    .replaceAll('mcp-use.sandbox.localhost:8081', `${SANDBOX}:${port}`);
}

/** The guide's mount options, with the sandbox on `port` (over TLS here). */
function mountOptions(port) {
  const [, literal] = /mountInspector\((\{[\s\S]*?\})\)/.exec(recipe('mcp-use mount'));
  const options = new Function(`return (${literal});`)();
  assert.equal(new URL(options.sandboxOrigin).host, 'mcp-use.sandbox.localhost:8081');
  return { ...options, sandboxOrigin: `https://${SANDBOX}:${port}` };
}

/** A Node process that prints a line matching `ready` once it serves; `stop()` ends it. */
async function startServerProcess(args, env, ready) {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines = createInterface({ input: child.stdout });
  const errors = createInterface({ input: child.stderr });
  await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${args[0]} exited with ${code}`)));
    const check = (line) => { if (ready.test(line)) resolve(); };
    lines.on('line', check);
    errors.on('line', check);
  });
  return {
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // SIGKILL: the inspector answers SIGTERM by waiting for its clients, and these are
      // throwaway servers with nothing to keep.
      child.kill('SIGKILL');
      await once(child, 'exit');
    },
  };
}

for (const engine of selectedEngines()) {
  describe(`mcp-use's inspector through the service (${engine})`, () => {
    const apiCert = makeCertificate(tempDir(), ['api.outside.test']);
    let uiPort;
    // Before the fixture's own `before` (hooks run in the order they are made): the entry
    // names the inspector's port.
    before(async () => { uiPort = await freePort(); });
    const fx = serviceFixture(engine, {
      tls: [SANDBOX],
      trust: [apiCert],
      hosts: ({ port }) => entry(uiPort, port),
      // The inspector in a process of its own (mcp-use-server.mjs), stopped with the suite.
      host: async ({ port }) => {
        const inspector = await startServerProcess(
          [join(ROOT, 'tests', 'browser', 'mcp-use-server.mjs'), String(uiPort), JSON.stringify(mountOptions(port))],
          { MCP_USE_ANONYMIZED_TELEMETRY: 'false' }, /^listening$/);
        return { close: async () => inspector.stop() };
      },
    });
    const servers = [];
    let api, vanillaUrl, probeUrl;

    before(async () => {
      api = await startTlsServer({ '/data': jsonApi }, apiCert);
      const apiOrigin = `https://api.outside.test:${api.port}`;
      const [vanillaPort, probePort] = [await freePort(), await freePort()];
      servers.push(await startServerProcess([VANILLA], { PORT: String(vanillaPort) }, /listening|localhost:\d+/i));
      const probeFile = join(tempDir(), 'probe.html');
      writeFileSync(probeFile, await probeView({ connect: `${apiOrigin}/data`, camera: true }));
      servers.push(await startServerProcess([join(ROOT, 'tests', 'browser', 'probe-server.mjs'), probeFile, apiOrigin, String(probePort)], {}, /listening/));
      vanillaUrl = `http://127.0.0.1:${vanillaPort}/mcp`;
      probeUrl = `http://127.0.0.1:${probePort}/mcp`;
    });
    after(async () => {
      await Promise.all(servers.map((s) => s.stop()));
      await api?.close();
    });

    /** The inspector opened on `serverUrl`, `tool` picked and executed; closed after `t`. */
    async function execute(t, serverUrl, tool) {
      const page = await fx.browser.newPage();
      t.after(async () => {
        if (t.passed === false) t.diagnostic(page.console.map((line) => line.slice(0, 300)).join('\n'));
        await page.close();
      });
      // The inspector hides its tool list in a narrow window; puppeteer's Firefox opens 800 × 600.
      if (engine === 'firefox') await page.raw.setViewport({ width: 1280, height: 800 });
      await page.goto(`http://localhost:${uiPort}/mcp/inspector?autoConnect=${encodeURIComponent(serverUrl)}`);
      // What reaches the inspector's CSP panel from the proxy (relay_messages = "any").
      await page.evaluate(() => {
        window.cspPanel = [];
        window.addEventListener('message', (event) => {
          if (event.data?.type === 'mcp-apps:csp-violation') window.cspPanel.push({ origin: event.origin, ...event.data });
        });
      });
      await until(() => page.evaluate((name) => {
        const item = [...document.querySelectorAll('*')].find((e) => e.children.length === 0 && e.textContent.trim() === name);
        if (!item) return false;
        item.click();
        return true;
      }, tool), `the tool ${tool} listed`, 60_000);
      await until(() => page.evaluate(() => {
        const button = [...document.querySelectorAll('button')].find((b) => b.textContent.trim().startsWith('Execute'));
        if (!button) return false;
        button.click();
        return true;
      }), 'the Execute button', 30_000);
      return page;
    }

    /** The first frame of `page` for which `probe` (run in the frame) returns something. */
    async function frameWith(page, probe, what) {
      return until(async () => {
        for (const frame of await page.frames()) {
          const found = await frame.evaluate(probe).catch(() => null);
          if (found !== null && found !== undefined) return { frame, found };
        }
        return null;
      }, what, 60_000);
    }

    it('the real get-time view renders from the sandbox origin and its tools/call changes the time', T, async (t) => {
      const page = await execute(t, vanillaUrl, 'get-time');
      const proxy = await until(async () => (await page.frames()).find((f) => f.url.startsWith(`https://${SANDBOX}:${fx.port}/mcp/inspector/sandbox?`)),
        'the proxy page on the sandbox origin', 30_000);
      assert.match(proxy.url, /csp_mode=widget-declared/);
      const { frame, found: first } = await frameWith(page, () => {
        const shown = document.querySelector('#server-time')?.textContent;
        return /^\d{4}-\d\d-\d\dT/.test(shown ?? '') ? shown : null;
      }, 'the view showing the time of its tool result');
      await frame.evaluate(() => [...document.querySelectorAll('button')].find((b) => b.textContent.trim() === 'Get Server Time').click());
      await until(() => frame.evaluate((before) => {
        const now = document.querySelector('#server-time')?.textContent;
        return now && now !== before && /^\d{4}-/.test(now);
      }, first), 'a new time after the view\'s tools/call', 30_000);
      // The view's bundled zod probes for eval: the refusal reaches the inspector's CSP panel.
      const panel = await until(() => page.evaluate(() => (window.cspPanel.length ? window.cspPanel : null)),
        'a violation for the inspector\'s CSP panel', 30_000);
      assert.equal(panel[0].origin, `https://${SANDBOX}:${fx.port}`);
      assert.equal(panel[0].effectiveDirective, 'script-src');
      assert.equal(panel[0].blockedUri, 'eval');
    });

    it('a view that declares an API reaches it, and gets the camera the inspector delegates', T, async (t) => {
      const page = await execute(t, probeUrl, 'probe');
      const { found: results } = await frameWith(page, () => (document.body?.dataset.done === 'true' ? window.results : null),
        'the probe view\'s results');
      assert.equal(results.connect, 'ok', JSON.stringify(results));
      assert.equal(results.camera, 'granted', JSON.stringify(results));
      assert.equal(results.origin, `https://${SANDBOX}:${fx.port}`, 'the view keeps the sandbox origin');
      const proxy = (await page.frames()).find((f) => f.url.startsWith(`https://${SANDBOX}:${fx.port}/`));
      // The inspector writes the declaration into its sandbox URL as widget_csp, which the service
      // reads as csp: the page had the view's domains from its first load, with no reload.
      const url = new URL(proxy.url);
      assert.ok(url.searchParams.has('widget_csp'), proxy.url);
      assert.equal(url.searchParams.get('upgrade'), null, 'no reload');
    });
  });
}
