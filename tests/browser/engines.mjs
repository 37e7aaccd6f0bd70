// The three browser engines behind one small page API, so that a browser test runs unchanged in
// Chromium (playwright-core), Firefox ESR (puppeteer-core over WebDriver BiDi) and WebKitGTK
// (selenium-webdriver driving WebKitWebDriver and MiniBrowser under Xvfb). All three are Debian's;
// no tool downloads a browser.
//
// A page offers: goto(url), evaluate(fn, arg), waitForFunction(fn, arg, { timeout }) (resolves to
// the function's first truthy result), frames() (every frame but the top one: { url, evaluate }),
// url(), console (messages as `type: text`, see `consoleKnown`) and close(). Functions are sent as
// their source, so they use only their argument, never the test's variables.
//
// BROWSER_ENGINES=chromium,firefox (a comma-separated subset) limits a run to some engines.
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import { connect } from 'node:net';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { Builder } from 'selenium-webdriver';

export const ENGINE_NAMES = ['chromium', 'firefox', 'webkit'];

/** The engines this run covers: BROWSER_ENGINES, or all three. */
export function selectedEngines() {
  const chosen = (process.env.BROWSER_ENGINES || ENGINE_NAMES.join(',')).split(',').map((e) => e.trim()).filter(Boolean);
  for (const engine of chosen) {
    if (!ENGINE_NAMES.includes(engine)) {
      throw new Error(`BROWSER_ENGINES: unknown engine "${engine}" (known: ${ENGINE_NAMES.join(', ')})`);
    }
  }
  return chosen;
}

/**
 * Whether `page.console` holds every frame's console. WebKitWebDriver (WebKitGTK 2.50) has no
 * log access: no WebDriver BiDi, and MiniBrowser's console-to-stdout setting does not reach the
 * pages automation opens. There, `hookConsole` records what a frame logs after it is called.
 */
export function consoleKnown(engine) {
  return engine !== 'webkit';
}

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
const FIREFOX = process.env.FIREFOX || '/usr/bin/firefox-esr';
const WEBKIT_DRIVER = process.env.WEBKIT_DRIVER || '/usr/bin/WebKitWebDriver';
const MINIBROWSER = process.env.MINIBROWSER || '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';

/**
 * Launches `engine`. `spki`: certificate hashes Chromium trusts (the others accept the tests'
 * self-signed certificates); every host name reaches 127.0.0.1 (Chromium by its resolver
 * rules, the others through `loopbackProxy`). `webgl`: pages need WebGL, which headless Firefox
 * has no driver for without a GPU; it then runs under Xvfb (Mesa's software renderer), as
 * WebKit always does. Chromium has its own software renderer.
 */
export async function launch(engine, { spki = [], webgl = false, storage = 'default' } = {}) {
  if (storage !== 'default' && engine !== 'firefox') throw new Error(`${engine}: no storage setting but its default`);
  switch (engine) {
    case 'chromium': return launchChromium(spki);
    case 'firefox': return launchFirefox(webgl, storage);
    case 'webkit': return launchWebKit();
    default: throw new Error(`unknown engine ${engine}`);
  }
}

/** Headless Debian Chromium's flags: `*.test` resolves to 127.0.0.1, and certificates with the
 * `spki` hashes are trusted. No `--disable-features`: Chromium keeps only the last one given, so
 * one here would drop playwright-core's own list (which already holds HttpsUpgrades), storage
 * partitioning off among it, and with it the browser a host's users may run, where a
 * cross-site frame gets no storage. */
function chromiumArgs(spki = []) {
  const args = [
    '--no-sandbox', '--no-first-run', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--disable-quic', '--disable-gpu',
    '--host-resolver-rules=MAP *.test 127.0.0.1, EXCLUDE localhost',
    // A fake camera and microphone, granted without a prompt, for the permission tests.
    '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream',
  ];
  if (spki.length) args.push(`--ignore-certificate-errors-spki-list=${spki.join(',')}`);
  return args;
}

