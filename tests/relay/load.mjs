// Loads the relay's parts (proxy-page/relay/) as the page runs them: joined in name order in one
// strict function, here without 99-start.js, given a page URL and a page config of the test's
// choosing as `window` and `document`. What the parts warn is kept, not printed. The function
// shares this realm's built-ins, so values a test makes are what the relay sees.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const RELAY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'proxy-page', 'relay');

/** The page config the service writes, with what a test overrides. */
export function pageConfig(overrides = {}) {
  return {
    hostOrigins: ['https://chat.example.com'],
    applied: null,
    dropped: [],
    droppedCount: 0,
    maxQueryBytes: 16384,
    upgradeParameter: 'upgrade',
    messages: 'json-rpc',
    viewSandbox: ['allow-forms', 'allow-modals', 'allow-pointer-lock', 'allow-same-origin', 'allow-scripts'],
    viewSandboxDefault: null,
    viewPolicy: 'service',
    defaultPolicy: null,
    signedPolicies: false,
    policyRefused: null,
    ...overrides,
  };
}

/**
 * The relay's functions named in `names`, for a page at `href` with `config`, in a `window` that
 * also has what `scope` gives it (`parent`, `location` fields); `logged` holds what they warned,
 * as `level: text`.
 */
export function loadRelay(names, { href = 'https://chat.sandbox.test/sandbox.html', config = pageConfig(), scope = {} } = {}) {
  const parts = readdirSync(RELAY).filter((f) => f.endsWith('.js') && f !== '99-start.js').sort();
  const source = parts.map((f) => readFileSync(join(RELAY, f), 'utf8')).join('\n');
  const logged = [];
  const log = (level) => (...args) => logged.push(`${level}: ${args.join(' ')}`);
  const url = new URL(href);
  const location = { href: url.href, protocol: url.protocol, origin: url.origin, hash: url.hash, ...scope.location };
  const window = { ...scope, location };
  const document = { getElementById: () => ({ textContent: JSON.stringify(config) }) };
  const console = { log: log('log'), info: log('info'), warn: log('warning'), error: log('error') };
  const relay = new Function('window', 'document', 'console', `'use strict';\n${source}\nreturn { ${names.join(', ')} };`);
  return { ...relay(window, document, console), logged };
}
