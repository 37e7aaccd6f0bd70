// Loads the relay exactly as pages carry it: build.rs's one join of the shared vocabulary and
// proxy-page/relay/, stripped, as `mcp-sandbox-proxy relay` prints it (the binary in
// MCP_SANDBOX_PROXY_BIN, which scripts/test builds; `cargo run` without it). Here the join's
// closing start() is left out, and the page URL and config are the test's choosing, as `window`
// and `document` (with the stand-ins for the rest of a page a test gives it). What the relay
// warns is kept, not printed. The function shares this realm's built-ins, so values a test makes
// are what the relay sees.
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// The join's frame around the relay's body (build.rs's joined_relay).
const OPENING = "(function(){'use strict';";
const CLOSING = 'start();})();';

let body;
/** The relay's body as the binary carries it (without the join's frame), read once per test process. */
export function relayBody() {
  if (body !== undefined) return body;
  const bin = process.env.MCP_SANDBOX_PROXY_BIN;
  const served = bin
    ? execFileSync(bin, ['relay'], { encoding: 'utf8' })
    : execFileSync('cargo', ['run', '--quiet', '--', 'relay'], { cwd: ROOT, encoding: 'utf8' });
  if (!served.startsWith(OPENING) || !served.endsWith(CLOSING)) {
    throw new Error('`mcp-sandbox-proxy relay` is not the join this loader knows (build.rs joined_relay)');
  }
  body = served.slice(OPENING.length, served.length - CLOSING.length);
  return body;
}

let served;
/** The page config the service writes, exactly (`mcp-sandbox-proxy relay --page-config`: the
 * embedded default's page), read once per test process: its shape is the service's alone. */
export function servedPageConfig() {
  if (served !== undefined) return served;
  const bin = process.env.MCP_SANDBOX_PROXY_BIN;
  const printed = bin
    ? execFileSync(bin, ['relay', '--page-config'], { encoding: 'utf8' })
    : execFileSync('cargo', ['run', '--quiet', '--', 'relay', '--page-config'], { cwd: ROOT, encoding: 'utf8' });
  served = JSON.parse(printed);
  return served;
}

/** The page config the service writes, for a host at https://chat.example.com, with what a test
 * overrides. */
export function pageConfig(overrides = {}) {
  return { ...servedPageConfig(), hostOrigins: ['https://chat.example.com'], ...overrides };
}

/**
 * The relay's functions named in `names`, for a page at `href` with `config`, in a `window` that
 * also has what `scope` gives it (`parent`, `location` fields) and a `document` that also has
 * what `page` gives it (`body`, `createElement`); `logged` holds what they warned, as
 * `level: text`, and `window` is the window they ran in.
 */
export function loadRelay(names, { href = 'https://chat.sandbox.test/sandbox.html', config = pageConfig(), scope = {}, page = {} } = {}) {
  const source = relayBody();
  const logged = [];
  const log = (level) => (...args) => logged.push(`${level}: ${args.join(' ')}`);
  const url = new URL(href);
  const location = { href: url.href, protocol: url.protocol, origin: url.origin, hash: url.hash, ...scope.location };
  const window = { ...scope, location };
  const document = { getElementById: () => ({ textContent: JSON.stringify(config) }), ...page };
  const console = { log: log('log'), info: log('info'), warn: log('warning'), error: log('error') };
  const relay = new Function('window', 'document', 'console', `'use strict';\n${source}\nreturn { ${names.join(', ')} };`);
  return { ...relay(window, document, console), logged, window };
}

/** Every node of `node`'s tree, depth first. */
export function* nodes(node) {
  if (!node || typeof node.type !== 'string') return;
  yield node;
  for (const value of Object.values(node)) {
    if (Array.isArray(value)) for (const item of value) yield* nodes(item);
    else if (value && typeof value.type === 'string') yield* nodes(value);
  }
}
