// Views that stay alive and update: one view holds a server-sent-events stream and a WebSocket
// to its declared connectDomains (https: and wss:, over loopback TLS) and keeps receiving while
// other views mount and unmount beside it, each in its own proxy frame, as several canvases in
// one chat do. The streams must neither stop nor reconnect. Each browser engine.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { once } from 'node:events';
import { serviceFixture, startServer, makeCertificate, tempDir, html, view } from './harness.mjs';
import { selectedEngines, until } from './engines.mjs';

const TICK_MS = 100;
const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/**
 * An https server on loopback that streams to every client, `TICK_MS` apart, `<stream>:<n>`:
 * over server-sent events at /events and over a WebSocket at /ws (text frames). `stream`
 * numbers the connections, so a client can tell a reconnection from a stream that went on.
 */
async function startLiveServer(cert) {
  const timers = new Set();
  const sockets = new Set();
  let streams = 0;
  const every = (send) => {
    const stream = ++streams;
    let n = 0;
    const timer = setInterval(() => send(`${stream}:${++n}`), TICK_MS);
    timers.add(timer);
    return () => { clearInterval(timer); timers.delete(timer); };
  };
  const server = createHttpsServer({ cert: readFileSync(cert.cert), key: readFileSync(cert.key) }, (req, res) => {
    if (new URL(req.url, 'https://x').pathname !== '/events') { res.writeHead(404).end(); return; }
    res.writeHead(200, {
      'content-type': 'text/event-stream', 'cache-control': 'no-store', 'access-control-allow-origin': '*',
    });
    const stop = every((data) => res.write(`data: ${data}\n\n`));
    res.on('close', stop);
  });
  server.on('upgrade', (req, socket) => {
    const key = req.headers['sec-websocket-key'];
    if (new URL(req.url, 'https://x').pathname !== '/ws' || !key) { socket.destroy(); return; }
    const accept = createHash('sha1').update(key + WEBSOCKET_GUID).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    // Unmasked text frames shorter than 126 bytes: all this server sends.
    const stop = every((data) => socket.write(Buffer.concat([Buffer.from([0x81, data.length]), Buffer.from(data)])));
    sockets.add(socket);
    socket.on('close', () => { stop(); sockets.delete(socket); });
    socket.on('error', () => socket.destroy());
  });
  server.on('connection', (socket) => { sockets.add(socket); socket.on('close', () => sockets.delete(socket)); });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: server.address().port,
    async close() {
      for (const timer of timers) clearInterval(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

// A host page that shows several views at once, each in its own proxy frame.
const CHAT_HOST = `<!doctype html><title>chat</title><body><script>
window.received = {};
window.mountView = (id, proxyUrl, resource) => new Promise((resolve) => {
  const frame = document.createElement('iframe');
  frame.id = id;
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  const url = new URL(proxyUrl);
  if (resource.csp) url.searchParams.set('csp', JSON.stringify(resource.csp));
  window.received[id] = [];
  window.addEventListener('message', (event) => {
    if (event.source !== frame.contentWindow || event.origin !== url.origin) return;
    window.received[id].push(event.data);
    if (event.data?.method === 'ui/notifications/sandbox-proxy-ready') {
      frame.contentWindow.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/sandbox-resource-ready', params: resource }, url.origin);
      resolve();
    }
  });
  frame.src = url.href;
  document.body.appendChild(frame);
});
window.unmountView = (id) => document.getElementById(id).remove();
window.latest = (id, method) => window.received[id].filter((m) => m?.method === method).pop()?.params ?? null;
</script></body>`;

for (const engine of selectedEngines()) {
  describe(`live views keep updating beside others (${engine})`, () => {
    const liveCert = makeCertificate(tempDir(), ['live.outside.test']);
    const fx = serviceFixture(engine, {
      tls: ['chat.sandbox.test', '*.chat.sandbox.test'],
      hosts: ({ hostOrigin, port }) => `[[hosts]]
origin = "${hostOrigin}"
sandbox = "chat.sandbox.test:${port}"
per_server_subdomains = true
`,
      host: ({ hostPort }) => startServer({ '/chat': html(CHAT_HOST) }, hostPort),
      trust: [liveCert],
    });
    let live, liveOrigin;

    before(async () => {
      live = await startLiveServer(liveCert);
      liveOrigin = `live.outside.test:${live.port}`;
    });

    after(async () => live?.close());

    it('a view with an SSE stream and a WebSocket keeps receiving while three others come and go', { timeout: 90_000 }, async (t) => {
      const page = await fx.browser.newPage();
      t.after(async () => {
        if (t.passed === false) t.diagnostic(page.console.join('\n'));
        await page.close();
      });
      await page.goto(`${fx.hostOrigin}/chat`);
      // The live view counts what each stream delivers and tells the host every 200 ms.
      const liveView = view(`
        const seen = { sse: 0, ws: 0, sseStreams: new Set(), wsStreams: new Set(), errors: [] };
        const take = (kind, data) => { seen[kind] += 1; seen[kind + 'Streams'].add(String(data).split(':')[0]); };
        const events = new EventSource('https://${liveOrigin}/events');
        events.onmessage = (e) => take('sse', e.data);
        events.onerror = () => seen.errors.push('sse');
        const socket = new WebSocket('wss://${liveOrigin}/ws');
        socket.onmessage = (e) => take('ws', e.data);
        socket.onerror = () => seen.errors.push('ws');
        socket.onclose = () => seen.errors.push('ws closed');
        setInterval(() => parent.postMessage({ jsonrpc: '2.0', method: 'test/live', params: {
          sse: seen.sse, ws: seen.ws, sseStreams: seen.sseStreams.size, wsStreams: seen.wsStreams.size, errors: seen.errors,
        } }, '*'), 200);`);
      const csp = { connectDomains: [`https://${liveOrigin}`, `wss://${liveOrigin}`] };
      await page.evaluate(([url, resource]) => window.mountView('live', url, resource),
        [`https://live.chat.sandbox.test:${fx.port}/sandbox.html`, { html: liveView, csp }]);
      const latest = () => page.evaluate(() => window.latest('live', 'test/live'));
      const started = await until(async () => {
        const now = await latest();
        return now && now.sse >= 3 && now.ws >= 3 && now;
      }, 'the live view receiving over both streams', 30_000);

      // Beside it, other views mount and unmount: on other servers' labels, and one on the live
      // view's own sandbox name.
      const others = ['alpha', 'beta', 'live'];
      for (const [i, label] of others.entries()) {
        const id = `other-${i}`;
        await page.evaluate(([frame, url, resource]) => window.mountView(frame, url, resource),
          [id, `https://${label}.chat.sandbox.test:${fx.port}/sandbox.html`, { html: view(`report('mounted', ${i})`) }]);
        await until(() => page.evaluate((frame) => window.received[frame].some((m) => m?.method === 'test/report'), id),
          `view ${id} mounted`);
        await page.evaluate((frame) => window.unmountView(frame), id);
      }

      // The streams went on through all of it: more of both, from the first connection of each.
      const before = started;
      const after = await until(async () => {
        const now = await latest();
        return now && now.sse >= before.sse + 5 && now.ws >= before.ws + 5 && now;
      }, 'the live view still receiving after the others came and went', 30_000);
      assert.deepEqual({ sseStreams: after.sseStreams, wsStreams: after.wsStreams, errors: after.errors },
        { sseStreams: 1, wsStreams: 1, errors: [] }, 'no stream dropped or reconnected');
    });
  });
}
