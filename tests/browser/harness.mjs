// Shared by the browser end-to-end tests: the service under test, loopback test servers,
// certificates, the bundled SDK host. engines.mjs launches the three engines, for every suite.
// Everything binds 127.0.0.1 and is stopped by the test that started it.
import { spawn, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { build } from 'esbuild';
import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, launch, until, hookConsole } from './engines.mjs';

export { freePort };

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
import { STATIC_BINARY } from '../deploy/tools.mjs';

// The static release binary scripts/test builds, the one the container image ships.
export const BINARY = STATIC_BINARY;

export function tempDir() {
  return mkdtempSync(join(tmpdir(), 'msp-browser-'));
}

/**
 * Runs the release binary. With `configText`, writes it to a file and serves it; without,
 * runs the embedded default. Resolves once the service logs that it listens.
 */
export async function startProxy(configText, { args = [] } = {}) {
  const env = { ...process.env, MCP_SANDBOX_PROXY_LOG_FORMAT: 'json', RUST_LOG: 'info' };
  delete env.MCP_SANDBOX_PROXY_CONFIG;
  const argv = ['serve', ...args];
  if (configText !== undefined) {
    const file = join(tempDir(), 'proxy.toml');
    writeFileSync(file, configText);
    argv.push('--config', file);
  }
  const child = spawn(BINARY, argv, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const logs = [];
  const lines = createInterface({ input: child.stderr });
  const listening = new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`proxy exited with ${code}:\n${logs.join('\n')}`)));
    lines.on('line', (line) => {
      let event;
      try { event = JSON.parse(line); } catch { event = { message: line }; }
      logs.push(event);
      if (event.message === 'listening') resolve(event.listen);
    });
  });
  const listen = await listening;
  return {
    listen,
    logs,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = await once(child, 'exit');
      return code;
    },
  };
}

/** A JSON answer any origin may read: the API a view's declared domain stands for. */
export function jsonApi(req, res) {
  res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' });
  res.end('{"ok":true}');
}

/** A loopback HTTP server whose routes are `path → (req, res) => void`. */
export async function startServer(routes, port = 0) {
  return listenOn(createServer(routeTo(routes)), port);
}

/** `startServer` over TLS, with `cert` (from makeCertificate). */
export async function startTlsServer(routes, cert, port = 0) {
  const options = { cert: readFileSync(cert.cert), key: readFileSync(cert.key) };
  return listenOn(createHttpsServer(options, routeTo(routes)), port);
}

function routeTo(routes) {
  return (req, res) => {
    const url = new URL(req.url, 'http://x');
    const route = routes[url.pathname];
    if (!route) { res.writeHead(404).end('not found'); return; }
    route(req, res, url);
  };
}

async function listenOn(server, port) {
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return { port: server.address().port, close: () => new Promise((r) => server.close(r)) };
}

/** A route answering with `text` as JavaScript (a bundled host). */
export function javascript(text) {
  return (req, res) => {
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
    res.end(text);
  };
}

export function html(body, headers = {}) {
  return (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers });
    res.end(body);
  };
}

/**
 * A CA-less self-signed certificate for `names` (openssl), and the SPKI hash Chromium is told
 * to trust it by. Nothing is added to any system trust store.
 */
export function makeCertificate(dir, names) {
  const cert = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  const san = names.map((n) => `DNS:${n}`).join(',');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes',
    '-keyout', key, '-out', cert, '-days', '2', '-subj', `/CN=${names[0]}`, '-addext', `subjectAltName=${san}`],
  { stdio: 'ignore' });
  const spki = execFileSync('sh', ['-c',
    `openssl x509 -in '${cert}' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64`]);
  return { cert, key, spki: spki.toString().trim() };
}

/** The config's `listen` and `[tls]` for the service on `port` with `cert` (makeCertificate). */
export function tlsListen(port, cert) {
  return `listen = "127.0.0.1:${port}"\n[tls]\ncert = "${cert.cert}"\nkey = "${cert.key}"\n`;
}

