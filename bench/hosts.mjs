#!/usr/bin/env node
// What the number of hosts costs: for generated configs of 1 000, 10 000 and 100 000
// per-server host entries (one per tenant, as a platform would run them), the time `check`
// takes, the time `serve` takes to listen, and the resident memory per host entry once it does.
//
//   bench/hosts.mjs     HOST_COUNTS=1000,10000,100000  HOSTS_LIMIT_S=120 (per step)
//                       HOSTS_JSON=target/hosts.json
//                       MCP_SANDBOX_PROXY_BIN=path (default: the static release binary)
//
// A step over HOSTS_LIMIT_S is stopped and reported as such, and the larger counts are not run:
// the growth is visible from the counts that finished. Everything listens on 127.0.0.1 and stops
// by itself.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { BINARY, ROOT, freePort, tempDir } from '../tests/browser/harness.mjs';

const COUNTS = (process.env.HOST_COUNTS || '1000,10000,100000').split(',').map(Number);
const LIMIT_MS = Number(process.env.HOSTS_LIMIT_S || 120) * 1000;
const JSON_OUT = process.env.HOSTS_JSON ? resolve(process.env.HOSTS_JSON) : join(ROOT, 'target', 'hosts.json');
for (const count of COUNTS) {
  if (!Number.isInteger(count) || count < 1) throw new Error(`HOST_COUNTS: "${count}" is not a positive whole number`);
}

/** A config with `count` tenants: tenant-i.chat.example → tenant-i.sandbox.example, per server. */
function config(count, port) {
  const lines = [`listen = "127.0.0.1:${port}"`, '[limits]', 'max_connections = 64'];
  for (let i = 0; i < count; i++) {
    lines.push('[[hosts]]', `origin = "https://tenant-${i}.chat.example"`,
      `sandbox = "tenant-${i}.sandbox.example"`, 'per_server_subdomains = true');
  }
  return `${lines.join('\n')}\n`;
}

/** Runs the binary until it exits, or until `until(line)` matches a line of its output. */
function run(args, until) {
  return new Promise((resolveRun) => {
    const started = process.hrtime.bigint();
    const child = spawn(BINARY, args, {
      env: { ...process.env, MCP_SANDBOX_PROXY_LOG_FORMAT: 'json', RUST_LOG: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const elapsed = () => Number(process.hrtime.bigint() - started) / 1e6;
    const timer = setTimeout(() => { child.kill('SIGKILL'); resolveRun({ overLimit: true, ms: LIMIT_MS }); }, LIMIT_MS);
    const finish = (result) => { clearTimeout(timer); resolveRun(result); };
    if (until) {
      createInterface({ input: child.stderr }).on('line', (line) => {
        if (!until(line)) return;
        const ms = elapsed();
        const rssKb = Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1]);
        child.kill('SIGKILL');
        finish({ ms, rssKb });
      });
    }
    child.on('exit', (code) => finish({ ms: elapsed(), code }));
  });
}

const rows = [];
let baselineKb;
for (const count of [1, ...COUNTS]) {
  const file = join(tempDir(), 'hosts.toml');
  writeFileSync(file, config(count, await freePort()));
  const check = await run(['check', '--config', file]);
  const serve = check.overLimit ? { overLimit: true }
    : await run(['serve', '--config', file], (line) => line.includes('"listening"'));
  if (count === 1) { baselineKb = serve.rssKb; continue; }
  const row = {
    hosts: count,
    check_ms: check.overLimit ? null : Math.round(check.ms),
    serve_listening_ms: serve.overLimit ? null : Math.round(serve.ms),
    rss_kb: serve.rssKb ?? null,
    bytes_per_host: serve.rssKb ? Math.round(((serve.rssKb - baselineKb) * 1024) / count) : null,
  };
  rows.push(row);
  if (check.overLimit || serve.overLimit) {
    row.over_limit_s = LIMIT_MS / 1000;
    break;
  }
}

const cell = (v, unit) => (v === null ? `over ${LIMIT_MS / 1000} s` : `${v.toLocaleString('en-US')} ${unit}`);
console.log('| hosts | check | serve until listening | resident memory | per host |');
console.log('| ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(`| ${r.hosts.toLocaleString('en-US')} | ${cell(r.check_ms, 'ms')} | ${cell(r.serve_listening_ms, 'ms')} | `
    + `${r.rss_kb === null ? '' : `${r.rss_kb.toLocaleString('en-US')} kB`} | ${r.bytes_per_host === null ? '' : `${r.bytes_per_host} B`} |`);
}
const skipped = COUNTS.filter((c) => !rows.some((r) => r.hosts === c));
if (skipped.length) console.log(`\nnot run after a step over ${LIMIT_MS / 1000} s: ${skipped.join(', ')} hosts`);
mkdirSync(dirname(JSON_OUT), { recursive: true });
writeFileSync(JSON_OUT, `${JSON.stringify({ binary: BINARY, limit_s: LIMIT_MS / 1000, baseline_rss_kb: baselineKb, rows }, null, 2)}\n`);
console.error(`bench/hosts: wrote ${JSON_OUT}`);
