#!/usr/bin/env node
// What the number of hosts costs: for generated configs of 1 000, 10 000 and 100 000
// per-server host entries (one per tenant, as a platform would run them), written in one file or
// one file per tenant (`hosts_dir`), the time `check` takes, the time `serve` takes to listen, the
// resident memory per host entry once it does, what polling the files for changes costs (CPU
// time per poll, measured over POLL_S seconds of polling every second), and requests per second
// for a page of a tenant in the middle (wrk, 16 connections, ROUTE_S seconds) next to the same
// with one host: routing must not cost more with more hosts. Routing is measured with the hosts
// in one file only: the hosts.d rows poll their files every second meanwhile (0.4 s of CPU per
// poll for 100 000 files), which would be measured instead; the hosts in memory are the same.
//
//   bench/hosts.mjs     HOST_COUNTS=1000,10000,100000  HOSTS_LIMIT_S=120 (per step)  POLL_S=5  ROUTE_S=3
//                       HOSTS_LAYOUTS=file,dir  HOSTS_JSON=target/hosts.json
//                       MCP_SANDBOX_PROXY_BIN=path (default: the static release binary)
//
// A step over HOSTS_LIMIT_S is stopped and reported as such, and the larger counts are not run:
// the growth is visible from the counts that finished. Everything listens on 127.0.0.1 and stops
// by itself.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { BINARY, ROOT, freePort, tempDir } from '../tests/browser/harness.mjs';
import { tenantConfig, tenantEntries } from './tenants.mjs';

const COUNTS = (process.env.HOST_COUNTS || '1000,10000,100000').split(',').map(Number);
const LIMIT_MS = Number(process.env.HOSTS_LIMIT_S || 120) * 1000;
const POLL_S = Number(process.env.POLL_S || 5);
const ROUTE_S = Number(process.env.ROUTE_S || 3);
if (spawnSync('wrk', ['--version']).error) throw new Error('bench/hosts: wrk is missing (bench/run installs it; or apt-get install wrk)');
const LAYOUTS = (process.env.HOSTS_LAYOUTS || 'file,dir').split(',');
for (const layout of LAYOUTS) {
  if (!['file', 'dir'].includes(layout)) throw new Error(`HOSTS_LAYOUTS: "${layout}" is neither file nor dir`);
}
const TICKS_PER_S = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;
const JSON_OUT = process.env.HOSTS_JSON ? resolve(process.env.HOSTS_JSON) : join(ROOT, 'target', 'hosts.json');
for (const count of COUNTS) {
  if (!Number.isInteger(count) || count < 1) throw new Error(`HOST_COUNTS: "${count}" is not a positive whole number`);
}

/** Runs the binary until it exits, or until `until(line)` matches a line of its output; then
 * measures polling and, given `route` ({port, host}), routing. */
function run(args, until, route) {
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
      createInterface({ input: child.stderr }).on('line', async (line) => {
        if (!until(line)) return;
        const ms = elapsed();
        const rssKb = Number(readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)/m)[1]);
        clearTimeout(timer);
        const pollMs = await pollingCost(child.pid);
        const rps = route ? requestsPerSecond(route) : undefined;
        child.kill('SIGKILL');
        finish({ ms, rssKb, pollMs, rps });
      });
    }
    child.on('exit', (code) => finish({ ms: elapsed(), code }));
  });
}

/** CPU time the process spends per second while idle: polling its files once a second. */
async function pollingCost(pid) {
  const cpuTicks = () => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    .slice(11, 13).reduce((sum, v) => sum + Number(v), 0);
  await sleep(1500); // past the start-up log and the first poll
  const before = cpuTicks();
  await sleep(POLL_S * 1000);
  return ((cpuTicks() - before) / TICKS_PER_S) * 1000 / POLL_S;
}

/** wrk's requests per second for the page of `host` on 127.0.0.1:`port`. */
function requestsPerSecond({ port, host }) {
  const wrk = spawnSync('wrk', ['-t1', '-c16', `-d${ROUTE_S}s`, '-H', `Host: ${host}`, `http://127.0.0.1:${port}/sandbox.html`],
    { encoding: 'utf8', timeout: (ROUTE_S + 30) * 1000 });
  const rate = wrk.stdout?.match(/Requests\/sec:\s+([\d.]+)/);
  if (!rate || /Non-2xx/.test(wrk.stdout)) throw new Error(`bench/hosts: wrk failed against ${host}: ${wrk.stdout}${wrk.stderr}`);
  return Number(rate[1]);
}

