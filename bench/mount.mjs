#!/usr/bin/env node
// View-mount latency as a chat's user feels it: the time from a host page setting its iframe's
// `src` to the sandbox proxy page to the host receiving `ui/notifications/sandbox-proxy-ready`,
// in headless Chromium with 100 ms of emulated network latency, over TLS as in production.
//
//   cold  a fresh browser context (empty HTTP cache, no open connection), first mount
//   warm  a second mount of the same URL in the same page, after the first frame is removed
//
// each with the service answering `Cache-Control: no-store` (the default) and with
// `cache_max_age = "10m"` (cacheable page, ETag, 304 on If-None-Match), and beside them a
// reference sandbox page of the ext-apps `basic-host` shape (bench/reference-sandbox.mjs: the
// policy header from `?csp=`, `no-store`, the relay as a script of its own), with the same host,
// the same latency and samples alternating, so that the table reads as ratios. Prints a table and
// the number of requests each warm mount made, and writes the samples as JSON.
//
//   bench/mount.mjs     MOUNTS=10 (mounts per cell)  MOUNT_JSON=target/mount.json
//                       MCP_SANDBOX_PROXY_BIN=path (default: the static release binary)
//
// Everything runs on loopback: the service on https://chat.sandbox.test:<port> (`*.test` maps to
// 127.0.0.1 in Chromium, the throwaway certificate is trusted by its SPKI hash), the host page on
// http://host.localhost:<port>, a different origin and site. Bounded: a watchdog stops it all.
import { execFileSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import {
  BINARY, ROOT, freePort, html, makeCertificate, startProxy, startServer, tempDir,
} from '../tests/browser/harness.mjs';
import { launch } from '../tests/browser/engines.mjs';
import { startReferenceSandbox } from './reference-sandbox.mjs';

const MOUNTS = positiveInt(process.env.MOUNTS, 10);
const LATENCY_MS = 100;
const JSON_OUT = process.env.MOUNT_JSON ? resolve(process.env.MOUNT_JSON) : join(ROOT, 'target', 'mount.json');
const MOUNT_TIMEOUT_MS = 15_000;
// The whole run: two configs × MOUNTS × (cold + warm), plus the calibration, each well under a
// second; anything near this is a hang.
const WATCHDOG_MS = 60_000 + MOUNTS * 8_000;
const SANDBOX = 'chat.sandbox.test';
const REFERENCE = 'reference.sandbox.test';
const READY = 'ui/notifications/sandbox-proxy-ready';
// What a typical view asks for; the same URL for the cold and the warm mount.
const CSP = { connectDomains: ['https://api.example.com'], resourceDomains: ['https://cdn.example.com'] };

function positiveInt(text, fallback) {
  const n = Number.parseInt(text ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : fallback;
}

// The host page: mounts one outer frame at a time, timed from setting `src` (the frame is
// already in the document, so that is what starts the navigation) to the ready notification.
const HOST_PAGE = `<!doctype html><meta charset="utf-8"><title>mount bench host</title><body><script>
window.mount = (src, timeoutMs) => new Promise((resolve, reject) => {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  document.body.appendChild(frame);
  let t0;
  const timer = setTimeout(() => { window.removeEventListener('message', onMessage); reject(new Error('no ' + ${JSON.stringify(READY)} + ' within ' + timeoutMs + ' ms')); }, timeoutMs);
  function onMessage(event) {
    if (event.source !== frame.contentWindow || !event.data || event.data.method !== ${JSON.stringify(READY)}) return;
    const ms = performance.now() - t0;
    clearTimeout(timer);
    window.removeEventListener('message', onMessage);
    resolve(ms);
  }
  window.addEventListener('message', onMessage);
  t0 = performance.now();
  frame.src = src;
});
window.unmount = () => { for (const f of document.querySelectorAll('iframe')) f.remove(); };
</script></body>`;

// ---------------------------------------------------------------------------------------------
// Resources, all stopped by `cleanup` (normal end, error, signal or watchdog).

const stoppers = [];
async function cleanup() {
  while (stoppers.length) {
    const stop = stoppers.pop();
    try {
      await Promise.race([stop(), new Promise((r) => setTimeout(r, 10_000).unref())]);
    } catch { /* already gone */ }
  }
}
const watchdog = setTimeout(async () => {
  console.error(`mount bench: no result after ${WATCHDOG_MS / 1000} s; stopping`);
  await cleanup();
  process.exit(2);
}, WATCHDOG_MS);
watchdog.unref();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, async () => { await cleanup(); process.exit(130); });
}

