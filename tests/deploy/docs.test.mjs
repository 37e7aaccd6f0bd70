// Code in the docs that can run here does: the per-server label recipe of docs/hosts.md gives a
// label the service routes.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, STATIC_BINARY } from './tools.mjs';

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

it("docs/hosts.md: viewOrigin gives a server its own label whatever its _meta.ui.domain says", async () => {
  const guide = readFileSync(join(ROOT, 'docs', 'hosts.md'), 'utf8');
  const blocks = guide.split('```js').map((b) => b.split('```')[0]);
  const label = blocks.find((b) => b.includes('async function serverLabel'));
  const origin = blocks.find((b) => b.includes('async function viewOrigin'));
  assert.ok(label && origin, 'both recipes are in the guide');
  const labelSource = label.slice(label.indexOf('async function serverLabel'), label.indexOf('\n}\n') + 2);
  const warned = [];
  const console = { warn: (line) => warned.push(line) };
  const viewOrigin = new Function('console', `${labelSource}\n${origin}; return viewOrigin;`)(console);
  const own = await viewOrigin('https://mcp.example.com/mcp', undefined);
  assert.match(own, /^https:\/\/[0-9a-f]{32}\.chat\.example-sandbox\.net$/);
  assert.equal(await viewOrigin('https://mcp.example.com/mcp', own), own, 'the published form is taken as is');
  assert.deepEqual(warned, []);
  const other = await viewOrigin('https://other.example.com/mcp', own);
  assert.notEqual(other, own, "a server never gets another server's origin");
  assert.equal(warned.length, 1);
  assert.match(warned[0], /declares _meta\.ui\.domain/);
});

it("`mcp-sandbox-proxy label` prints the guide's serverLabel and viewOrigin, byte for byte", async (t) => {
  const guide = readFileSync(join(ROOT, 'docs', 'hosts.md'), 'utf8');
  const blocks = guide.split('```js').map((b) => b.split('```')[0]);
  const label = blocks.find((b) => b.includes('async function serverLabel'));
  const origin = blocks.find((b) => b.includes('async function viewOrigin'));
  const labelSource = label.slice(label.indexOf('async function serverLabel'), label.indexOf('\n}\n') + 2);
  const { serverLabel, viewOrigin } = new Function('console', `${labelSource}\n${origin}; return { serverLabel, viewOrigin };`)(console);
  const dir = mkdtempSync(join(tmpdir(), 'label-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'config.toml');
  // The guide's names: views on https://<label>.chat.example-sandbox.net.
  writeFileSync(config, 'listen = "127.0.0.1:0"\n[[hosts]]\norigin = "https://chat.example.com"\n' +
    'sandbox = "chat.example-sandbox.net"\nper_server_subdomains = true\n');
  for (const server of ['https://mcp.example.com/mcp', 'stdio:npx -y @acme/files-mcp', 'filesystem', 'ünïcode ☃ 𝄞', '']) {
    const printed = execFileSync(STATIC_BINARY, ['label', '--config', config, '--', server], { encoding: 'utf8' });
    assert.equal(printed, `label: ${await serverLabel(server)}\norigin: ${await viewOrigin(server)}\n`, server);
  }
});