async function launchChromium(spki) {
  // playwright-core drives the given executable; it never downloads a browser of its own.
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: chromiumArgs(spki) });
  return {
    engine: 'chromium',
    // playwright's own browser, for what needs DevTools itself (bench/mount.mjs).
    raw: browser,
    async newPage() {
      const context = await browser.newContext();
      const page = wrapped(await context.newPage(), () => context.close(),
        (raw, fn, arg, timeout) => raw.waitForFunction(fn, arg, { timeout }));
      // The README's screenshot: Chromium's rendering at the demo's size.
      page.screenshot = async (path) => {
        await page.raw.setViewportSize({ width: 1100, height: 520 });
        await page.raw.screenshot({ path });
      };
      return page;
    },
    close: () => browser.close(),
  };
}

/** `storage: 'denied'`: Firefox blocking all cookies, which denies a cross-site frame its
 * storage as strict tracking protection, Safari or Brave may. */
async function launchFirefox(webgl, storage) {
  const proxy = await loopbackProxy();
  const display = webgl ? await startXvfb() : null;
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: FIREFOX,
    headless: !display,
    env: display ? { ...process.env, DISPLAY: display.name } : process.env,
    acceptInsecureCerts: true,
    extraPrefsFirefox: {
      'network.proxy.type': 1,
      'network.proxy.http': '127.0.0.1',
      'network.proxy.http_port': proxy.port,
      'network.proxy.ssl': '127.0.0.1',
      'network.proxy.ssl_port': proxy.port,
      'network.proxy.no_proxies_on': '',
      // A fake camera and microphone, granted without a prompt, for the permission tests.
      'media.navigator.streams.fake': true,
      'media.navigator.permission.disabled': true,
      // Mesa's software renderer is on Firefox's blocklist: allowed, for the WebGL tests.
      'webgl.force-enabled': webgl,
      ...(storage === 'denied' ? { 'network.cookie.cookieBehavior': 2 } : {}),
    },
  });
  return {
    engine: 'firefox',
    async newPage() {
      const context = await browser.createBrowserContext();
      const page = wrapped(await context.newPage(), () => context.close(),
        (raw, fn, arg, timeout) => raw.waitForFunction(fn, { timeout, polling: 50 }, arg));
      return page;
    },
    async close() {
      await browser.close();
      await proxy.close();
      display?.stop();
    },
  };
}

/**
 * A playwright or puppeteer page as this module's page (their APIs agree but for the order of
 * `waitForFunction`'s arguments); the library's own page stays at `raw`.
 */
function wrapped(raw, close, waitForFunction) {
  const console = [];
  // puppeteer names a warning `warn`, playwright `warning`: one name here.
  raw.on('console', (m) => console.push(`${m.type() === 'warn' ? 'warning' : m.type()}: ${m.text()}`));
  raw.on('pageerror', (e) => console.push(`pageerror: ${e.message}`));
  return {
    raw,
    console,
    goto: (url) => raw.goto(url),
    evaluate: (fn, arg) => raw.evaluate(fn, arg),
    waitForFunction: async (fn, arg, { timeout = 10_000 } = {}) => (await waitForFunction(raw, fn, arg, timeout)).jsonValue(),
    // `async`: a frame detached meanwhile makes puppeteer throw at once rather than reject.
    frames: async () => raw.frames().filter((f) => f !== raw.mainFrame())
      .map((f) => ({ url: f.url(), evaluate: async (fn, a) => f.evaluate(fn, a) })),
    url: async () => raw.url(),
    // A real (trusted) click at a point of the page's viewport: what a user does.
    clickAt: (x, y) => raw.mouse.click(x, y),
    close,
  };
}

