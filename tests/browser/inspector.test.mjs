// MCP Inspector 2.x (@modelcontextprotocol/inspector from npm) with its Apps tab pointed at the
// service, as docs/hosts.md ("4e") says: the operator's entry and the Inspector's start line are
// read from the guide and run as written, but for names and ports. In each engine, the web UI is
// driven as a developer would (connect a server, open its app in the Apps tab):
// - the real server-basic-vanillajs view renders through the service and its tool call is
//   answered, with no [sandbox] warning;
// - a view of our own (probe-server.mjs) declares an API and asks for a camera: the Inspector's
//   own CSP <meta> lets it reach the API, and since the Inspector's iframe delegates nothing,
//   the camera is denied, which the relay says (Chromium can tell it is not delegated).
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  serviceFixture, startTlsServer, makeCertificate, tempDir, probeView, freePort, ROOT, jsonApi, recipe,
} from './harness.mjs';
import { selectedEngines, until, consoleKnown } from './engines.mjs';

const T = { timeout: 90_000 };
const INSPECTOR = join(ROOT, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');
const VANILLA = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs', 'dist', 'index.js');
const SANDBOX = 'inspector.sandbox.test';

/** The guide's entry, for the UI on `uiPort` and the sandbox on `port` (over TLS here). */
function inspectorEntry(uiPort, port) {
  return recipe('inspector config')
    .replaceAll(':6274', `:${uiPort}`)
    .replaceAll('inspector.sandbox.localhost:8081', `${SANDBOX}:${port}`);
}

/** The guide's MCP_SANDBOX_FULL_ADDRESS, for the sandbox on `port`. */
function sandboxAddress(port) {
  const [, address] = /MCP_SANDBOX_FULL_ADDRESS=(\S+)/.exec(recipe('inspector start'));
  return address.replace('http://inspector.sandbox.localhost:8081', `https://${SANDBOX}:${port}`);
}

/**
 * The Inspector's web UI on `uiPort`, with the two servers it starts itself, in a process
 * group of its own so that it stops with every child. Resolves once its banner is printed.
 */
async function startInspector({ uiPort, address, servers }) {
  const dir = tempDir();
  const config = join(dir, 'servers.json');
  writeFileSync(config, JSON.stringify({ mcpServers: servers }));
  const token = `test-${Math.random().toString(36).slice(2)}`;
  const env = {
    ...process.env,
    CLIENT_PORT: String(uiPort),
    // Its own sandbox must get its fixed port, or it ignores MCP_SANDBOX_FULL_ADDRESS.
    MCP_SANDBOX_PORT: String(await freePort()),
    MCP_APP_ORIGIN_PORT: String(await freePort()),
    MCP_SANDBOX_FULL_ADDRESS: address,
    MCP_INSPECTOR_API_TOKEN: token,
    MCP_AUTO_OPEN_ENABLED: 'false',
    MCP_STORAGE_DIR: join(dir, 'storage'),
    MCP_INSPECTOR_SECRET_STORE: 'memory',
    HOST: '127.0.0.1',
  };
  const child = spawn(process.execPath, [INSPECTOR, '--web', '--config', config], { cwd: dir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const printed = [];
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', (line) => printed.push(line));
  const stop = () => {
    try { process.kill(-child.pid, 'SIGTERM'); } catch { /* gone already */ }
  };
  try {
    const banner = await until(() => {
      if (child.exitCode !== null) throw new Error(`the Inspector exited ${child.exitCode}:\n${printed.join('\n')}`);
      const at = printed.findIndex((line) => /up and running at:/.test(line));
      return at !== -1 && printed[at + 1]?.trim() ? printed.slice(at).join('\n') : null;
    }, 'the Inspector\'s banner', 30_000);
    const url = /up and running at:\s*\n\s*(\S+)/.exec(banner)[1];
    const advertised = /Sandbox \(MCP Apps\): (\S+)/.exec(printed.join('\n'))?.[1];
    return { url, advertised, printed, close: async () => stop() };
  } catch (error) {
    stop();
    throw error;
  }
}

/** Clicks the element the page function `find` returns (labels stand for Mantine's inputs);
 * found and clicked in the page, since a driver cannot return an element. */
async function click(page, find, arg, what) {
  const found = ([source, a]) => new Function('a', `return (${source})(a)`)(a);
  const call = [find.toString(), arg];
  const present = new Function('call', `return Boolean((${found})(call))`);
  await until(() => page.evaluate(present, call), what, 30_000).catch(async (error) => {
    const shown = await page.evaluate(() => document.body?.innerText.slice(0, 600)).catch(() => '?');
    error.message += `; the page shows: ${JSON.stringify(shown)}`;
    throw error;
  });
  await page.evaluate(new Function('call', `(${found})(call).click()`), call);
}

/** Connects the Inspector to `name` alone, from its server list (the Servers tab, once one is
 * connected and the tabs are shown). */
async function connect(page, name) {
  await page.evaluate(() => [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === 'Servers')?.click());
  await page.evaluate(() => {
    for (const on of document.querySelectorAll('input[role=switch][data-checked=true]')) on.parentElement.click();
  });
  await until(() => page.evaluate(() => !document.querySelector('input[role=switch][data-checked=true]')), 'the other servers disconnected', 30_000);
  await click(page, (n) => {
    const input = [...document.querySelectorAll('input[role=switch]')]
      .find((i) => i.getAttribute('aria-label') === `Connect or disconnect "${n}"`);
    return input && !input.disabled ? input.parentElement : null;
  }, name, `the switch of ${name}`);
  await until(() => page.evaluate((n) => {
    const input = [...document.querySelectorAll('input[role=switch]')]
      .find((i) => i.getAttribute('aria-label') === `Connect or disconnect "${n}"`);
    const apps = [...document.querySelectorAll('label')].some((l) => l.textContent.trim() === 'Apps');
    return input?.getAttribute('data-checked') === 'true' && apps;
  }, name), `${name} connected`, 30_000);
}

/** Opens the app of the tool whose button starts with `title`, in the Apps tab. */
async function openApp(page, title) {
  await click(page, () => [...document.querySelectorAll('label')].find((l) => l.textContent.trim() === 'Apps'), null, 'the Apps tab');
  await click(page, (t) => [...document.querySelectorAll('button')].find((b) => b.textContent.trim().startsWith(t)), title, `the ${title} app`);
}

/** The first frame of `page` for which `probe` (run in the frame) returns something. */
async function frameWith(page, probe, what, timeout = 30_000) {
  return until(async () => {
    for (const frame of await page.frames()) {
      const found = await frame.evaluate(probe).catch(() => null);
      if (found) return { frame, found };
    }
    return null;
  }, what, timeout);
}

for (const engine of selectedEngines()) describe(`MCP Inspector 2.x through the service (${engine})`, () => {
  const apiCert = makeCertificate(tempDir(), ['api.outside.test']);
  let api, inspector;

  const fx = serviceFixture(engine, {
    tls: [SANDBOX],
    trust: [apiCert],
    hosts: ({ hostPort, port }) => inspectorEntry(hostPort, port),
    host: async ({ hostPort, port }) => {
      api = await startTlsServer({
        '/data': jsonApi,
      }, apiCert);
      const apiOrigin = `https://api.outside.test:${api.port}`;
      const probeFile = join(tempDir(), 'probe.html');
      writeFileSync(probeFile, await probeView({ connect: `${apiOrigin}/data`, camera: true }));
      inspector = await startInspector({
        uiPort: hostPort,
        address: sandboxAddress(port),
        servers: {
          vanilla: { command: process.execPath, args: [VANILLA, '--stdio'] },
          probe: { command: process.execPath, args: [join(ROOT, 'tests', 'browser', 'probe-server.mjs'), probeFile, apiOrigin] },
        },
      });
      return inspector;
    },
  });

  after(async () => api?.close());

  async function openInspector(t) {
    const page = await fx.browser.newPage();
    t.after(async () => {
      if (t.passed === false) t.diagnostic([...page.console, ...inspector.printed.slice(-40)].join('\n'));
      await page.close();
    });
    await page.goto(inspector.url);
    return page;
  }

  const sandboxWarnings = (page) => page.console.filter((line) => line.startsWith('warning: [sandbox]'));

  it('uses the address from the guide', () => {
    assert.equal(inspector.advertised, sandboxAddress(fx.port));
    assert.match(inspector.url, /^http:\/\/127\.0\.0\.1:\d+\/?\?MCP_INSPECTOR_API_TOKEN=/);
  });

  it('the real get-time app renders through the service and its tool call is answered', T, async (t) => {
    const page = await openInspector(t);
    await connect(page, 'vanilla');
    await openApp(page, 'Get Time');
    const { frame, found: first } = await frameWith(page, () => {
      const text = document.querySelector('#server-time')?.textContent;
      return text && /^\d{4}-\d\d-\d\dT/.test(text) ? text : null;
    }, 'the server time in the view');
    const proxied = (await page.frames()).some((f) => f.url.startsWith(`https://${SANDBOX}:${fx.port}/sandbox`));
    assert.ok(proxied, 'the Apps tab framed the service\'s page');
    assert.equal(await frame.evaluate(() => self.origin), 'null', 'view_sandbox_default keeps the view opaque');
    await frame.evaluate(() => document.querySelector('#get-time-btn').click());
    await until(() => frame.evaluate((before) => {
      const text = document.querySelector('#server-time')?.textContent;
      return text !== before && /^\d{4}-/.test(text);
    }, first), 'a new server time from the view\'s tools/call');
    if (consoleKnown(engine)) assert.deepEqual(sandboxWarnings(page), []);
  });

  it('our app reaches its declared API; the camera the Inspector does not delegate is denied, and said', T, async (t) => {
    const page = await openInspector(t);
    await connect(page, 'probe');
    await openApp(page, 'Probe');
    const { found: results } = await frameWith(page, () => (document.body?.dataset.done === 'true' ? window.results : null),
      'the probe view\'s results');
    assert.equal(results.connect, 'ok', JSON.stringify(results));
    assert.equal(results.camera, 'denied', JSON.stringify(results));
    if (consoleKnown(engine)) {
      const warned = sandboxWarnings(page);
      assert.ok(warned.length > 0 && warned.every((line) => line.includes('asks for camera')), warned.join('\n'));
      // Both reasons where both hold (Chromium can tell the first): delegating alone would not do.
      if (engine === 'chromium') assert.ok(warned.some((line) => line.includes("the host's iframe does not delegate camera")), warned.join('\n'));
      assert.ok(warned.some((line) => line.includes('it is opaque')), warned.join('\n'));
    }
  });
});