// ---------------------------------------------------------------------------------------------
// The service.

function configText({ port, adminPort, cert, hostOrigin, cacheMaxAge }) {
  return `${cacheMaxAge ? `cache_max_age = "${cacheMaxAge}"\n` : ''}listen = "127.0.0.1:${port}"
admin_listen = "127.0.0.1:${adminPort}"
watch_interval = "0s"
[tls]
cert = "${cert.cert}"
key = "${cert.key}"
[[hosts]]
origin = "${hostOrigin}"
sandbox = "${SANDBOX}:${port}"
[limits]
# a drain (SIGTERM at the end, or on error with a browser still connected) stays short
shutdown_grace = "2s"
`;
}

/** `check --config` on the text: null when accepted, else what it printed. */
function rejection(text) {
  const file = join(tempDir(), 'proxy.toml');
  writeFileSync(file, text);
  try {
    execFileSync(BINARY, ['check', '--config', file], { stdio: 'pipe', timeout: 10_000 });
    return null;
  } catch (error) {
    return `${error.stdout ?? ''}${error.stderr ?? ''}`.trim() || String(error);
  }
}

/** The page's caching headers as Chromium will see them (HTTP/1.1, straight to the service). */
function pageHeaders(port, path, name = SANDBOX) {
  return new Promise((resolveHeaders, reject) => {
    const req = httpsRequest({
      host: '127.0.0.1', port, path, servername: name, rejectUnauthorized: false,
      headers: { host: `${name}:${port}` }, timeout: 5_000,
    }, (res) => {
      res.resume();
      res.on('end', () => resolveHeaders({ status: res.statusCode, cacheControl: res.headers['cache-control'], etag: res.headers.etag }));
    });
    req.on('timeout', () => req.destroy(new Error('headers: timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Counters from the admin `/metrics`, each summed over its labels. */
function metrics(adminPort) {
  return new Promise((resolveMetrics, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: adminPort, path: '/metrics', timeout: 5_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { body += chunk; });
      res.on('end', () => {
        const sum = (name) => body.split('\n')
          .filter((line) => !line.startsWith('#') && new RegExp(`_${name}(\\{|\\s)`).test(line))
          .reduce((total, line) => total + Number(line.trim().split(/\s+/).pop()), 0);
        resolveMetrics({ requests: sum('requests_total'), connections: sum('connections_total') });
      });
    });
    req.on('timeout', () => req.destroy(new Error('metrics: timed out')));
    req.on('error', reject);
    req.end();
  });
}

// ---------------------------------------------------------------------------------------------
// One sample: a fresh context, a cold mount, then a warm one.

async function sample(browser, { hostUrl, src, latency, adminPort, sandboxOrigin, probeOutOfProcess = false }) {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    // Network.emulateNetworkConditions on the host page's target, site isolation left on as
    // for users: the cross-site sandbox frame commits in a renderer process of its own (an
    // out-of-process iframe with its own DevTools target), but its navigation request, the
    // one request a mount makes (the relay is inline), is made by the browser process on the
    // frame's behalf and is reported to, and throttled by, this page's target: no extra launch
    // flag or auto-attach is needed. Requests the sandbox document itself made would belong
    // to its own target and not be throttled; it makes none. The calibration in main() checks
    // this each run: at latency 100 the frame's request must take >= 90 ms send → headers.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false, latency, downloadThroughput: -1, uploadThroughput: -1,
    });
    // What the browser asked of the sandbox, from Playwright, which follows out-of-process
    // frames too; and from this target's Network events, which say how each was answered.
    let phase = 'cold';
    const seen = { cold: [], warm: [] };
    page.on('request', (r) => { if (r.url().startsWith(sandboxOrigin)) seen[phase].push(r.url()); });
    const answers = { cold: [], warm: [] };
    const byId = new Map();
    cdp.on('Network.requestWillBeSent', (e) => {
      if (e.request.url.startsWith(sandboxOrigin)) byId.set(e.requestId, { phase, how: 'network' });
    });
    cdp.on('Network.requestServedFromCache', (e) => { const a = byId.get(e.requestId); if (a) a.how = 'memory cache'; });
    cdp.on('Network.responseReceived', (e) => {
      const a = byId.get(e.requestId);
      if (!a) return;
      a.status = e.response.status;
      a.reused = e.response.connectionReused;
      const t = e.response.timing;
      if (t) {
        const span = (from, to) => (t[from] >= 0 && t[to] >= 0 ? round(t[to] - t[from]) : null);
        a.timing = { connect: span('connectStart', 'connectEnd'), tls: span('sslStart', 'sslEnd'), headers: span('sendStart', 'receiveHeadersEnd') };
      }
      if (e.response.fromDiskCache) a.how = 'disk cache';
      else if (e.response.status === 304) a.how = '304';
      answers[a.phase].push(a);
    });

    await page.goto(hostUrl);
    const cold = await page.evaluate(([s, t]) => window.mount(s, t), [src, MOUNT_TIMEOUT_MS]);
    let outOfProcess;
    if (probeOutOfProcess) {
      const frame = page.frames().find((f) => f.url().startsWith(sandboxOrigin));
      try {
        // Playwright only gives a frame a session of its own when it is out of process.
        const session = await context.newCDPSession(frame);
        outOfProcess = true;
        await session.detach();
      } catch {
        outOfProcess = false;
      }
    }
    await page.evaluate(() => window.unmount());
    phase = 'warm';
    const before = adminPort ? await metrics(adminPort) : null;
    const warm = await page.evaluate(([s, t]) => window.mount(s, t), [src, MOUNT_TIMEOUT_MS]);
    const after = adminPort ? await metrics(adminPort) : null;
    return {
      cold, warm, outOfProcess, answers,
      warmRequests: {
        browser: seen.warm.length,
        answeredBy: answers.warm.map((a) => a.how),
        service: after && after.requests - before.requests,
        newConnections: after && after.connections - before.connections,
      },
    };
  } finally {
    await context.close();
  }
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
function p90(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(0.9 * s.length) - 1)];
}
const round = (x) => Math.round(x * 10) / 10;
function summary(samples) {
  return { median: round(median(samples)), p90: round(p90(samples)), samples: samples.map(round) };
}
function tally(items) {
  const counts = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  const dir = tempDir();
  const cert = makeCertificate(dir, [SANDBOX, REFERENCE]);
  let browser; // launched once the services run, so that it is closed before they are
  const host = await startServer({ '/': html(HOST_PAGE) });
  stoppers.push(host.close);
  const hostOrigin = `http://host.localhost:${host.port}`;
  const hostUrl = `${hostOrigin}/`;
  const configs = [
    { key: 'noStore', label: 'no-store', cacheMaxAge: null },
    { key: 'cache', label: 'cache 10m', cacheMaxAge: '10m' },
  ];
  const results = {};
  // Both services run side by side and the samples alternate between them, so a busy moment of
  // the machine lands on both columns alike.
  const services = [];
  for (const config of configs) {
    const port = await freePort();
    const adminPort = await freePort();
    const text = configText({ port, adminPort, cert, hostOrigin, cacheMaxAge: config.cacheMaxAge });
    const refused = rejection(text);
    if (refused) {
      results[config.key] = { skipped: `the service refuses this config: ${refused.split('\n')[0]}` };
      continue;
    }
    const proxy = await startProxy(text);
    stoppers.push(async () => {
      const code = await proxy.stop();
      if (code !== 0) console.error(`mount bench: the service (${config.label}) exited with ${code}`);
    });
    const sandboxOrigin = `https://${SANDBOX}:${port}`;
    const src = `${sandboxOrigin}/?csp=${encodeURIComponent(JSON.stringify(CSP))}`;
    const url = new URL(src);
    services.push({
      config,
      page: await pageHeaders(port, url.pathname + url.search),
      run: (latency, extra = {}) => sample(browser, { hostUrl, src, latency, adminPort, sandboxOrigin, ...extra }),
      samples: [],
    });
  }
  if (!services.length) throw new Error(`no config was accepted: ${JSON.stringify(results)}`);
  // The reference page, served beside the service and sampled in turn with it.
  // Its script is the sandbox document's own request, which the host page's emulation does not
  // delay (see sample): the reference server holds that answer for the latency itself.
  const reference = await startReferenceSandbox(cert, { scriptDelayMs: LATENCY_MS });
  stoppers.push(reference.close);
  const referenceConfig = { key: 'reference', label: 'reference (basic-host shape)', cacheMaxAge: null };
  configs.push(referenceConfig);
  const referenceOrigin = `https://${REFERENCE}:${reference.port}`;
  const referenceSrc = `${referenceOrigin}/sandbox.html?csp=${encodeURIComponent(JSON.stringify(CSP))}`;
  services.push({
    config: referenceConfig,
    page: await pageHeaders(reference.port, new URL(referenceSrc).pathname + new URL(referenceSrc).search, REFERENCE),
    run: (latency, extra = {}) => sample(browser, { hostUrl, src: referenceSrc, latency, adminPort: null, sandboxOrigin: referenceOrigin, ...extra }),
    samples: [],
  });
  const launched = await launch('chromium', { spki: [cert.spki] });
  stoppers.push(() => launched.close());
  browser = launched.raw;

  // One unmeasured round each: the first renderer processes, the services' page caches.
  for (const service of services) await service.run(LATENCY_MS);

  // Calibration, on the first service (no-store): the same mounts without and with the
  // emulated latency, and the sandbox request's own timing from DevTools (TCP connect, TLS
  // handshake, and send → response headers). A mount makes exactly one request, the page (the
  // relay is inline), so if the emulation reaches the frame that request's send → headers time
  // is >= the latency; the connect and TLS times say whether handshakes are delayed too.
  const calibrate = services[0];
  const n = Math.min(MOUNTS, 5);
  const zero = [];
  const slow = [];
  for (let i = 0; i < n; i++) {
    zero.push(await calibrate.run(0));
    slow.push(await calibrate.run(LATENCY_MS, { probeOutOfProcess: i === 0 }));
  }
  const mountMs = (list, k) => round(median(list.map((x) => x[k])));
  const requestMs = (list, phase, k) => {
    const values = list.flatMap((x) => x.answers[phase]).map((a) => a.timing?.[k]).filter((v) => v != null);
    return values.length ? round(median(values)) : null;
  };
  const at = (list) => ({
    cold: mountMs(list, 'cold'),
    warm: mountMs(list, 'warm'),
    coldConnect: requestMs(list, 'cold', 'connect'),
    coldTls: requestMs(list, 'cold', 'tls'),
    coldHeaders: requestMs(list, 'cold', 'headers'),
    warmHeaders: requestMs(list, 'warm', 'headers'),
  });
  const emulation = {
    config: calibrate.config.label,
    samples: n,
    method: 'Network.emulateNetworkConditions on the host page target (CDP session), site isolation on',
    sandboxFrameOutOfProcess: slow[0].outOfProcess,
    latency0: at(zero),
    [`latency${LATENCY_MS}`]: at(slow),
  };
  const slowAt = emulation[`latency${LATENCY_MS}`];
  emulation.added = {
    cold: round(slowAt.cold - emulation.latency0.cold),
    warm: round(slowAt.warm - emulation.latency0.warm),
  };
  const fastest = Math.min(...slow.flatMap((x) => [x.cold, x.warm]));
  if (!(slowAt.warmHeaders >= 0.9 * LATENCY_MS) || fastest < 0.9 * LATENCY_MS) {
    throw new Error(`the emulated latency did not reach the sandbox frame's request: ${JSON.stringify(emulation)}`);
  }

  for (let i = 0; i < MOUNTS; i++) {
    for (const service of services) service.samples.push(await service.run(LATENCY_MS));
  }
  for (const { config, page, samples } of services) {
    results[config.key] = {
      cacheMaxAge: config.cacheMaxAge,
      page,
      cold: summary(samples.map((x) => x.cold)),
      warm: summary(samples.map((x) => x.warm)),
      warmRequests: {
        // per warm mount, as the browser saw it and as the service counted it
        browser: tally(samples.map((x) => x.warmRequests.browser)),
        answeredBy: tally(samples.flatMap((x) => x.warmRequests.answeredBy)),
        service: tally(samples.map((x) => x.warmRequests.service)),
        newConnections: tally(samples.map((x) => x.warmRequests.newConnections)),
      },
    };
  }

  const out = {
    latencyMs: LATENCY_MS, mounts: MOUNTS, chromium: browser.version(), binary: BINARY,
    emulation, configs: results,
  };
  mkdirSync(dirname(JSON_OUT), { recursive: true });
  writeFileSync(JSON_OUT, `${JSON.stringify(out, null, 2)}\n`);
  print(out, configs);
}