/**
 * The service over TLS on `port` for one host origin, as `chat.sandbox.test:<port>` (and its
 * per-server labels with `perServer`), with a certificate that covers both.
 */
export async function startTlsProxy({ hostOrigin, port, perServer = false, hostKeys = '' }) {
  const cert = makeCertificate(tempDir(), ['chat.sandbox.test', '*.chat.sandbox.test']);
  const proxy = await startProxy(`${tlsListen(port, cert)}${chatHost({ perServer, hostKeys })({ hostOrigin, port })}`);
  return { proxy, cert };
}

/** The one host entry most suites serve, `chat.sandbox.test:<port>`, for `serviceFixture`. */
export function chatHost({ perServer = false, hostKeys = '' } = {}) {
  return ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "chat.sandbox.test:${port}"
per_server_subdomains = ${perServer}
${hostKeys}
`;
}

/** The names `chatHost` needs a certificate for. */
export const CHAT_NAMES = ['chat.sandbox.test', '*.chat.sandbox.test'];

/**
 * The set-up the browser suites share, registered as `before` and `after` hooks of the calling
 * suite: the service on a free port, a host page server on another, and `engine` trusting the
 * service's certificate and `trust` (more certificates, from makeCertificate). Undone after the
 * suite, the service asked to exit 0.
 *
 * - `hosts(fx)`: the config's `[[hosts]]` tables, given `fx.hostOrigin`
 *   (`http://host.localhost:<hostPort>`) and `fx.port`, the service's port;
 * - `tls`: the names of the service's certificate (none: plain HTTP); `admin`: an admin
 *   listener on `fx.adminPort`;
 * - `host(fx)`: starts the host page server on `fx.hostPort` (default: RAW_HOST at /raw);
 * - `launchOptions`: for `launch` (the spki to trust are added).
 *
 * Returns the fixture, filled in once `before` has run: `hostOrigin`, `hostPort`, `port`,
 * `adminPort`, `proxy`, `cert`, `browser`, and `url(name)`, the proxy page for a sandbox name
 * on `port`.
 */
export function serviceFixture(engine, { hosts, tls = null, admin = false, host = rawHost, trust = [], launchOptions = {} }) {
  const fx = {};
  before(async () => {
    [fx.hostPort, fx.port] = [await freePort(), await freePort()];
    fx.hostOrigin = `http://host.localhost:${fx.hostPort}`;
    fx.cert = tls ? makeCertificate(tempDir(), tls) : null;
    const listen = fx.cert ? tlsListen(fx.port, fx.cert) : `listen = "127.0.0.1:${fx.port}"\n`;
    fx.url = (name) => `${fx.cert ? 'https' : 'http'}://${name}:${fx.port}/sandbox.html`;
    fx.adminPort = admin ? await freePort() : null;
    const adminListen = admin ? `admin_listen = "127.0.0.1:${fx.adminPort}"\n` : '';
    fx.proxy = await startProxy(`${adminListen}${listen}${hosts(fx)}`);
    fx.hostServer = await host(fx);
    const spki = [fx.cert, ...trust].filter(Boolean).map((c) => c.spki);
    fx.browser = await launch(engine, { ...launchOptions, spki });
  });
  after(async () => {
    await fx.browser?.close();
    await fx.hostServer?.close();
    assert.equal(await fx.proxy?.stop(), 0, 'the service exits 0 on SIGTERM');
  });
  return fx;
}

/** The host page server most suites use: RAW_HOST at /raw. */
function rawHost(fx) {
  return startServer({ '/raw': html(RAW_HOST) }, fx.hostPort);
}

/** The real ext-apps AppBridge host (sdk-host.js), bundled for the browser as one ES module. */
export async function bundleSdkHost() {
  return bundle('sdk-host.js');
}

/** A view on the real ext-apps `App` that reports what its policy lets it reach (probe-view.js),
 * as HTML with the bundle inline; `probe` is its window.PROBE. */
export async function probeView(probe, head = '') {
  const script = (await bundle('probe-view.js')).replaceAll('</', '<\\/');
  return `<!doctype html><html><head>${head}<meta charset="utf-8"><title>probe view</title></head><body>
<script>window.PROBE = ${JSON.stringify(probe).replaceAll('</', '<\\/')};</script>
<script type="module">${script}</script></body></html>`;
}

/**
 * A loopback server for host pages on the SDK host (sdk-host.js): `page(name, config)` sets the
 * page's HOST_CONFIG and returns its path. `callTool(params)`, if given, answers the views' tool
 * calls at `/tools` (a page's `toolsUrl`).
 */
export async function startSdkHost(port, { callTool } = {}) {
  const bundle = await bundleSdkHost();
  const pages = new Map();
  const server = await startServer({
    '/tools': async (req, res) => {
      const chunks = [];
      for await (const chunk of req) chunks.push(chunk);
      let result;
      try {
        result = await callTool(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch (error) {
        result = { isError: true, content: [{ type: 'text', text: String(error) }] };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(result));
    },
    '/host': (req, res, url) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(pages.get(url.searchParams.get('case')));
    },
    '/sdk-host.js': javascript(bundle),
  }, port);
  return {
    ...server,
    page(name, config) {
      pages.set(name, `<!doctype html><title>${name}</title><body>
<script>window.HOST_CONFIG = ${JSON.stringify(config).replaceAll('</', '<\\/')};</script>
<script type="module" src="/sdk-host.js"></script></body>`);
      return `/host?case=${encodeURIComponent(name)}`;
    },
  };
}

/**
 * A loopback server for host pages around one bundled script (`script`, served as /host.js,
 * with a `#root` element for React): `page(name, config)` sets that page's HOST_CONFIG and
 * returns its path. `headers` go with every page (a host's own, such as its Referrer-Policy);
 * `scripts` are other bundles by path, a page's `hostScript` naming the one it loads.
 */
export async function startHostPages(port, script, { headers = {}, scripts = {} } = {}) {
  const pages = new Map();
  const others = Object.fromEntries(Object.entries(scripts).map(([path, code]) => [path, javascript(code)]));
  const server = await startServer({
    '/host.js': javascript(script),
    ...others,
    '/page': (req, res, url) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers });
      res.end(pages.get(url.searchParams.get('case')));
    },
  }, port);
  return {
    ...server,
    page(name, config) {
      pages.set(name, `<!doctype html><title>${name}</title><body><div id="root"></div>
<script>window.HOST_CONFIG = ${JSON.stringify(config).replaceAll('</', '<\\/')};</script>
<script type="module" src="${config.hostScript ?? '/host.js'}"></script></body>`);
      return `/page?case=${encodeURIComponent(name)}`;
    },
  };
}

