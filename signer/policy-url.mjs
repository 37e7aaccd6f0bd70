// Signs a proxy page URL for one view's policy, for a sandbox whose operator set `policy_keys`
// for the host. Run it where the host reads the resource (its backend): the key must never
// reach a browser. No dependencies: WebCrypto, in Node 18+, Deno, Bun and edge runtimes.
//
// The scheme (v1) is written down once, in signer/README.md; this module and policy_url.py
// follow it and give the same URL, byte for byte, for the same input.
//
//   import { signPolicyUrl } from './policy-url.mjs';
//   const url = await signPolicyUrl('https://chat.sandbox.example.net/sandbox.html',
//     resource._meta.ui.csp, { key: process.env.CHAT_POLICY_KEY });

const SCHEME = 'mcp-sandbox-proxy policy v1';
// The spec's csp lists, in the order the parameter writes them.
const DOMAIN_LISTS = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'];

/**
 * The proxy page URL with `csp` and its signature, valid for `expiresIn` seconds; without any
 * declared domain, the URL as given (the spec's default policy needs no signature).
 *
 * @param {string | URL} proxyUrl the sandbox's page, e.g. https://chat.sandbox.example.net/sandbox.html,
 *   or https://<label>.chat.sandbox.example.net/sandbox.html for a server's own origin: the URL's
 *   host is signed
 *   (with ?embedder= for a host entry whose origin is a pattern)
 * @param {object | null | undefined} csp the resource's `_meta.ui.csp`
 * @param {object} options
 * @param {string} options.key the host's key, as hex (openssl rand -hex 32)
 * @param {number} [options.expiresIn] seconds the URL stays valid; 600 unless given
 * @param {number} [options.now] the time, in ms since 1970; Date.now() unless given
 * @returns {Promise<string>}
 */
export async function signPolicyUrl(proxyUrl, csp, { key, expiresIn = 600, now = Date.now() } = {}) {
  // A bad key fails every call, not only those with domains to sign.
  const raw = keyBytes(key);
  const url = new URL(proxyUrl);
  for (const name of ['csp', 'expires', 'signature']) url.searchParams.delete(name);
  const value = cspParameter(csp);
  if (value === null) return url.href;
  const expires = String(Math.floor(now / 1000) + Math.floor(expiresIn));
  const message = [SCHEME, url.host, expires, value].join('\n');
  url.searchParams.set('csp', value);
  url.searchParams.set('expires', expires);
  url.searchParams.set('signature', await hmacSha256Hex(raw, message));
  return url.href;
}

/**
 * The `csp` parameter for a resource's csp object: its four lists in the spec's order, strings
 * only; null when it declares no domain.
 */
export function cspParameter(csp) {
  if (csp === null || typeof csp !== 'object') return null;
  const lists = {};
  for (const list of DOMAIN_LISTS) {
    if (!Array.isArray(csp[list])) continue;
    const entries = csp[list].filter((entry) => typeof entry === 'string');
    if (entries.length) lists[list] = entries;
  }
  return Object.keys(lists).length ? JSON.stringify(lists) : null;
}

async function hmacSha256Hex(raw, message) {
  const subtle = globalThis.crypto?.subtle ?? (await import('node:crypto')).webcrypto.subtle;
  const key = await subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const tag = new Uint8Array(await subtle.sign('HMAC', key, new TextEncoder().encode(message)));
  return Array.from(tag, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function keyBytes(hex) {
  const text = typeof hex === 'string' ? hex.trim() : '';
  if (!/^(?:[0-9a-fA-F]{2}){32,128}$/.test(text)) {
    throw new TypeError('signPolicyUrl: the key must be 32 to 128 bytes as hex (openssl rand -hex 32)');
  }
  return Uint8Array.from(text.match(/../g), (pair) => parseInt(pair, 16));
}