function print(out, configs) {
  const cell = (r, k) => (r.skipped ? 'n/a' : `${r[k].median} / ${r[k].p90} ms`);
  const cols = configs.map((c) => `${c.label} median / p90`);
  const rows = [
    [`mount (${out.latencyMs} ms RTT)`, ...cols],
    ['cold', ...configs.map((c) => cell(out.configs[c.key], 'cold'))],
    ['warm', ...configs.map((c) => cell(out.configs[c.key], 'warm'))],
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  console.log(`view mount: iframe src set → ${READY} in the host; Chromium ${out.chromium}, ${out.mounts} mounts per cell`);
  console.log(line(rows[0]));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows.slice(1)) console.log(line(r));
  const ref = out.configs.reference;
  if (ref && !ref.skipped) {
    const ratio = (key, k) => (out.configs[key]?.[k] ? (out.configs[key][k].median / ref[k].median).toFixed(2) : 'n/a');
    console.log(`against the reference page (median over median, below 1: ours mounts sooner): no-store cold ${ratio('noStore', 'cold')}, ` +
      `warm ${ratio('noStore', 'warm')}; cache 10m cold ${ratio('cache', 'cold')}, warm ${ratio('cache', 'warm')}`);
  }
  const e = out.emulation;
  if (e) {
    const slow = e[`latency${out.latencyMs}`];
    const handshakes = (slow.coldConnect ?? 0) + (slow.coldTls ?? 0);
    console.log(`emulation: Network.emulateNetworkConditions (latency ${out.latencyMs} ms) on the host page's target also ` +
      `covers the sandbox frame's request (the frame is ${e.sandboxFrameOutOfProcess ? '' : 'not '}out of process). ` +
      `It holds each request's response headers until at least ${out.latencyMs} ms after it was sent ` +
      `(send → headers: ${e.latency0.coldHeaders} → ${slow.coldHeaders} ms cold, ${e.latency0.warmHeaders} → ${slow.warmHeaders} ms warm), ` +
      (handshakes < out.latencyMs / 2
        ? `once per request: the cold TCP connect (${slow.coldConnect} ms) and TLS handshake (${slow.coldTls} ms) are not delayed, ` +
          `so a cold mount pays 1 emulated RTT where a real ${out.latencyMs} ms path would cost 3 (TCP, TLS 1.3, HTTP).`
        : `and the cold TCP connect (${slow.coldConnect} ms) and TLS handshake (${slow.coldTls} ms) are delayed too.`));
    console.log(`  ${e.config} mount medians at 0 → ${out.latencyMs} ms: cold ${e.latency0.cold} → ${slow.cold} (+${e.added.cold}), ` +
      `warm ${e.latency0.warm} → ${slow.warm} (+${e.added.warm}) ms, ${e.samples} each`);
  }
  for (const c of configs) {
    const r = out.configs[c.key];
    if (r.skipped) { console.log(`${c.label}: not measured — ${r.skipped}`); continue; }
    const w = r.warmRequests;
    // {count: mounts} → "1 in 10/10 mounts"
    const fmt = (t) => Object.entries(t).map(([k, v]) => `${k} in ${v}/${out.mounts}`).join(', ') || 'none';
    console.log(`${c.label} (cache-control: ${r.page.cacheControl}${r.page.etag ? `, etag ${r.page.etag}` : ''}): ` +
      `requests per warm mount — browser asked: ${fmt(w.browser)}; answered by: ${fmt(w.answeredBy)}; ` +
      (c.key === 'reference' ? '(the reference counts nothing of its own)' : `reached the service: ${fmt(w.service)}; new connections: ${fmt(w.newConnections)}`));
  }
  console.log(`JSON: ${JSON_OUT}`);
}

try {
  await main();
} catch (error) {
  console.error(`mount bench failed: ${error.stack ?? error}`);
  process.exitCode = 1;
} finally {
  await cleanup();
  clearTimeout(watchdog);
}