/** The first frame of `page` whose `selector` element's text includes `text`, once there is one. */
export async function frameShowing(page, selector, text, timeout = 45_000) {
  return until(async () => {
    for (const frame of await page.frames()) {
      const found = await frame.evaluate((s) => document.querySelector(s)?.textContent ?? null, selector).catch(() => null);
      if (found !== null && found.includes(text)) return frame;
    }
    return null;
  }, `a frame showing ${text}`, timeout);
}

/** Host page `name` of `fx` (whose host is `startHostPages`) with `config`, in a fresh page
 * closed after the test `t`, its console in the diagnostics if it failed. Returns once the
 * page's script has set `window.host`: under load, WebKit's driver was seen to return from the
 * navigation before the module script had run, and a first read found nothing. */
export async function openHostPage(fx, t, name, config) {
  const path = fx.hostServer.page(name, config);
  const page = await fx.browser.newPage();
  t.after(async () => {
    if (t.passed === false) {
      t.diagnostic(page.console.map((line) => line.slice(0, 300)).join('\n'));
      t.diagnostic(await pageState(page));
    }
    await page.close();
  });
  await page.goto(`${fx.hostOrigin}${path}`);
  await until(() => page.evaluate(() => Boolean(window.host)), `the host page ${name}'s script run`);
  return page;
}

