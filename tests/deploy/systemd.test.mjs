// The systemd unit: `systemd-analyze verify` accepts it, and `systemd-analyze security` rates
// its exposure (the score is in docs/operations.md and must not get worse).
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, STATIC_BINARY } from './tools.mjs';

const UNIT = join(ROOT, 'deploy', 'systemd', 'mcp-sandbox-proxy.service');
const DOCUMENTED_SCORE = 1.6;

it('systemd-analyze verify accepts the unit', () => {
  // The same unit, with ExecStart pointing at the binary built here.
  const text = readFileSync(UNIT, 'utf8').replaceAll('/usr/local/bin/mcp-sandbox-proxy', STATIC_BINARY);
  const file = join(mkdtempSync(join(tmpdir(), 'msp-unit-')), 'mcp-sandbox-proxy.service');
  writeFileSync(file, text);
  const run = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  assert.equal(`${run.stdout}${run.stderr}`.trim(), '', 'no warnings');
});

it('the unit as docs/operations.md has it for [acme] (StateDirectory) verifies too', () => {
  const shipped = readFileSync(UNIT, 'utf8');
  assert.match(shipped, /^# StateDirectory=mcp-sandbox-proxy$/m, 'the line the ACME docs point at');
  const text = shipped.replace('# StateDirectory=', 'StateDirectory=').replaceAll('/usr/local/bin/mcp-sandbox-proxy', STATIC_BINARY);
  const file = join(mkdtempSync(join(tmpdir(), 'msp-unit-')), 'mcp-sandbox-proxy.service');
  writeFileSync(file, text);
  const run = spawnSync('systemd-analyze', ['verify', file], { encoding: 'utf8' });
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  assert.equal(`${run.stdout}${run.stderr}`.trim(), '', 'no warnings');
  const security = execFileSync('systemd-analyze', ['security', '--offline=true', file], { encoding: 'utf8' });
  const score = Number(security.match(/Overall exposure level for .*: ([\d.]+)/)[1]);
  assert.ok(score <= DOCUMENTED_SCORE, `exposure ${score} with StateDirectory`);
});

it('systemd-analyze security rates the unit as documented', (t) => {
  const out = execFileSync('systemd-analyze', ['security', '--offline=true', UNIT], { encoding: 'utf8' });
  const match = out.match(/Overall exposure level for .*: ([\d.]+) (\w+)/);
  assert.ok(match, out);
  const score = Number(match[1]);
  t.diagnostic(`systemd-analyze security: ${score} ${match[2]}`);
  assert.ok(score <= DOCUMENTED_SCORE, `exposure ${score} is worse than the documented ${DOCUMENTED_SCORE}`);
  for (const setting of ['DynamicUser=yes', 'ProtectSystem=strict', 'NoNewPrivileges=yes', 'ExecReload=/bin/kill -HUP $MAINPID']) {
    assert.ok(readFileSync(UNIT, 'utf8').includes(setting), setting);
  }
  assert.match(readFileSync(UNIT, 'utf8'), /^CapabilityBoundingSet=(CAP_NET_BIND_SERVICE)?$/m);
  // With DynamicUser the user is named after the unit; a static group of that name stops it.
  const group = readFileSync(UNIT, 'utf8').match(/^SupplementaryGroups=(.+)$/m);
  assert.ok(!group || group[1].trim() !== 'mcp-sandbox-proxy', 'the file group is not named like the unit');
});