// WebKit: a new WebKitWebDriver and MiniBrowser for each page cost about twice what a new window
// in a running one does, in time and more in CPU, so a browser keeps its MiniBrowser sessions
// and each page is a window of one. A page has its session to itself: all windows of a
// MiniBrowser share one ephemeral data store (cookies, storage, caches, HSTS), and two pages
// open at once must not share it, as two contexts do not in the other two engines. So a page
// opened beside an open one gets a session of its own, and a closed page's session serves the
// next page only once that store is cleared and found empty (`clearDataStore`): each page
// starts from nothing, as it did in a MiniBrowser of its own.
async function launchWebKit() {
  const proxy = await loopbackProxy();
  const display = await startXvfb();
  // Every session still running, busy or not: a page whose test timed out while the page was
  // being made is never closed by that test, and its driver would keep the run from ever ending.
  const sessions = new Set();
  // Sessions with no page open, each with `clean`, whether its data store was found empty.
  const idle = [];

  async function startSession() {
    const port = await freePort();
    const driverProcess = spawn(WEBKIT_DRIVER, [`--port=${port}`, '--host=127.0.0.1'], {
      env: { ...process.env, DISPLAY: display.name },
      stdio: 'ignore',
    });
    const session = { driverProcess, alive: true };
    sessions.add(session);
    driverProcess.once('exit', () => { session.alive = false; sessions.delete(session); });
    try {
      await untilListening(port);
      // MiniBrowser's own proxy option: WebDriver's `sslProxy` makes libsoup speak TLS to the
      // proxy itself instead of asking it for a tunnel.
      session.driver = await new Builder().usingServer(`http://127.0.0.1:${port}`).withCapabilities({
        browserName: 'MiniBrowser',
        acceptInsecureCerts: true,
        // Mock capture devices: a camera and a microphone for the permission tests.
        'webkitgtk:browserOptions': {
          binary: MINIBROWSER,
          args: ['--automation', `--proxy=http://127.0.0.1:${proxy.port}`,
            '--enable-media-stream=true', '--enable-mock-capture-devices=true'],
        },
      }).build();
      return session;
    } catch (error) {
      end(session);
      throw error;
    }
  }

  // MiniBrowser outlives a killed driver (until the display goes): it is ended first.
  function end(session) {
    session.alive = false;
    const { driverProcess } = session;
    if (driverProcess.exitCode === null && driverProcess.signalCode === null) {
      for (const pid of childPids(driverProcess.pid)) {
        try { process.kill(pid); } catch { /* gone already */ }
      }
    }
    driverProcess.kill();
  }

  /** An idle session whose data store is empty, or a new one. */
  async function takeSession() {
    while (idle.length) {
      const session = idle.shift();
      if (session.alive && await session.clean) return session;
      end(session);
    }
    return startSession();
  }

  return {
    engine: 'webkit',
    async newPage() {
      const session = await takeSession();
      const { driver } = session;
      // A session's first page is the window MiniBrowser opens with it (its first new window
      // costs more than starting it does); closed, that window stays, to keep the session open
      // between pages and to clear the data store from. Later pages are new windows, not tabs,
      // which MiniBrowser shows smaller, hidden and unfocused.
      const first = !session.parking;
      if (!first) {
        try {
          await bounded(driver.switchTo().newWindow('window'), 30_000, 'WebKitWebDriver opening a window');
        } catch (error) {
          end(session);
          throw error;
        }
      }
      let closed = false;
      const evaluateHere = (fn, arg) => runInCurrentFrame(driver, fn, arg);
      const page = {
        console: [],
        goto: (url) => driver.get(url),
        evaluate: async (fn, arg) => {
          await driver.switchTo().defaultContent();
          return evaluateHere(fn, arg);
        },
        waitForFunction: (fn, arg, { timeout = 10_000 } = {}) =>
          until(() => page.evaluate(fn, arg), `waitForFunction is true: ${fn}`, timeout, 50),
        frames: () => webKitFrames(driver),
        url: () => driver.getCurrentUrl(),
        async clickAt(x, y) {
          await driver.switchTo().defaultContent();
          await driver.actions({ async: true }).move({ x: Math.round(x), y: Math.round(y) }).click().perform();
        },
        // A driver whose MiniBrowser is gone answers nothing: given 10 s to close the window,
        // the session is ended instead, so that a crashed browser fails its test rather than
        // holding the run, and is never handed to another page.
        async close() {
          if (closed) return;
          closed = true;
          try {
            await bounded((async () => {
              if (first) {
                session.parking = await driver.getWindowHandle();
              } else {
                await driver.close();
                await driver.switchTo().window(session.parking);
              }
            })(), 10_000, 'WebKitWebDriver closing a window');
          } catch {
            end(session);
            return;
          }
          session.clean = bounded(clearDataStore(session, 15_000), 20_000, 'MiniBrowser clearing its data store')
            .then(() => true, () => false);
          idle.push(session);
        },
      };
      return page;
    },
    async close() {
      idle.length = 0;
      for (const session of sessions) end(session);
      display.stop();
      await proxy.close();
    },
  };
}

