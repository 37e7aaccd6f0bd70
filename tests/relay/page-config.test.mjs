// The page config has one shape, the service's: the relay reads every key the service writes
// and no other, and the relay's tests start from what the service writes
// (`mcp-sandbox-proxy relay --page-config`, see load.mjs).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'acorn';
import { relayBody, servedPageConfig, nodes } from './load.mjs';

/** The keys `source` reads of its page config: every `config.<key>`. */
function keysRead(source) {
  const program = parse(source, { ecmaVersion: 2020, sourceType: 'script', allowReturnOutsideFunction: true });
  const keys = new Set();
  for (const node of nodes(program)) {
    if (node.type === 'MemberExpression' && !node.computed && node.object.type === 'Identifier' &&
      node.object.name === 'config') keys.add(node.property.name);
  }
  return keys;
}

/** Keys read but not written, and written but not read. */
function mismatch(read, written) {
  return {
    unwritten: [...read].filter((key) => !written.includes(key)).sort(),
    unread: written.filter((key) => !read.has(key)).sort(),
  };
}

describe('the page config', () => {
  it('the relay reads every key the service writes, and only those', () => {
    const written = Object.keys(servedPageConfig());
    assert.ok(written.length >= 10, written.join(', '));
    assert.deepEqual(mismatch(keysRead(relayBody()), written), { unwritten: [], unread: [] });
  });

  it('the check can fail: a key read that the service never writes, and one written and never read', () => {
    const read = keysRead('var config = {}; config.hostOrigins; config.nowhere;');
    assert.deepEqual(mismatch(read, ['hostOrigins', 'maxQueryBytes']),
      { unwritten: ['nowhere'], unread: ['maxQueryBytes'] });
  });
});
