#!/usr/bin/env node
// What a reload of a large config costs the requests served meanwhile. The service runs with
// HOSTS generated per-server hosts and its default file polling; a paced client (bench/constant's
// `paced`: a fixed rate, latency counted from each request's planned time) asks for a page,
// first while nothing happens, then while SIGHUP reloads the whole config again and again. The
// two phases alternate for ROUNDS rounds in one run, and their latencies are compared side by side.
//
//   bench/reload.mjs    HOSTS=100000 ROUNDS=3 PHASE_S=10 RATE=2000 LANES=16
//                       RELOAD_JSON=target/reload.json
//                       MCP_SANDBOX_PROXY_BIN=path (default: the static release binary)
//
// Everything listens on 127.0.0.1 and stops by itself.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { BINARY, ROOT, freePort, tempDir } from '../tests/browser/harness.mjs';
import { tenantConfig } from './tenants.mjs';

const number = (name, fallback) => {
  const value = Number(process.env[name] || fallback);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name}: "${process.env[name]}" is not a positive number`);
  return value;
};
const HOSTS = number('HOSTS', 100000);
const ROUNDS = number('ROUNDS', 3);
const PHASE_S = number('PHASE_S', 10);
const RATE = number('RATE', 2000);
const LANES = number('LANES', 16);
const JSON_OUT = process.env.RELOAD_JSON ? resolve(process.env.RELOAD_JSON) : join(ROOT, 'target', 'reload.json');
const TARGET = `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-gnu`;
const PACED = join(ROOT, 'target', 'bench-constant', TARGET, 'release', 'paced');

function buildPaced() {
  const built = spawnSync('cargo', ['build', '--quiet', '--locked', '--release', '--target', TARGET], {
    cwd: join(ROOT, 'bench', 'constant'),
    env: { ...process.env, RUSTFLAGS: '-C target-feature=+crt-static', CARGO_TARGET_DIR: join(ROOT, 'target', 'bench-constant') },
    stdio: 'inherit',
  });
  if (built.status !== 0) throw new Error('bench/reload: building bench/constant failed');
}

const messageOf = (entry) => entry.message ?? entry.fields?.message ?? '';

/** The service, with its JSON log lines delivered to whoever waits for one. */
async function startService(file) {
  const child = spawn(BINARY, ['serve', '--config', file], {
    env: { ...process.env, MCP_SANDBOX_PROXY_LOG_FORMAT: 'json', RUST_LOG: 'info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const waiting = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    let entry;
    try { entry = JSON.parse(line); } catch { return; }
    const message = messageOf(entry);
    for (const w of waiting.splice(0)) {
      if (w.match(message)) w.resolve(entry); else waiting.push(w);
    }
  });
  const exited = new Promise((_, reject) => child.on('exit', (code) => reject(new Error(`the service exited (${code})`))));
  exited.catch(() => {});
  const nextLog = (match, what, ms = 120000) => Promise.race([
    new Promise((resolveLog) => waiting.push({ match, resolve: resolveLog })),
    exited,
    sleep(ms).then(() => { throw new Error(`no "${what}" log line within ${ms / 1000} s`); }),
  ]);
  await nextLog((m) => m === 'listening', 'listening');
  return { child, nextLog };
}

/** One paced run; its `key value` lines as numbers. */
function paced(port, host) {
  return new Promise((resolveRun, reject) => {
    const child = spawn(PACED, [`127.0.0.1:${port}`, host, String(LANES), String(RATE), String(PHASE_S), '/'],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), (PHASE_S + 30) * 1000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`paced failed (${code}): ${out}`));
      resolveRun(Object.fromEntries(out.trim().split('\n').map((l) => l.split(' ')).map(([k, v]) => [k, Number(v)])));
    });
  });
}

/** SIGHUP after SIGHUP, each once the previous reload is logged, until `running` settles. */
async function reloadWhile(service, running) {
  let done = false;
  running.then(() => { done = true; }, () => { done = true; });
  const took = [];
  while (!done) {
    const logged = service.nextLog((m) => m.startsWith('reload'), 'reloaded');
    const sent = process.hrtime.bigint();
    service.child.kill('SIGHUP');
    const entry = await logged;
    if (!messageOf(entry).startsWith('reloaded')) throw new Error(`a reload was refused: ${JSON.stringify(entry)}`);
    took.push(Number(process.hrtime.bigint() - sent) / 1e6);
    await sleep(500);
  }
  return took;
}

buildPaced();
const port = await freePort();
const file = join(tempDir(), 'hosts.toml');
writeFileSync(file, tenantConfig(HOSTS, port));
const service = await startService(file);
// A per-server name of a tenant in the middle of the file: routing must not depend on where.
const host = `srv-1.tenant-${Math.floor(HOSTS / 2)}.sandbox.example`;
const rounds = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const quiet = await paced(port, host);
    const running = paced(port, host);
    const reloadsMs = await reloadWhile(service, running);
    rounds.push({ quiet, reloading: await running, reloads_ms: reloadsMs.map(Math.round) });
  }
} finally {
  service.child.kill('SIGKILL');
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const ms = (v) => `${v.toFixed(2)} ms`;
console.log(`${HOSTS.toLocaleString('en-US')} hosts, ${RATE} requests/s over ${LANES} connections, ${PHASE_S} s per phase\n`);
console.log('| round | phase | requests | errors | p50 | p99 | p99.9 | max | reloads (median time) |');
console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
rounds.forEach((r, i) => {
  for (const [name, p] of [['quiet', r.quiet], ['reloading', r.reloading]]) {
    const reloads = name === 'reloading' ? `${r.reloads_ms.length} (${median(r.reloads_ms)} ms)` : '';
    console.log(`| ${i + 1} | ${name} | ${p.requests} | ${p.errors} | ${ms(p.p50_ms)} | ${ms(p.p99_ms)} | ${ms(p.p999_ms)} | ${ms(p.max_ms)} | ${reloads} |`);
  }
});
const ratio = median(rounds.map((r) => r.reloading.p99_ms / r.quiet.p99_ms));
console.log(`\np99 while reloading / p99 quiet (median of rounds): ${ratio.toFixed(2)}`);
mkdirSync(dirname(JSON_OUT), { recursive: true });
writeFileSync(JSON_OUT, `${JSON.stringify({ binary: BINARY, hosts: HOSTS, rate: RATE, lanes: LANES, phase_s: PHASE_S, rounds, p99_ratio: ratio }, null, 2)}\n`);
console.error(`bench/reload: wrote ${JSON_OUT}`);