/** The config for `count` tenants, written as `layout` says; the main file's path. */
function writeLayout(layout, count, port) {
  const dir = tempDir();
  const file = join(dir, 'hosts.toml');
  if (layout === 'file') {
    writeFileSync(file, tenantConfig(count, port, 'watch_interval = "1s"\n'));
    return file;
  }
  mkdirSync(join(dir, 'hosts.d'));
  for (let i = 0; i < count; i++) writeFileSync(join(dir, 'hosts.d', `tenant-${i}.toml`), tenantEntries(1, i));
  writeFileSync(file, `listen = "127.0.0.1:${port}"\nwatch_interval = "1s"\nhosts_dir = "hosts.d"\n[limits]\nmax_connections = 64\n`);
  return file;
}

const rows = [];
let baselineKb, baselineRps;
for (const layout of LAYOUTS) {
  for (const count of [1, ...COUNTS]) {
    const port = await freePort();
    const file = writeLayout(layout, count, port);
    const route = layout === 'file' ? { port, host: `srv-1.tenant-${Math.floor(count / 2)}.sandbox.example` } : undefined;
    const check = await run(['check', '--config', file]);
    const serve = check.overLimit ? { overLimit: true }
      : await run(['serve', '--config', file], (line) => line.includes('"listening"'), route);
    rmSync(dirname(file), { recursive: true, force: true });
    if (count === 1) { [baselineKb, baselineRps] = [serve.rssKb, serve.rps]; continue; }
    const row = {
      layout,
      hosts: count,
      check_ms: check.overLimit ? null : Math.round(check.ms),
      serve_listening_ms: serve.overLimit ? null : Math.round(serve.ms),
      rss_kb: serve.rssKb ?? null,
      bytes_per_host: serve.rssKb ? Math.round(((serve.rssKb - baselineKb) * 1024) / count) : null,
      cpu_ms_per_poll: serve.pollMs === undefined ? null : Math.round(serve.pollMs),
      requests_per_s: serve.rps === undefined ? null : Math.round(serve.rps),
      requests_per_s_one_host: baselineRps === undefined ? null : Math.round(baselineRps),
    };
    rows.push(row);
    if (check.overLimit || serve.overLimit) {
      row.over_limit_s = LIMIT_MS / 1000;
      break;
    }
  }
}

const cell = (v, unit) => (v === null ? `over ${LIMIT_MS / 1000} s` : `${v.toLocaleString('en-US')} ${unit}`);
const layoutName = { file: 'one file', dir: 'hosts.d, a file per tenant' };
console.log('| hosts | written in | check | serve until listening | resident memory | per host | CPU per poll | requests/s (/ one host) |');
console.log('| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const r of rows) {
  console.log(`| ${r.hosts.toLocaleString('en-US')} | ${layoutName[r.layout]} | ${cell(r.check_ms, 'ms')} | ${cell(r.serve_listening_ms, 'ms')} | `
    + `${r.rss_kb === null ? '' : `${r.rss_kb.toLocaleString('en-US')} kB`} | ${r.bytes_per_host === null ? '' : `${r.bytes_per_host} B`} | `
    + `${r.cpu_ms_per_poll === null ? '' : `${r.cpu_ms_per_poll} ms`} | `
    + `${r.requests_per_s === null ? '' : `${r.requests_per_s.toLocaleString('en-US')} (${(r.requests_per_s / r.requests_per_s_one_host).toFixed(2)})`} |`);
}
const skipped = LAYOUTS.flatMap((l) => COUNTS.filter((c) => !rows.some((r) => r.layout === l && r.hosts === c)).map((c) => `${c} (${l})`));
if (skipped.length) console.log(`\nnot run after a step over ${LIMIT_MS / 1000} s: ${skipped.join(', ')} hosts`);
mkdirSync(dirname(JSON_OUT), { recursive: true });
writeFileSync(JSON_OUT, `${JSON.stringify({ binary: BINARY, limit_s: LIMIT_MS / 1000, baseline_rss_kb: baselineKb, rows }, null, 2)}\n`);
console.error(`bench/hosts: wrote ${JSON_OUT}`);