/**
 * What a failed host-page test leaves behind, for its diagnostics: the page's `window.host`
 * and each frame's URL with what a probe view recorded there. Every read is bounded: a page
 * that stopped answering is what some failures are.
 */
async function pageState(page) {
  const within = (promise) => Promise.race([promise, new Promise((r) => setTimeout(() => r('(no answer in 5 s)'), 5000))])
    .catch((error) => `(${error.message.slice(0, 200)})`);
  const lines = [`window.host: ${JSON.stringify(await within(page.evaluate(() => window.host))).slice(0, 4000)}`];
  const frames = await within(page.frames());
  for (const frame of Array.isArray(frames) ? frames : []) {
    const state = await within(frame.evaluate(() => ({
      readyState: document.readyState, results: window.results ?? null, done: document.body?.dataset.done ?? null,
    })));
    lines.push(`frame ${frame.url.slice(0, 200)}: ${JSON.stringify(state)}`);
  }
  return lines.join('\n');
}

/**
 * Opens the SDK host page `name` of `fx` (a serviceFixture whose host is `startSdkHost`) with
 * `config` (its HOST_CONFIG, with `holdResource`), hooks the relay's console before the view is
 * sent (views evaluate code as they load, not only later), then sends the view. Returns the page
 * and the proxy page's frame; the page closes after the test `t`, its console in the diagnostics
 * if it failed.
 */
export async function showOnSdkHost(fx, t, name, config) {
  const path = fx.hostServer.page(name, { ...config, holdResource: true });
  const page = await fx.browser.newPage();
  t.after(async () => {
    if (t.passed === false) t.diagnostic(page.console.map((line) => line.slice(0, 400)).join('\n'));
    await page.close();
  });
  await page.goto(`${fx.hostOrigin}${path}`);
  const proxyFrame = await until(async () => (await page.frames()).find((f) => f.url.startsWith(config.proxyUrl)),
    'the proxy frame');
  await until(() => proxyFrame.evaluate(() => document.readyState === 'complete').catch(() => false), 'the proxy page loaded');
  await hookConsole(proxyFrame);
  await until(() => page.evaluate(() => typeof window.sendResource === 'function'), 'the host ready to send the view');
  await page.evaluate(() => window.sendResource());
  return { page, proxyFrame };
}

/** A serviceFixture for the SDK host pages: per-server names over TLS, an admin listener,
 * `engine` launched with `launchOptions` and trusting `trust` too. */
export function sdkHostFixture(engine, trust, launchOptions = {}) {
  return serviceFixture(engine, {
    tls: CHAT_NAMES,
    admin: true,
    hosts: chatHost({ perServer: true }),
    host: ({ hostPort }) => startSdkHost(hostPort),
    trust,
    launchOptions,
  });
}

/**
 * Opens the SDK host page `name` of `fx` (a serviceFixture whose host is `startSdkHost`) with
 * `config`, and waits for its view's `report` tool call (probe-view.js). Returns the page, the
 * call's arguments and the host's state; the page closes after the test `t`, its console in the
 * diagnostics if it failed.
 */
export async function reportOnSdkHost(fx, t, name, config, timeout = 30_000) {
  const path = fx.hostServer.page(name, config);
  const page = await freshPage(fx.browser, t);
  await page.goto(`${fx.hostOrigin}${path}`);
  const report = await until(async () => {
    const host = await page.evaluate(() => window.host);
    return host?.calls.find((c) => c.name === 'report');
  }, `the view's report (${name})`, timeout);
  return { page, report: report.arguments, host: await page.evaluate(() => window.host) };
}

/** The @mcp-ui/client AppRenderer host (renderer-host.jsx), bundled as one ES module. */
export async function bundleRendererHost() {
  return bundle('renderer-host.jsx');
}

