// What the relay tells the host developer's console stays bounded and exact: a peer that repeats
// a refused message is warned about once per view, whatever it sends, and every refused sandbox
// token is named, whatever its name. Messages go through onMessage, as a page's listener gets
// them, to views mounted in stand-in frames.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadRelay } from './load.mjs';

const PAGE = 'https://chat.sandbox.test';
const HOST = 'https://chat.example.com';
const RESOURCE_READY = 'ui/notifications/sandbox-resource-ready';
const RESERVED = { jsonrpc: '2.0', method: 'ui/notifications/sandbox-proxy-ready', params: {} };

/** The stand-in for the page's document: each inner frame a test can post from, written in place. */
function standInPage() {
  const frames = [];
  const body = {
    appendChild(frame) { frame.parentNode = body; },
    removeChild(frame) { frame.parentNode = null; },
  };
  const createElement = () => {
    const written = { open() {}, write() {}, close() {}, addEventListener() {} };
    const frame = {
      parentNode: null, contentDocument: written, contentWindow: { postMessage() {} },
      setAttribute() {}, addEventListener() {},
    };
    frames.push(frame);
    return frame;
  };
  return { frames, page: { body, createElement, documentElement: { style: {} } } };
}

/** A relay framed by the host, with `host(data)`, `stranger(data)` (the parent at another origin), `view(data)` and `mount()`. */
function framedRelay() {
  const parent = { postMessage() {} };
  const { frames, page } = standInPage();
  const relay = loadRelay(['onMessage'], { href: `${PAGE}/sandbox.html`, scope: { parent }, page });
  const host = (data) => relay.onMessage({ source: parent, origin: HOST, data });
  const stranger = (data) => relay.onMessage({ source: parent, origin: 'https://evil.example', data });
  const view = (data) => relay.onMessage({ source: frames.at(-1).contentWindow, origin: PAGE, data });
  const mount = () => host({ jsonrpc: '2.0', method: RESOURCE_READY, params: { html: '<p>view</p>' } });
  /** The warnings so far that say `text`. */
  const warned = (text) => relay.logged.filter((line) => line.startsWith('warning: ') && line.includes(text));
  return { ...relay, frames, host, stranger, view, mount, warned };
}

const times = (n, send) => { for (let i = 0; i < n; i += 1) send(i); };

describe('a refused message is warned about once per view', () => {
  it('a view that sends 100 non-JSON-RPC and 100 reserved messages is warned once of each; the next view again once', () => {
    const relay = framedRelay();
    relay.mount();
    times(100, (i) => relay.view({ type: 'chatter', i }));
    times(100, () => relay.view(RESERVED));
    assert.equal(relay.warned('dropped a non-JSON-RPC message from the view').length, 1, relay.logged.join('\n'));
    assert.equal(relay.warned('* message from the view: reserved for the proxy').length, 1, relay.logged.join('\n'));

    relay.mount();
    assert.equal(relay.frames.length, 2, 'the resource replaced the view');
    times(100, (i) => relay.view(`chatter ${i}`));
    times(100, () => relay.view(RESERVED));
    assert.equal(relay.warned('dropped a non-JSON-RPC message from the view').length, 2, relay.logged.join('\n'));
    assert.equal(relay.warned('* message from the view: reserved for the proxy').length, 2, relay.logged.join('\n'));
  });

  it('so is a host that repeats one, or a parent at another origin', () => {
    const relay = framedRelay();
    // Held until the view listens: MAX_HELD (256) of them, the rest dropped.
    times(300, (i) => relay.host({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { i } }));
    times(100, () => relay.host(RESERVED));
    times(100, (i) => relay.host({ i }));
    times(100, () => relay.stranger({ jsonrpc: '2.0', method: 'ping', id: 1 }));
    const kinds = [
      'dropped a host message: 256 are already waiting for the view',
      '* message from the host: reserved for the proxy',
      'dropped a non-JSON-RPC message from the host',
      'ignored a message from https://evil.example',
    ];
    for (const kind of kinds) assert.equal(relay.warned(kind).length, 1, `${kind}\n${relay.logged.join('\n')}`);

    // A view that listened and then navigated away: what the host sends it is dropped.
    relay.mount();
    relay.view({ jsonrpc: '2.0', method: 'ui/notifications/initialized' });
    relay.frames.at(-1).contentDocument = { elsewhere: true };
    times(100, (i) => relay.host({ jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: { i } }));
    assert.equal(relay.warned('the view has navigated away').length, 1, relay.logged.join('\n'));

    relay.mount();
    times(100, () => relay.host(RESERVED));
    assert.equal(relay.warned('* message from the host: reserved for the proxy').length, 2, 'the next view, once more');
  });
});

describe('refused sandbox tokens', () => {
  it('each is named, even one named like a member of every object', () => {
    const { sandboxTokens, logged } = loadRelay(['sandboxTokens']);
    const tokens = ['toString', '__proto__', 'constructor', 'hasOwnProperty', 'valueOf'];
    assert.deepEqual([...sandboxTokens(`allow-scripts ${tokens.join(' ')}`)], ['allow-scripts']);
    assert.equal(logged.length, 1, logged.join('\n'));
    assert.match(logged[0], /^warning: \[sandbox\] ignored sandbox tokens the host asked for/);
    assert.ok(logged[0].includes(`"${tokens.join(' ')}": not in this host entry's view_sandbox`), logged[0]);
    sandboxTokens(`allow-scripts ${tokens.join(' ')}`);
    assert.equal(logged.length, 1, 'each is named once per page');
  });
});
