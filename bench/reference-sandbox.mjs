// The reference sandbox page for bench/mount.mjs: the shape of the ext-apps `basic-host`
// example's sandbox, written here from the spec and that example, not copied: a small node
// server on its own origin answering
//   /sandbox.html  the proxy page, `Cache-Control: no-store`, with the view policy built from
//                  `?csp=` (the spec's template, as the example's server builds it) in its
//                  Content-Security-Policy header, and the relay as a script of its own;
//   /sandbox.js    the relay (served as static files are: ETag, revalidated each time): refuses
//                  to run unframed, makes the inner frame, tells its parent it is ready, mounts
//                  the resource it is sent and relays messages both ways.
// It does what a mount needs and no more; it is a yardstick, not a proxy to deploy.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';

const RELAY = `(() => {
  if (window.self === window.top) throw new Error('only to be used in an iframe sandbox');
  const READY = 'ui/notifications/sandbox-proxy-ready';
  const RESOURCE = 'ui/notifications/sandbox-resource-ready';
  const inner = document.createElement('iframe');
  inner.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  inner.style.cssText = 'width: 100%; height: 100%; border: 0';
  document.body.appendChild(inner);
  window.addEventListener('message', (event) => {
    if (event.source === window.parent) {
      const data = event.data;
      if (data && data.method === RESOURCE) {
        const params = data.params || {};
        if (typeof params.sandbox === 'string') inner.setAttribute('sandbox', params.sandbox);
        inner.srcdoc = params.html;
        return;
      }
      inner.contentWindow.postMessage(data, '*');
    } else if (event.source === inner.contentWindow) {
      window.parent.postMessage(event.data, '*');
    }
  });
  window.parent.postMessage({ jsonrpc: '2.0', method: READY, params: {} }, '*');
})();
`;

const PAGE = '<!doctype html><html><head><meta charset="utf-8"><title>sandbox</title>' +
  '<style>html, body { margin: 0; height: 100%; overflow: hidden; }</style></head>' +
  '<body><script src="/sandbox.js"></script></body></html>';

/** The spec's view policy for declared domains (`_meta.ui.csp`), as the example's server writes it. */
function viewPolicy(csp) {
  const list = (key) => (Array.isArray(csp?.[key]) ? csp[key].filter((s) => typeof s === 'string' && /^[\w.:/*-]+$/.test(s)) : []);
  const resources = list('resourceDomains').join(' ');
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' ${resources}`,
    `media-src 'self' data: ${resources}`,
    `connect-src 'self' ${list('connectDomains').join(' ')}`,
    `frame-src ${list('frameDomains').join(' ') || "'none'"}`,
    "object-src 'none'",
    `base-uri ${list('baseUriDomains').join(' ') || "'self'"}`,
  ].map((d) => d.trim()).join('; ');
}

/**
 * Starts the reference sandbox over TLS with `cert` (from makeCertificate). `scriptDelayMs`
 * holds each answer for the relay script that long: the sandbox document makes that request
 * itself, and an emulated latency set on the host page does not reach it.
 */
export function startReferenceSandbox(cert, { scriptDelayMs = 0 } = {}) {
  const relayTag = `"${createHash('sha256').update(RELAY).digest('hex').slice(0, 16)}"`;
  const server = createServer({ cert: readFileSync(cert.cert), key: readFileSync(cert.key) }, (req, res) => {
    const url = new URL(req.url, 'https://x');
    if (url.pathname === '/sandbox.html') {
      let csp = null;
      try {
        csp = JSON.parse(url.searchParams.get('csp') ?? 'null');
      } catch { /* the spec's default */ }
      res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        'content-security-policy': viewPolicy(csp),
      });
      res.end(PAGE);
    } else if (url.pathname === '/sandbox.js') {
      setTimeout(() => script(req, res), scriptDelayMs);
    } else {
      res.writeHead(404).end();
    }
  });
  function script(req, res) {
    if (req.headers['if-none-match'] === relayTag) {
      res.writeHead(304, { etag: relayTag, 'cache-control': 'public, max-age=0' }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', etag: relayTag, 'cache-control': 'public, max-age=0' });
    res.end(RELAY);
  }
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    port: server.address().port,
    close: () => new Promise((done) => { server.closeAllConnections(); server.close(() => done()); }),
  })));
}