/** The Vercel AI SDK chat host (ai-sdk-host.jsx), bundled as one ES module. */
export async function bundleAiSdkHost() {
  return bundle('ai-sdk-host.jsx');
}

/** `entry` (a file of tests/browser/, or an absolute path) bundled as one ES module for the browser. */
export async function bundle(entry) {
  const result = await build({
    entryPoints: [isAbsolute(entry) ? entry : join(ROOT, 'tests', 'browser', entry)],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    // Stylesheets and fonts a package imports are left out: the tests read the DOM, not pixels.
    loader: { '.css': 'empty', '.woff': 'empty', '.woff2': 'empty', '.ttf': 'empty' },
    write: false,
    logLevel: 'silent',
  });
  return result.outputFiles[0].text;
}

export function exampleView(name) {
  return readFileSync(join(ROOT, 'node_modules', '@modelcontextprotocol', `server-basic-${name}`, 'dist', 'mcp-app.html'), 'utf8');
}

/** A page of `browser` (see engines.mjs) with a fresh profile, closed after test `t`; its
 * console is printed if `t` failed. The library's own page is at `page.raw`. */
export async function freshPage(browser, t) {
  const page = await browser.newPage();
  t.after(async () => {
    if (t.passed === false) t.diagnostic(page.console.join('\n'));
    await page.close();
  });
  return page;
}

// A host page without the SDK, so each test can send exactly what it wants.
export const RAW_HOST = `<!doctype html><title>raw host</title><body><script>
window.received = [];
window.mountProxy = (opts) => new Promise((resolve) => {
  const frame = document.createElement('iframe');
  frame.id = 'proxy';
  frame.setAttribute('sandbox', opts.outerSandbox || 'allow-scripts allow-same-origin allow-forms');
  if (opts.allow) frame.setAttribute('allow', opts.allow);
  const url = new URL(opts.proxyUrl);
  if (opts.csp) url.searchParams.set('csp', JSON.stringify(opts.csp));
  window.proxyOrigin = url.origin;
  window.addEventListener('message', (event) => {
    if (event.source !== frame.contentWindow) return;
    window.received.push({ origin: event.origin, data: event.data });
    if (event.data && event.data.method === 'ui/notifications/sandbox-proxy-ready') resolve();
  });
  frame.src = url.href;
  document.body.appendChild(frame);
});
window.toProxy = (message) => document.getElementById('proxy').contentWindow.postMessage(message, window.proxyOrigin);
window.sendResource = (params) => window.toProxy({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-resource-ready', params });
</script></body>`;

/** The code block that follows `<!-- recipe: NAME -->` in docs/hosts.md: a recipe the tests run as written. */
export function recipe(name) {
  const guide = readFileSync(join(ROOT, 'docs', 'hosts.md'), 'utf8');
  const at = guide.indexOf(`<!-- recipe: ${name} -->`);
  assert.ok(at !== -1, `docs/hosts.md has the ${name} recipe`);
  const fence = guide.indexOf('```', at);
  const body = guide.indexOf('\n', fence) + 1;
  return guide.slice(body, guide.indexOf('```', body));
}

/** A test view: reports to the host through the relay as JSON-RPC notifications. */
export function view(script, head = '') {
  return `<!doctype html><html><head>${head}</head><body><script>
function report(key, value) { parent.postMessage({ jsonrpc: '2.0', method: 'test/report', params: { key, value } }, '*'); }
window.addEventListener('message', (e) => { if (e.source === parent && e.data && e.data.method === 'test/echo') report('echo', e.data.params); });
${script}
</script></body></html>`;
}

/** The value of the view's first `test/report` under `key`; `page` is a playwright page or an
 * engines.mjs page (whose waitForFunction resolves to the value itself). */
export async function report(page, key) {
  const found = await page.waitForFunction((k) => window.received.find(
    (m) => m.data && m.data.method === 'test/report' && m.data.params.key === k), key, { timeout: 10000 });
  const message = typeof found?.jsonValue === 'function' ? await found.jsonValue() : found;
  return message.data.params.value;
}
