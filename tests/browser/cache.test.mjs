// The opt-in page cache (`cache_max_age`): in Chromium, a second mount of the same view makes no
// request when it is on (and does when it is off); nginx with `proxy_cache`, standing in for a
// CDN, serves hits with every security header of the service's own answer, and the framing rule
// still holds for a page it serves from its cache.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { once } from 'node:events';
import {
  startProxy, startServer, freePort, html, freshPage, tempDir, RAW_HOST,
} from './harness.mjs';
import { launch } from './engines.mjs';

const T = { timeout: 30_000 };
const QUERY = `csp=${encodeURIComponent(JSON.stringify({ connectDomains: ['https://api.example.com'] }))}`;
// What a cache must keep exactly as the service sent it.
const KEPT = ['content-type', 'content-encoding', 'vary', 'content-security-policy', 'cache-control', 'etag',
  'x-content-type-options', 'referrer-policy', 'origin-agent-cluster'];

/** GET `path` from 127.0.0.1:`port` with a `Host` header: status, headers and body bytes. */
function get(port, host, path, headers = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host, ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${host}${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** nginx in one process on 127.0.0.1:`port`, caching what 127.0.0.1:`upstream` answers. */
async function startCdn(port, upstream) {
  const dir = tempDir();
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, `daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  proxy_cache_path ${dir}/cache keys_zone=pages:1m max_size=16m inactive=10m use_temp_path=off;
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://127.0.0.1:${upstream};
      proxy_http_version 1.1;
      proxy_set_header Host $http_host;
      proxy_cache pages;
      proxy_cache_key $http_host$request_uri;
      proxy_cache_revalidate on;
      add_header X-Cache-Status $upstream_cache_status always;
    }
  }
}
`);
  const child = spawn('nginx', ['-e', join(dir, 'error.log'), '-p', dir, '-c', conf], { stdio: 'ignore' });
  // Ready once it answers; bounded.
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`);
    try { await get(port, 'probe', '/'); break; } catch { await new Promise((r) => setTimeout(r, 50)); }
  }
  return {
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

describe('cache_max_age: browsers and a CDN keep the page, with its headers', () => {
  let browser, proxy, cdn, host, adminPort, proxyPort, cdnPort, hostPort;
  const origin = (name) => `http://${name}.localhost:${hostPort}`;

  before(async () => {
    [hostPort, proxyPort, cdnPort, adminPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    host = await startServer({ '/raw': html(RAW_HOST) }, hostPort);
    // Each sandbox has a host origin of its own, so the metrics count its requests apart.
    proxy = await startProxy(`listen = "127.0.0.1:${proxyPort}"
admin_listen = "127.0.0.1:${adminPort}"
cache_max_age = "10m"
[[hosts]]
origin = "${origin('cached')}"
sandbox = "cached.localhost:${proxyPort}"
[[hosts]]
origin = "${origin('nostore')}"
sandbox = "nostore.localhost:${proxyPort}"
cache_max_age = "0s"
[[hosts]]
origin = "${origin('cdn')}"
sandbox = "cdn.localhost:${cdnPort}"
`);
    cdn = await startCdn(cdnPort, proxyPort);
    browser = await launch('chromium');
  });

  after(async () => {
    await browser?.close();
    await cdn?.stop();
    await proxy?.stop();
    await host?.close();
  });

  /** Page answers the service counted for a host origin. */
  async function served(name) {
    const metrics = (await get(adminPort, '127.0.0.1', '/metrics')).body.toString();
    const line = `mcp_sandbox_proxy_requests_total{host="${origin(name)}",status="200"} `;
    const found = metrics.split('\n').find((l) => l.startsWith(line));
    return Number(found?.slice(line.length) ?? 0);
  }

  /** Mounts the proxy page twice in one host page, the second after removing the first. */
  async function mountTwice(t, name, sandbox) {
    const page = await freshPage(browser, t);
    await page.goto(`${origin(name)}/raw`);
    const proxyUrl = `http://${sandbox}/?${QUERY}`;
    await page.evaluate((url) => window.mountProxy({ proxyUrl: url }), proxyUrl);
    const first = await served(name);
    await page.evaluate(() => document.getElementById('proxy').remove());
    await page.evaluate((url) => window.mountProxy({ proxyUrl: url }), proxyUrl);
    const readies = await page.evaluate(() => window.received.filter(
      (m) => m.data && m.data.method === 'ui/notifications/sandbox-proxy-ready').length);
    assert.equal(readies, 2, 'both mounts ran the relay');
    return { first, second: await served(name) };
  }

  it('a second mount of the same view makes no request when caching is on', T, async (t) => {
    const cached = await mountTwice(t, 'cached', `cached.localhost:${proxyPort}`);
    assert.deepEqual(cached, { first: 1, second: 1 }, 'the second mount came from the browser cache');
    // The control: the same steps with caching off reach the service twice.
    const uncached = await mountTwice(t, 'nostore', `nostore.localhost:${proxyPort}`);
    assert.deepEqual(uncached, { first: 1, second: 2 }, 'no-store pages are fetched on every mount');
  });

  it('nginx proxy_cache in front serves hits with every header the service sent', T, async () => {
    const sandbox = `cdn.localhost:${cdnPort}`;
    for (const encoding of ['br', 'gzip', undefined]) {
      const headers = encoding ? { 'accept-encoding': encoding } : {};
      const direct = await get(proxyPort, sandbox, `/?${QUERY}`, headers);
      assert.equal(direct.status, 200);
      assert.equal(direct.headers['cache-control'], 'public, max-age=600');
      assert.equal(direct.headers['content-encoding'], encoding, 'the coding asked for');
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(await get(cdnPort, sandbox, `/?${QUERY}`, headers));
      assert.deepEqual(answers.map((a) => a.headers['x-cache-status']), ['MISS', 'HIT', 'HIT'], `${encoding}`);
      for (const answer of answers) {
        assert.equal(answer.status, 200);
        for (const name of KEPT) assert.equal(answer.headers[name], direct.headers[name], `${name} (${encoding})`);
        assert.ok(answer.body.equals(direct.body), `same bytes (${encoding})`);
      }
      const revalidated = await get(cdnPort, sandbox, `/?${QUERY}`, { ...headers, 'if-none-match': direct.headers.etag });
      assert.equal(revalidated.status, 304, `a client's revalidation is answered from the cache (${encoding})`);
    }
  });

  it('a page served from the CDN cache still refuses an unlisted framer', T, async (t) => {
    const proxyUrl = `http://cdn.localhost:${cdnPort}/?${QUERY}`;
    const page = await freshPage(browser, t);
    await page.goto(`${origin('cdn')}/raw`);
    await page.evaluate((url) => window.mountProxy({ proxyUrl: url }), proxyUrl);
    const before = await served('cdn');
    // Another origin on the same host server: not the one this sandbox serves.
    const evil = await freshPage(browser, t);
    const { console } = evil;
    await evil.goto(`${origin('evil')}/raw`);
    await evil.evaluate((url) => { window.mountProxy({ proxyUrl: url }); }, proxyUrl);
    // Bounded by the test's timeout: a page that framing did not stop never logs the refusal.
    while (!console.some((m) => m.includes('frame-ancestors'))) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(await evil.evaluate(() => window.received), [], 'no sandbox-proxy-ready reaches the framer');
    assert.equal(await served('cdn'), before, 'the refused page came from the CDN, not the service');
  });
});
