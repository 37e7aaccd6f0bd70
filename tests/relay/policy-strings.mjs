// Policy strings as hosts might write them (the AI SDK's csp and allow strings), generated, and
// the browsers' readings of them written from the specs (CSP 3, Permissions Policy): the
// reference the relay's readers are held to, in node (policy-strings.test.mjs) and, where the
// engine itself decides, in the browsers (tests/browser/policy-strings.test.mjs).

/** A small deterministic generator, so that a failure names a string that can be rerun. */
export function generator(seed) {
  let state = seed >>> 0 || 1;
  return (n) => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state % n;
  };
}

const pick = (next, list) => list[next(list.length)];

/** The hosts a generated policy may name; every one is a URL a browser test can ask for. */
export const HOSTS = ['https://evil.test:1', 'https://other.test:1'];

// ASCII whitespace, all CSP and Permissions Policy split on, and (one time in eight) space
// that is not.
const ASCII_SPACES = [' ', ' ', ' ', '\t', '\n', '\f', '\r'];
const ODD_SPACES = ['\u00a0', '\u000b', '\u3000', '\ufeff', '\u2028', '\u0085', '\u00a0 '];
const space = (next) => pick(next, next(8) === 0 ? ODD_SPACES : ASCII_SPACES);
const DIRECTIVES = [
  'default-src', 'script-src', 'script-src-elem', 'script-src-attr', 'style-src', 'style-src-elem',
  'img-src', 'font-src', 'media-src', 'worker-src', 'child-src', 'connect-src', 'frame-src', 'base-uri',
  'SCRIPT-SRC', 'Connect-Src', 'img_src', 'connect-src\u00a0https://evil.test:1',
];
const SOURCES = [
  'https://evil.test:1', 'https://evil.test:1', 'https://other.test:1', 'https://EVIL.test:1', 'evil.test:1',
  'https://evil.test:*', 'https://*.test:1', 'https://evil.test', '*', 'https:', "'self'", "'none'",
  "'unsafe-inline'", "'nonce-x'", 'https://evil.test:1/x', 'https://evil.test:1\u00a0https://other.test:1',
];

/** A CSP string: directives of sources, split by the spaces above, policies by commas. */
export function cspString(next) {
  const directives = [];
  for (let d = 1 + next(5); d > 0; d -= 1) {
    let directive = pick(next, DIRECTIVES);
    for (let s = next(4); s > 0; s -= 1) directive += space(next) + pick(next, SOURCES);
    directives.push((next(4) === 0 ? space(next) : '') + directive);
  }
  return directives.reduce((text, directive) => text + pick(next, [';', '; ', ';\u00a0', ',', ' ;']) + directive);
}

/** [string, list]: each blocks https://evil.test:1 for the list's loads where the browser
 * reads it, and was once read to put it in the list. */
export const REVIEWED_CSP = [
  ["default-src 'none'; script-src\u00a0https://evil.test:1", 'resourceDomains'],
  ["default-src 'none';\u00a0connect-src https://evil.test:1", 'connectDomains'],
  ["connect-src 'none'\u000bhttps://evil.test:1", 'connectDomains'],
  ["default-src 'none'; \u3000frame-src https://evil.test:1", 'frameDomains'],
  ["default-src 'none'; \ufeffbase-uri https://evil.test:1", 'baseUriDomains'],
  ['connect-src https://ok.test:1\u2028https://evil.test:1', 'connectDomains'],
  ["script-src https://evil.test:1; script-src-elem 'self'; style-src https://evil.test:1; img-src https://evil.test:1; font-src https://evil.test:1; media-src https://evil.test:1", 'resourceDomains'],
  ["default-src https://evil.test:1; style-src-elem 'self'", 'resourceDomains'],
  ["default-src https://evil.test:1; worker-src 'none'", 'resourceDomains'],
];

const FEATURES = ['camera', 'microphone', 'geolocation', 'clipboard-write', 'CAMERA', 'usb', 'camera\u00a0*'];
const ALLOWLIST = ['*', "'self'", "'src'", "'none'", 'https://other.test', 'https://view.test'];

/** An allow string: declarations of features and allowlists, split as above. */
export function allowString(next) {
  const declarations = [];
  for (let d = 1 + next(4); d > 0; d -= 1) {
    let declaration = pick(next, FEATURES);
    for (let s = next(3); s > 0; s -= 1) declaration += space(next) + pick(next, ALLOWLIST);
    declarations.push(declaration);
  }
  return declarations.join(pick(next, [';', '; ', ';\u00a0']));
}

const ASCII_WHITESPACE = /[\t\n\f\r ]+/;
const tokens = (text) => text.split(ASCII_WHITESPACE).filter(Boolean);

/**
 * CSP 3's reading of `text` ("parse a serialized CSP list"): for each comma-separated policy,
 * its directives by name, the first of a name kept, a name outside the grammar skipped. Where
 * engines read it otherwise: `strictValues`, a directive whose value is not printable ASCII is
 * dropped (Chromium; Firefox keeps it); `verticalTab`, U+000B is whitespace (Chromium, WebKit).
 */
