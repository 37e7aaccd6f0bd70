// Signs a proxy page URL for one view's policy, for a sandbox whose operator set `policy_keys`
// for the host. Run it where the host reads the resource (its backend): the key must never
// reach a browser. No dependencies: WebCrypto, in Node 18+, Deno, Bun and edge runtimes.
//
// The scheme (v1) and the rules for what is signed are written down once, in signer/README.md;
// this module and policy_url.py follow them and give the same URL, byte for byte, or refuse
// with the same reason, for the same input (signer/vectors.json holds both to it).
//
//   import { signPolicyUrl } from './policy-url.mjs';
//   const url = await signPolicyUrl('https://chat.sandbox.example.net/sandbox.html',
//     resource._meta.ui.csp, { key: process.env.CHAT_POLICY_KEY });

const SCHEME = 'mcp-sandbox-proxy policy v1';
// The spec's csp lists, in the order the parameter writes them.
const DOMAIN_LISTS = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'];
// Replaced in the URL by the signed values (`widget_csp` is `csp` as mcp-use writes it).
const SIGNED = ['csp', 'widget_csp', 'expires', 'signature'];
// The other parameters the service reads: one given twice is a `400`.
const READ_ONCE = ['embedder', 'upgrade'];
const DEFAULT_PORTS = { http: '80', https: '443' };
// The service's defaults: `policy_max_lifetime` (an hour) and `limits.max_query_bytes`.
const DEFAULT_MAX_LIFETIME = 3600;
const DEFAULT_MAX_QUERY_BYTES = 16384;
// `expires` is at most 10 digits: the last second a signed URL can name, in 2286.
const LAST_EXPIRES = 9_999_999_999;
// The service's rule for page paths (`page_paths`): no longer, and not the report endpoint.
const MAX_PATH_BYTES = 200;
const REPORT_PATH = '/csp-report';
// One DNS label, as the service takes it: a-z, 0-9 and `-`, not first or last, 1 to 63 long.
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The proxy page URL with `csp` and its signature, valid for `expiresIn` seconds; without any
 * declared domain, the URL with no signed parameters (the spec's default policy needs none).
 * Throws a TypeError, `signPolicyUrl: <reason>`, for any input the service would not honour:
 * a URL a browser would write otherwise, a lifetime out of range, a query over the limit.
 *
 * @param {string | URL} proxyUrl the sandbox's page, e.g. https://chat.sandbox.example.net/sandbox.html,
 *   or https://<label>.chat.sandbox.example.net/sandbox.html for a server's own origin: the URL's
 *   host is signed (with ?embedder= for a host entry whose origin is a pattern)
 * @param {object | null | undefined} csp the resource's `_meta.ui.csp`
 * @param {object} options
 * @param {string} options.key the host's key, as hex (openssl rand -hex 32)
 * @param {number} [options.expiresIn] seconds the URL stays valid, a whole number; 600 unless given
 * @param {number} [options.maxLifetime] the entry's `policy_max_lifetime` in seconds; 3600 unless given
 * @param {number} [options.maxQueryBytes] the service's `limits.max_query_bytes`; 16384 unless given
 * @param {number} [options.now] the time, in ms since 1970; Date.now() unless given
 * @returns {Promise<string>}
 */
export async function signPolicyUrl(proxyUrl, csp, {
  key,
  expiresIn = 600,
  maxLifetime = DEFAULT_MAX_LIFETIME,
  maxQueryBytes = DEFAULT_MAX_QUERY_BYTES,
  now = Date.now(),
} = {}) {
  // A bad argument fails every call, not only those with domains to sign.
  const raw = keyBytes(key);
  const lifetime = lifetimeSeconds(expiresIn, maxLifetime);
  if (wholeNumber(maxQueryBytes) === null || maxQueryBytes < 1) {
    refuse('the query limit is not a whole number of bytes above 0');
  }
  if (typeof now !== 'number' || !Number.isFinite(now) || now < 0) {
    refuse('now is not a time since 1970');
  }
  const expires = Math.floor(now / 1000) + lifetime;
  if (expires > LAST_EXPIRES) {
    refuse(`now is past the last expiry a signed URL can name (${LAST_EXPIRES}, in 2286)`);
  }
  const url = proxyParts(proxyUrl);
  const pairs = url.pairs.filter(([name]) => !SIGNED.includes(name));
  const value = cspParameter(csp);
  if (value !== null) {
    const message = [SCHEME, url.sandbox, String(expires), value].join('\n');
    const signature = await hmacSha256Hex(raw, message);
    pairs.push(['csp', value], ['expires', String(expires)], ['signature', signature]);
  }
  const query = pairs.map(([name, v]) => `${formEncode(name)}=${formEncode(v)}`).join('&');
  // The query is ASCII, so its length is its bytes.
  if (query.length > maxQueryBytes) {
    refuse(`the query is ${query.length} bytes; the limit is ${maxQueryBytes} (limits.max_query_bytes): `
      + 'declare fewer domains, or state the operator\'s limit');
  }
  return `${url.scheme}://${url.sandbox}${url.path}${query ? `?${query}` : ''}${url.fragment}`;
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

function refuse(reason) {
  throw new TypeError(`signPolicyUrl: ${reason}`);
}

/**
 * `value` when it is a whole number JavaScript holds exactly, else null. The Python signer
 * takes the same range, so both give the same answer for any number.
 */
function wholeNumber(value) {
  return typeof value === 'number' && Number.isSafeInteger(value) ? value : null;
}

/** The lifetime in seconds: a whole number from 1 to the entry's maximum. */
function lifetimeSeconds(expiresIn, maxLifetime) {
  if (wholeNumber(maxLifetime) === null || maxLifetime < 1) {
    refuse('the maximum lifetime is not a whole number of seconds above 0');
  }
  // SECURITY: NaN, Infinity or a fraction would be signed as an expiry the service cannot read
  // or one already past, and a lifetime over the entry's maximum is refused by the service.
  const range = `it must be 1 to ${maxLifetime} s (policy_max_lifetime)`;
  const seconds = wholeNumber(expiresIn);
  if (seconds === null) refuse(`the lifetime is not a whole number of seconds; ${range}`);
  if (seconds < 1 || seconds > maxLifetime) refuse(`the lifetime is ${seconds} s; ${range}`);
  return seconds;
}

/**
 * The parts of a proxy URL, as a browser writes them: the scheme and host in lower case, the
 * default port left out, an empty path as `/`. Anything else a browser would write otherwise
 * (percent-encoding, IPv4 shorthands, dot segments, `\`, a trailing dot) is refused, as is a
 * host or path the service serves no page on: the signature covers the host, and a signer
 * that guessed at a browser's rewriting would sign a name the page is not served on.
 */
function proxyParts(proxyUrl) {
  const text = proxyUrl instanceof URL ? proxyUrl.href : proxyUrl;
  if (typeof text !== 'string') refuse('the proxy URL is not a string');
  for (const char of text) {
    const code = char.codePointAt(0);
    if (code < 0x21 || code > 0x7e) {
      refuse(`the proxy URL holds ${codePoint(char)}: a proxy URL is printable ASCII `
        + '(a name in punycode, xn--…; anything else percent-encoded)');
    }
  }
  if (text.includes('\\')) refuse('the proxy URL holds "\\", which a browser reads as "/": write "/"');
  const start = /^(https?):\/\//i.exec(text);
  if (!start) refuse('the proxy URL does not start with https:// or http://');
  const scheme = start[1].toLowerCase();
  const parts = /^([^/?#]*)([^?#]*)(?:\?([^#]*))?(#.*)?$/.exec(text.slice(start[0].length));
  const [, authority, path, query = '', fragment = ''] = parts;
  const sandbox = sandboxName(scheme, authority);
  const pagePath = path === '' ? '/' : path;
  checkPath(pagePath);
  const encoded = /["<>`]/.exec(fragment);
  if (encoded) refuse(`the fragment holds ${codePoint(encoded[0])}, which a browser would percent-encode`);
  const pairs = formPairs(query);
  for (const name of READ_ONCE) {
    if (pairs.filter(([n]) => n === name).length > 1) {
      refuse(`the query has more than one ${name} parameter`);
    }
  }
  return { scheme, sandbox, path: pagePath, pairs, fragment };
}

/** `U+00E4` for `ä`: how a reason names a character, the same in both signers. */
function codePoint(char) {
  return `U+${char.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The name the page is served on, as a browser sends it: `host[:port]`, the port not the default. */
function sandboxName(scheme, authority) {
  if (authority.includes('@')) refuse('the proxy URL names a user or password: a sandbox URL has none');
  if (authority.startsWith('[')) {
    refuse('the host is an IPv6 address: a sandbox is named by a DNS name or an IPv4 address');
  }
  let hostname = authority;
  let port = '';
  const colon = authority.lastIndexOf(':');
  if (colon >= 0) {
    hostname = authority.slice(0, colon);
    port = authority.slice(colon + 1);
    if (!/^[1-9][0-9]{0,4}$/.test(port) || Number(port) > 65535) {
      refuse(`the port "${port}" is not a number from 1 to 65535 without leading zeros`);
    }
  }
  // ASCII only (checked above), so this is the URL standard's lower-casing.
  const host = hostname.toLowerCase();
  if (host === '') refuse('the proxy URL has no host');
  if (host.endsWith('.')) {
    refuse(`the host "${host}" ends in a dot, and the service answers 421 for it: `
      + `write "${host.replace(/\.+$/, '')}"`);
  }
  const labels = host.split('.');
  if (host.length > 253 || !labels.every((label) => DNS_LABEL.test(label))) {
    refuse(`the host "${host}" is not a DNS name as a browser sends it: labels of a-z, 0-9 and "-" `
      + '(not first or last), 1 to 63 characters, 253 in all');
  }
  // The URL standard reads a name whose last label is a number as an IPv4 address, and
  // rewrites any shorthand (127.1, 0x7f.0.0.1, 127.000.000.001) as four decimal numbers.
  if (/^(?:[0-9]+|0x[0-9a-f]*)$/.test(labels[labels.length - 1]) && !isDottedQuad(labels)) {
    refuse(`the host "${host}" ends in a number, so a browser reads it as an IPv4 address: `
      + 'write four numbers from 0 to 255 without leading zeros (127.0.0.1)');
  }
  return port === '' || port === DEFAULT_PORTS[scheme] ? host : `${host}:${port}`;
}

function isDottedQuad(labels) {
  return labels.length === 4
    && labels.every((label) => /^(?:0|[1-9][0-9]{0,2})$/.test(label) && Number(label) <= 255);
}

/** The service's rule for a page path: `/`, then plain segments; anything else is a `404`. */
function checkPath(path) {
  if (path.length > MAX_PATH_BYTES) {
    refuse(`the path is over ${MAX_PATH_BYTES} bytes: no page path is that long`);
  }
  const odd = /[^A-Za-z0-9\-._~/]/.exec(path);
  if (odd) {
    refuse(`the path "${path}" holds "${odd[0]}": a page path is letters, digits, -, ., _, ~ and / only`);
  }
  const segments = path.slice(1).split('/');
  if (segments.some((segment) => segment === '.' || segment === '..')) {
    refuse(`the path "${path}" has a "." or ".." segment: a browser would load another path`);
  }
  // An empty segment only at the end: `/sandbox/` is a path of its own, `/a//b` is no page's.
  if (segments.slice(0, -1).some((segment) => segment === '')) {
    refuse(`the path "${path}" has an empty segment: no page path has one`);
  }
  if (path === REPORT_PATH) refuse(`the path "${path}" is where browsers send CSP reports, not a page`);
}

/** A query's pairs, read as the URL standard's application/x-www-form-urlencoded parser reads them. */
function formPairs(query) {
  const pairs = [];
  for (const piece of query.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const [name, value] = eq < 0 ? [piece, ''] : [piece.slice(0, eq), piece.slice(eq + 1)];
    pairs.push([formDecode(name), formDecode(value)]);
  }
  return pairs;
}

function formDecode(text) {
  const source = text.replaceAll('+', ' ');
  const bytes = [];
  for (let i = 0; i < source.length; i++) {
    if (source[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(source.slice(i + 1, i + 3))) {
      bytes.push(parseInt(source.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(source.charCodeAt(i));
    }
  }
  // UTF-8 without BOM: a leading U+FEFF is kept, a bad byte becomes U+FFFD.
  return new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array(bytes));
}

/** `text` in the URL standard's form encoding: `*-._`, letters and digits kept, a space as `+`. */
function formEncode(text) {
  let out = '';
  for (const byte of new TextEncoder().encode(text)) {
    const char = String.fromCharCode(byte);
    if (byte < 0x80 && /[A-Za-z0-9*\-._]/.test(char)) out += char;
    else if (byte === 0x20) out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

async function hmacSha256Hex(raw, message) {
  const subtle = globalThis.crypto?.subtle ?? (await import('node:crypto')).webcrypto.subtle;
  const key = await subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const tag = new Uint8Array(await subtle.sign('HMAC', key, new TextEncoder().encode(message)));
  return Array.from(tag, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function keyBytes(hex) {
  // ASCII white space only, as the Python signer strips it: a key read from a file keeps no newline.
  const text = typeof hex === 'string' ? hex.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, '') : '';
  if (!/^(?:[0-9a-fA-F]{2}){32,128}$/.test(text)) {
    refuse('the key must be 32 to 128 bytes as hex (openssl rand -hex 32)');
  }
  return Uint8Array.from(text.match(/../g), (pair) => parseInt(pair, 16));
}
