// Code in the docs that can run here does: the per-server label recipe of docs/hosts.md gives a
// label the service routes.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './tools.mjs';

it('docs/hosts.md: serverLabel gives a 32-hex-character DNS label', async () => {
  const guide = readFileSync(join(ROOT, 'docs', 'hosts.md'), 'utf8');
  const block = guide.split('```js').map((b) => b.split('```')[0]).find((b) => b.includes('async function serverLabel'));
  assert.ok(block, 'the recipe is in the guide');
  const source = block.slice(block.indexOf('async function serverLabel'), block.indexOf('\n}\n') + 2);
  const serverLabel = new Function(`${source}; return serverLabel;`)();
  const label = await serverLabel('https://mcp.example.com/mcp');
  assert.match(label, /^[0-9a-f]{32}$/);
  assert.notEqual(label, await serverLabel('https://other.example.com/mcp'), 'one label per server');
  // SHA-256("https://mcp.example.com/mcp"), first 32 hex characters, computed independently.
  const { createHash } = await import('node:crypto');
  assert.equal(label, createHash('sha256').update('https://mcp.example.com/mcp').digest('hex').slice(0, 32));
});