export function parseCsp(text, { strictValues = false, verticalTab = false } = {}) {
  const split = (part) => (verticalTab ? part.split(/[\t\n\v\f\r ]+/).filter(Boolean) : tokens(part));
  return text.split(',').map((serialized) => {
    const directives = new Map();
    for (const token of serialized.split(';')) {
      const [name, ...value] = split(token);
      if (name === undefined || !/^[a-zA-Z0-9-]+$/.test(name)) continue;
      if (strictValues && !value.every((source) => /^[\x21-\x7e]+$/.test(source))) continue;
      if (!directives.has(name.toLowerCase())) directives.set(name.toLowerCase(), value);
    }
    return directives;
  });
}

/** spec (CSP 3, "effective directive" and its fallback lists): what governs each load. */
export const LOADS = {
  script: ['script-src-elem', 'script-src', 'default-src'],
  style: ['style-src-elem', 'style-src', 'default-src'],
  img: ['img-src', 'default-src'],
  font: ['font-src', 'default-src'],
  media: ['media-src', 'default-src'],
  worker: ['worker-src', 'child-src', 'script-src', 'default-src'],
  connect: ['connect-src', 'default-src'],
  frame: ['frame-src', 'child-src', 'default-src'],
  base: ['base-uri'],
};

/** The loads a list's sources reach in the service's policy (docs/http.md "The view policy"). */
export const LIST_LOADS = {
  resourceDomains: ['script', 'style', 'img', 'font', 'media', 'worker'],
  connectDomains: ['connect'],
  frameDomains: ['frame'],
  baseUriDomains: ['base'],
};

const READINGS = [{}, { strictValues: true }, { verticalTab: true }, { strictValues: true, verticalTab: true }];

/** Whether the policies of `text` let a page at `pageOrigin` make the `load` of `url`, in
 * every engine's reading. */
export function cspAllows(text, load, url, pageOrigin) {
  return READINGS.every((reading) => parseCsp(text, reading).every((directives) => {
    const governing = LOADS[load].find((name) => directives.has(name));
    return governing === undefined || directives.get(governing).some((source) => sourceMatches(source, url, pageOrigin));
  }));
}

/** spec (CSP 3, "does url match expression"), for the source forms generated here. */
export function sourceMatches(source, url, pageOrigin) {
  const target = new URL(url);
  const page = new URL(pageOrigin);
  if (source === '*') return ['http:', 'https:', 'ws:', 'wss:'].includes(target.protocol);
  if (source.startsWith("'")) return source === "'self'" && target.origin === page.origin;
  if (/^[a-z][a-z0-9+.-]*:$/i.test(source)) {
    const scheme = source.toLowerCase();
    return scheme === target.protocol || (scheme === 'http:' && target.protocol === 'https:');
  }
  const parts = /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*\.)?([a-z0-9.-]+)(?::(\d+|\*))?(\/.*)?$/i.exec(source);
  if (parts === null) return false;
  const [, scheme, wildcard, host, port, path] = parts;
  const schemeOk = scheme === undefined
    ? target.protocol === page.protocol || (page.protocol === 'http:' && target.protocol === 'https:')
    : `${scheme.toLowerCase()}:` === target.protocol || (scheme.toLowerCase() === 'http' && target.protocol === 'https:');
  const hostname = target.hostname.toLowerCase();
  const hostOk = wildcard ? hostname.endsWith(`.${host.toLowerCase()}`) : hostname === host.toLowerCase();
  const defaultPort = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443' }[target.protocol];
  const targetPort = target.port || defaultPort;
  const portOk = port === '*' || (port ?? defaultPort) === targetPort;
  const pathOk = path === undefined || path === '/' ||
    (path.endsWith('/') ? target.pathname.startsWith(path) : target.pathname === path);
  return schemeOk && hostOk && portOk && pathOk;
}

/**
 * Permissions Policy's reading of an iframe's `allow` (the frame's document on `frameOrigin`,
 * a container on another origin): the spec's features the first declaration of each grants
 * that frame. An empty allowlist is 'src'; 'self' is the container's origin.
 */
export function allowGrants(text, frameOrigin) {
  const seen = new Set();
  const granted = new Set();
  for (const declaration of text.split(';')) {
    const [feature, ...allowlist] = tokens(declaration);
    if (feature === undefined || seen.has(feature)) continue;
    seen.add(feature);
    const list = allowlist.length ? allowlist : ["'src'"];
    if (list.some((target) => target === '*' || target === "'src'" || target === frameOrigin)) granted.add(feature);
  }
  return granted;
}

/** The spec's permission keys by the feature each is. */
export const PERMISSION_FEATURES = { camera: 'camera', microphone: 'microphone', geolocation: 'geolocation', clipboardWrite: 'clipboard-write' };
