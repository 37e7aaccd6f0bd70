// The relay's host pinning, under node --test: a page that serves several origins tells each it
// is ready, then pins to its parent's, known from location.ancestorOrigins where the engine has
// it and from the parent's first message where it has not. The browser suites frame real pages
// from two origins; these pin each rule's edges.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadRelay, pageConfig } from './load.mjs';

const ORIGINS = ['http://localhost:6274', 'http://127.0.0.1:6274'];

/** A relay serving `origins` inside a parent that records each post's target origin. */
function relayIn({ origins = ORIGINS, ancestorOrigins } = {}) {
  const posted = [];
  const parent = { postMessage: (message, target) => posted.push(target) };
  const scope = { parent, location: ancestorOrigins ? { ancestorOrigins } : {} };
  const config = pageConfig({ hostOrigins: origins });
  const relay = loadRelay(['onMessage', 'postToHost'], { config, scope });
  const fromParent = (origin) => relay.onMessage({ source: parent, origin, data: { jsonrpc: '2.0', method: 'x/y' } });
  return { ...relay, posted, fromParent };
}

describe('host pinning: one page for the origins of one entry', () => {
  it('a page with one origin posts to it alone', () => {
    const relay = relayIn({ origins: ['https://chat.example.com'] });
    relay.postToHost({ jsonrpc: '2.0', method: 'a' });
    assert.deepEqual(relay.posted, ['https://chat.example.com']);
  });

  it('without ancestorOrigins, the first post goes to each listed origin, never "*"', () => {
    const relay = relayIn();
    relay.postToHost({ jsonrpc: '2.0', method: 'ready' });
    assert.deepEqual(relay.posted, ORIGINS);
  });

  it("the parent's first message pins the page to its origin", () => {
    const relay = relayIn();
    relay.fromParent('http://127.0.0.1:6274');
    relay.postToHost({ jsonrpc: '2.0', method: 'a' });
    assert.deepEqual(relay.posted, ['http://127.0.0.1:6274']);
    relay.fromParent('http://localhost:6274');
    assert.match(relay.logged.at(-1), /ignored a message from http:\/\/localhost:6274: only http:\/\/127\.0\.0\.1:6274 may/);
  });

  it('an origin outside the list pins nothing and is named with the list', () => {
    const relay = relayIn();
    relay.fromParent('https://evil.example');
    assert.match(relay.logged.at(-1), /only http:\/\/localhost:6274 or http:\/\/127\.0\.0\.1:6274 may drive/);
    relay.postToHost({ jsonrpc: '2.0', method: 'a' });
    assert.deepEqual(relay.posted, ORIGINS);
  });

  it("ancestorOrigins names the parent's origin before any message", () => {
    const relay = relayIn({ ancestorOrigins: ['http://127.0.0.1:6274', 'http://127.0.0.1:6274'] });
    relay.postToHost({ jsonrpc: '2.0', method: 'ready' });
    assert.deepEqual(relay.posted, ['http://127.0.0.1:6274']);
    relay.fromParent('http://localhost:6274');
    assert.match(relay.logged.at(-1), /ignored a message from http:\/\/localhost:6274/);
  });

  it('an ancestor origin outside the list is not trusted', () => {
    const relay = relayIn({ ancestorOrigins: ['https://evil.example'] });
    relay.postToHost({ jsonrpc: '2.0', method: 'ready' });
    assert.deepEqual(relay.posted, ORIGINS);
  });
});