// WebDriver deletes only the cookies of the page's own host. MiniBrowser's about:data page
// lists its whole data store, and its buttons clear it through a message handler of MiniBrowser
// (webkit_website_data_manager_clear), every type at once here: cookies, local and session
// storage, IndexedDB, CacheStorage, service workers, the memory and disk caches (and the
// back/forward cache with the memory cache), HSTS. The page reloads once the clear is done; the
// store counts as clear when it then lists nothing.
const ABOUT_DATA = 'minibrowser-about:data';
// WEBKIT_WEBSITE_DATA_ALL in WebKitGTK 2.50.
const WEBSITE_DATA_ALL = (1 << 14) - 1;

/** Clears the data store of `session`'s MiniBrowser from the window its driver is switched to;
 * throws after `timeout` ms, or once the session is ended. */
async function clearDataStore(session, timeout) {
  const { driver } = session;
  const started = Date.now();
  // Replacing the document: a page left by a new history entry would stay in the window's
  // back/forward cache. The mark tells the document left from the one that replaces it. The
  // driver may answer with an error as the page goes: the listing below is what counts.
  await driver.switchTo().defaultContent();
  await driver.executeScript(`document.documentElement.dataset.left = 'yes'; location.replace(arguments[0]);`, ABOUT_DATA)
    .catch(() => {});
  let askedAt = 0;
  let loaded = false;
  for (;;) {
    if (!session.alive) throw new Error('the session was ended');
    if (Date.now() - started > timeout) throw new Error(`${ABOUT_DATA} still lists data after ${timeout} ms`);
    // The page's id, which its buttons carry (the message names the page to reload), or null
    // once nothing is listed.
    const listed = await driver.executeScript(`
      if (location.href !== arguments[0] || document.readyState !== 'complete' || document.documentElement.dataset.left) return 'loading';
      const button = document.querySelector('input[onclick]');
      return button ? button.getAttribute('onclick').match(/\\('(\\d+):/)[1] : null;`, ABOUT_DATA).catch(() => 'loading');
    if (listed === null) return;
    if (listed !== 'loading') loaded = true;
    // A page that would not be replaced (its script never ran) is left as any other.
    if (!loaded && Date.now() - started > 3000) {
      loaded = true;
      await driver.get(ABOUT_DATA).catch(() => {});
    }
    if (listed !== 'loading' && Date.now() - askedAt > 1000) {
      askedAt = Date.now();
      await driver.executeScript('window.webkit.messageHandlers.aboutData.postMessage(arguments[0])', `${listed}:${WEBSITE_DATA_ALL}`)
        .catch(() => {});
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The pids of `pid`'s children (Linux). */
function childPids(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((task) =>
      readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return [];
  }
}

/** Runs `fn(arg)` in the frame the driver is switched to; its result must be JSON. */
async function runInCurrentFrame(driver, fn, arg) {
  const outcome = await driver.executeAsyncScript(`
    const done = arguments[arguments.length - 1];
    Promise.resolve().then(() => (${fn.toString()})(arguments[0]))
      .then((value) => done({ value: value === undefined ? null : value }),
        (error) => done({ error: String(error && error.stack || error) }));`, arg === undefined ? null : arg);
  if (outcome.error) throw new Error(`in the page: ${outcome.error}`);
  return outcome.value;
}

/** Every frame below the top one, found by walking iframes; each evaluates by switching there. */
async function webKitFrames(driver) {
  const found = [];
  async function walk(path) {
    await switchTo(driver, path);
    const count = (await driver.findElements({ css: 'iframe' })).length;
    for (let i = 0; i < count; i++) {
      const child = [...path, i];
      try {
        await switchTo(driver, child);
        const url = await driver.executeScript('return location.href');
        found.push({ url, evaluate: async (fn, arg) => { await switchTo(driver, child); return runInCurrentFrame(driver, fn, arg); } });
        await walk(child);
      } catch {
        // A frame that went away while walking: not listed.
      }
    }
  }
  await walk([]);
  await driver.switchTo().defaultContent();
  return found;
}

async function switchTo(driver, path) {
  await driver.switchTo().defaultContent();
  for (const index of path) {
    const frames = await driver.findElements({ css: 'iframe' });
    await driver.switchTo().frame(frames[index]);
  }
}

/** Polls `check` every `interval` ms until it returns something truthy, for at most `timeout` ms. */
export async function until(check, what, timeout = 15_000, interval = 100) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await bounded(check(), deadline - Date.now() + 1000, what);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** `promise`, or a failure naming `what` after `ms`: a driver call that never returns (seen
 * once in WebKit) then fails its wait, instead of silently using up the test's own timeout. */
async function bounded(promise, ms, what) {
  let timer;
  const stuck = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting until ${what}: a check did not return`)), Math.max(ms, 0));
  });
  try {
    return await Promise.race([promise, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * For an engine without log access: from now on, what `frame` logs is also kept in it
 * (`window.__logged`), and `collectHooked` reads it back.
 */
export async function hookConsole(frame) {
  await frame.evaluate(() => {
    if (window.__logged) return;
    window.__logged = [];
    for (const [method, type] of [['log', 'log'], ['info', 'info'], ['warn', 'warning'], ['error', 'error']]) {
      const original = console[method].bind(console);
      console[method] = (...args) => { window.__logged.push(`${type}: ${args.join(' ')}`); original(...args); };
    }
  });
}

/** What a frame hooked by `hookConsole` has logged since. */
export async function collectHooked(frame) {
  return frame.evaluate(() => window.__logged || []);
}

/**
 * A port free on 127.0.0.1 for a child to listen on, never one this process handed out before.
 * It is picked below the range the OS takes ports from for port 0 and for outgoing connections
 * (net.ipv4.ip_local_port_range): a port from that range, free a moment ago, may be a browser's
 * connection or another server's by the time the child listens.
 */
export async function freePort() {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = PICKED_FROM.low + Math.floor(Math.random() * (PICKED_FROM.high - PICKED_FROM.low));
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${PICKED_FROM.low}-${PICKED_FROM.high} after 100 attempts`);
}

const handedOut = new Set();
// Linux's default ephemeral range starts at 32768; ports are picked from the 12 000 below it.
const PICKED_FROM = (() => {
  let low = 32768;
  try {
    low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || low;
  } catch {
    // Not Linux: its default range.
  }
  return { low: Math.max(1024, low - 12_000), high: low };
})();

async function bindable(port) {
  const server = createServer();
  const listening = await new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (listening) {
    server.close();
    await once(server, 'close');
  }
  return listening;
}

async function untilListening(port) {
  for (let i = 0; i < 200; i++) {
    const open = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1', () => { socket.destroy(); resolve(true); });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`nothing listens on 127.0.0.1:${port}`);
}

/** Xvfb on a display number it picks itself (the GTK MiniBrowser has no headless mode). */
async function startXvfb() {
  const xvfb = spawn('Xvfb', ['-displayfd', '1', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [line] = await once(createInterface({ input: xvfb.stdout }), 'line');
  return { name: `:${line.trim()}`, stop: () => xvfb.kill() };
}

/**
 * An HTTP proxy on 127.0.0.1 that sends every name to 127.0.0.1 (the same port): it stands in
 * for DNS, so that tests can use any name, such as `a1b2c3.chat.sandbox.test`, in engines
 * without host resolver rules. CONNECT for TLS and WebSocket, absolute-form requests for HTTP.
 */
export async function loopbackProxy() {
  const sockets = new Set();
  const server = createServer((req, res) => {
    const target = new URL(req.url);
    const upstream = request({
      host: '127.0.0.1', port: target.port || 80, method: req.method, path: target.pathname + target.search, headers: req.headers,
    }, (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('connect', (req, client, head) => {
    const port = Number(req.url.split(':').pop());
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => { client.destroy(); upstream.destroy(); });
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: server.address().port,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
