#!/usr/bin/env node
// bench/run's report: reads what each measurement printed, takes the median of the rounds for
// every server and workload, prints the table (text, then Markdown) and writes the JSON file
// (every round's values and the medians) and the Markdown file.
//
//   node bench/report.mjs MANIFEST META JSON_OUT MD_OUT
//
// MANIFEST: tab-separated `round workload server kind file` lines, kind one of wrk, h2load
// (with FILE.log, h2load's per-request log), handshake (bench/constant's client) and memory. META: tab-separated `key value` lines.
import { readFileSync, writeFileSync } from 'node:fs';

const [manifestPath, metaPath, jsonPath, mdPath] = process.argv.slice(2);
if (!mdPath) {
  console.error('usage: node bench/report.mjs MANIFEST META JSON_OUT MD_OUT');
  process.exit(2);
}

// constant: tokio's multi-thread runtime, as the service; constant-ct: its current-thread one.
const SERVERS = ['ours', 'nginx', 'constant', 'constant-ct'];
const WORKLOADS = {
  'tls-h1': 'TLS HTTP/1.1 keep-alive',
  'tls-h1-br': 'TLS HTTP/1.1 keep-alive, br',
  'tls-h2': 'TLS HTTP/2',
  'tls-h2-br': 'TLS HTTP/2, br (as browsers ask)',
  'tls-handshake': 'TLS, new connection per request (wrk)',
  'tls-full-handshake': 'TLS, full handshake per request',
  'plain-h1': 'plain HTTP/1.1 keep-alive',
  'plain-h1-br': 'plain HTTP/1.1 keep-alive, br',
};
const MEMORY_WORKLOADS = {
  'idle-memory': 'kB per idle TLS HTTP/1.1 connection',
  'idle-memory-h2': 'kB per idle TLS HTTP/2 connection, as a browser tab leaves it',
};
const isMemory = (workload) => workload in MEMORY_WORKLOADS;

function fail(message) {
  console.error(`bench/report: ${message}`);
  process.exit(1);
}

const lines = (path) => readFileSync(path, 'utf8').split('\n').filter((line) => line !== '');

const meta = {};
const extraHeaders = [];
for (const line of lines(metaPath)) {
  const [key, ...rest] = line.split('\t');
  if (key === 'extra_header') extraHeaders.push(rest.join('\t'));
  else meta[key] = rest.join('\t');
}

// wrk prints times as 12.34us, 1.23ms, 1.02s, 1.00m.
const TIME_UNIT_MS = { us: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };

function parseWrk(file) {
  const text = readFileSync(file, 'utf8');
  const rps = text.match(/^Requests\/sec:\s+([\d.]+)/m);
  const p99 = text.match(/^\s+99%\s+([\d.]+)(us|ms|s|m|h)\s*$/m);
  const total = text.match(/^\s+(\d+) requests in /m);
  if (!rps || !p99 || !total) fail(`cannot read wrk's output in ${file}:\n${text}`);
  const socket = text.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const non2xx = text.match(/Non-2xx or 3xx responses: (\d+)/);
  return {
    rps: Number(rps[1]),
    p99_ms: Number(p99[1]) * TIME_UNIT_MS[p99[2]],
    requests: Number(total[1]),
    errors: {
      non_2xx: non2xx ? Number(non2xx[1]) : 0,
      connect: socket ? Number(socket[1]) : 0,
      read: socket ? Number(socket[2]) : 0,
      write: socket ? Number(socket[3]) : 0,
      timeout: socket ? Number(socket[4]) : 0,
    },
  };
}

// h2load prints no percentiles; its log has one line per request: start (µs since the epoch),
// status (-1 for a failed stream), µs until the end of the response.
function parseH2load(file) {
  const text = readFileSync(file, 'utf8');
  const rps = text.match(/^finished in [\d.]+\w+, ([\d.]+) req\/s/m);
  const requests = text.match(
    /^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout/m,
  );
  const codes = text.match(/^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx/m);
  if (!rps || !requests || !codes) fail(`cannot read h2load's output in ${file}:\n${text}`);
  const times = [];
  for (const line of lines(`${file}.log`)) {
    const [, status, micros] = line.split('\t');
    if (Number(status) >= 200 && Number(status) < 300) times.push(Number(micros));
  }
  if (times.length === 0) fail(`h2load logged no successful request in ${file}.log`);
  times.sort((a, b) => a - b);
  return {
    rps: Number(rps[1]),
    p99_ms: percentile(times, 0.99) / 1000,
    requests: Number(requests[4]),
    errors: {
      non_2xx: Number(codes[2]) + Number(codes[3]) + Number(codes[4]),
      failed: Number(requests[5]),
      errored: Number(requests[6]),
      timeout: Number(requests[7]),
    },
  };
}

// bench/constant's handshake client prints `key value` lines.
function parseHandshake(file) {
  const values = Object.fromEntries(lines(file).map((line) => line.split(' ')).map(([k, v]) => [k, Number(v)]));
  if (!(values.requests > 0 && values.rps > 0 && values.p99_ms > 0)) fail(`cannot read ${file}`);
  return {
    rps: values.rps,
    p99_ms: values.p99_ms,
    requests: values.requests,
    full_handshakes: values.full_handshakes,
    errors: { failed: values.errors },
  };
}

function parseMemory(file) {
  const values = Object.fromEntries(lines(file).map((line) => line.split(' ')).map(([k, v]) => [k, Number(v)]));
  if (!(values.connections > 0)) fail(`cannot read ${file}`);
  return { ...values, kb_per_connection: (values.after_kb - values.before_kb) / values.connections };
}

// Nearest rank: the smallest value with at least `q` of all values at or below it.
function percentile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// CPU use during a throughput measurement, when bench/run recorded it: the server's share of one
// core and how busy the load generator's core was.
function parseCpu(file) {
  let text;
  try {
    text = readFileSync(`${file}.cpu`, 'utf8');
  } catch {
    return {};
  }
  return Object.fromEntries(text.split('\n').filter(Boolean).map((line) => line.split(' ')).map(([k, v]) => [k, Number(v)]));
}

const results = {};
for (const line of lines(manifestPath)) {
  const [round, workload, server, kind, file] = line.split('\t');
  const parse = { wrk: parseWrk, h2load: parseH2load, handshake: parseHandshake, memory: parseMemory }[kind];
  if (!parse) fail(`unknown kind ${kind} in ${manifestPath}`);
  results[workload] ??= {};
  results[workload][server] ??= { rounds: [] };
  results[workload][server].rounds.push({ round: Number(round), ...parse(file), ...(kind === 'memory' ? {} : parseCpu(file)) });
}

const ratios = {};
for (const [workload, servers] of Object.entries(results)) {
  const key = isMemory(workload) ? 'kb_per_connection' : 'rps';
  for (const cell of Object.values(servers)) {
    cell.median =
      isMemory(workload)
        ? { kb_per_connection: median(cell.rounds.map((r) => r.kb_per_connection)) }
        : {
            rps: median(cell.rounds.map((r) => r.rps)),
            p99_ms: median(cell.rounds.map((r) => r.p99_ms)),
            server_cpu: median(cell.rounds.map((r) => r.server_cpu)),
            load_core_busy: median(cell.rounds.map((r) => r.load_core_busy)),
            rps_per_server_cpu: median(cell.rounds.map((r) => r.rps / r.server_cpu)),
          };
  }
  const ours = servers.ours?.median[key];
  ratios[workload] = {
    ours_nginx: ours / servers.nginx?.median[key],
    ours_constant: ours / servers.constant?.median[key],
    ours_constant_ct: ours / servers['constant-ct']?.median[key],
  };
  if (!isMemory(workload)) {
    const per = (server) => servers[server]?.median.rps_per_server_cpu;
    ratios[workload].per_server_cpu_ours_nginx = per('ours') / per('nginx');
    ratios[workload].per_server_cpu_ours_constant = per('ours') / per('constant');
    ratios[workload].per_server_cpu_ours_constant_ct = per('ours') / per('constant-ct');
  }
}

// Errors a load generator saw, summed over the rounds: none is expected; each is reported.
const errorNotes = [];
for (const [workload, servers] of Object.entries(results)) {
  if (isMemory(workload)) continue;
  for (const [server, cell] of Object.entries(servers)) {
    const sums = {};
    for (const r of cell.rounds) for (const [k, v] of Object.entries(r.errors)) sums[k] = (sums[k] ?? 0) + v;
    const seen = Object.entries(sums).filter(([, v]) => v > 0);
    if (seen.length > 0) {
      const total = cell.rounds.reduce((sum, r) => sum + r.requests, 0);
      errorNotes.push(`${workload}, ${server}: ${seen.map(([k, v]) => `${v} ${k}`).join(', ')} (of ${total} requests)`);
    }
  }
}

// Cells where the server did not use its core: the load generator (or the machine) was the limit.
const SATURATED = 0.9;
const pct = (x) => `${Math.round(x * 100)} %`;
const unsaturated = [];
for (const [workload, servers] of Object.entries(results)) {
  if (isMemory(workload)) continue;
  for (const [server, cell] of Object.entries(servers)) {
    const { server_cpu: cpu, load_core_busy: busy } = cell.median;
    if (Number.isFinite(cpu) && cpu < SATURATED) unsaturated.push(`${workload} ${server} ${pct(cpu)} (load core ${pct(busy)})`);
  }
}

// --- Output ---------------------------------------------------------------------------------------
const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const fixed = (n, digits) => (Number.isFinite(n) ? n.toFixed(digits) : '-');
const ms = (n) => (Number.isFinite(n) ? `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms` : '-');

const header = [
  'workload', 'ours req/s', 'nginx req/s', 'constant req/s', 'constant-ct req/s', 'ours/nginx',
  'ours/constant', 'ours/constant-ct', 'ours p99', 'nginx p99', 'constant p99', 'constant-ct p99',
];
const rows = [];
for (const [workload, label] of Object.entries(WORKLOADS)) {
  const cells = results[workload];
  if (!cells) continue;
  const name = workload.startsWith('tls-h2') ? `${label} (${meta.streams} streams/conn)` : label;
  rows.push([
    name,
    ...SERVERS.map((s) => int(cells[s]?.median.rps)),
    fixed(ratios[workload].ours_nginx, 2),
    fixed(ratios[workload].ours_constant, 2),
    fixed(ratios[workload].ours_constant_ct, 2),
    ...SERVERS.map((s) => ms(cells[s]?.median.p99_ms)),
  ]);
}
for (const [workload, label] of Object.entries(MEMORY_WORKLOADS)) {
  if (!results[workload]) continue;
  rows.push([
    `${label} (${int(Number(meta.idle_connections))} open)`,
    ...SERVERS.map((s) => fixed(results[workload][s]?.median.kb_per_connection, 1)),
    fixed(ratios[workload].ours_nginx, 2),
    fixed(ratios[workload].ours_constant, 2),
    fixed(ratios[workload].ours_constant_ct, 2),
    '', '', '', '',
  ]);
}

// The same workloads by server CPU: with two cores the load generator often saturates its core
// before a server does, so requests per second of server CPU compare the servers' own costs.
const cpuHeader = [
  'workload', 'ours CPU', 'nginx CPU', 'constant CPU', 'constant-ct CPU', 'ours req/CPU-s',
  'nginx req/CPU-s', 'constant req/CPU-s', 'constant-ct req/CPU-s', 'ours/nginx', 'ours/constant',
  'ours/constant-ct',
];
const cpuRows = [];
for (const [workload, label] of Object.entries(WORKLOADS)) {
  const cells = results[workload];
  if (!cells) continue;
  cpuRows.push([
    label,
    ...SERVERS.map((s) => (Number.isFinite(cells[s]?.median.server_cpu) ? pct(cells[s].median.server_cpu) : '-')),
    ...SERVERS.map((s) => int(cells[s]?.median.rps_per_server_cpu)),
    fixed(ratios[workload].per_server_cpu_ours_nginx, 2),
    fixed(ratios[workload].per_server_cpu_ours_constant, 2),
    fixed(ratios[workload].per_server_cpu_ours_constant_ct, 2),
  ]);
}

const resumed = Number(meta.wrk_resumed);
const serverResumption = SERVERS.map((s) => `${s} ${meta[`${s}_resumes`] === 'yes' ? 'resumes' : 'does not resume'}`).join(', ');
const resumption =
  resumed === 0
    ? `new connections: wrk makes a full handshake every time (none of ${meta.wrk_handshakes} probe handshakes resumed, ${meta.wrk_tls_version}, though nginx offers tickets). Asked by openssl s_client, ${serverResumption} a TLS 1.3 session`
    : `new connections: wrk resumes its previous connection's TLS session (${resumed} of ${meta.wrk_handshakes} probe handshakes against nginx, ${meta.wrk_tls_version}), so that row measures mostly resumed handshakes (ECDHE, no certificate, no signature). Asked by openssl s_client, ${serverResumption} a TLS 1.3 session`;
const workers = (server) => {
  const w = Number(meta[`${server}_workers`]);
  return `tokio multi-thread runtime, ${w} worker thread${w === 1 ? '' : 's'} (${meta[`${server}_threads`]} threads in all)`;
};
const currentThread = (server) => `tokio current-thread runtime (${meta[`${server}_threads`]} threads in all)`;
const preamble = [
  `machine: ${meta.nproc} CPUs, ${meta.cpu}; ${meta.kernel}; ${meta.date}; commit ${meta.commit}`,
  `tools: ${meta.rustc}; nginx ${meta.nginx}; wrk ${meta.wrk}; h2load ${meta.h2load}`,
  `servers on core 0 (taskset -c 0), load generator on core 1. ours: ${workers('ours')}; constant: ${workers('constant')}; constant-ct: ${currentThread('constant-ct')}; nginx: ${meta.nginx_workers} worker process`,
  `median of ${meta.rounds} round(s) of ${meta.duration_s} s each; ${meta.connections} connections; page body ${int(Number(meta.body_bytes))} bytes identity (no Accept-Encoding), ${int(Number(meta.br_bytes))} bytes br (rows marked br: Accept-Encoding: br; the HTTP/2 idle row asks as a browser); p99 is the median of the rounds' p99`,
  `load average (1, 5, 15 min) before the measurements: ${meta.load_before}; after: ${meta.load_after} (other work on the machine skews single rounds)`,
  `ratios: requests/s, ours over the other (above 1: ours is faster); memory row: kB, ours over the other (below 1: ours uses less); CPU table: requests per second of server CPU, ours over the other`,
];
const notes = [
  resumption,
  extraHeaders.length > 0
    ? `headers beyond the service's (nginx cannot drop them): ${[...new Set(extraHeaders.map((e) => e.replace(/^\S+ \S+: /, '').toLowerCase()))].join(', ')} (${[...new Set(extraHeaders.map((e) => e.split(' ')[0]))].join(', ')})`
    : 'every server sends exactly the service\'s headers',
  errorNotes.length > 0 ? `load generator errors: ${errorNotes.join('; ')}` : 'no load generator errors',
  unsaturated.length > 0
    ? `server below ${pct(SATURATED)} of its core (median), so bound by the load generator or other work, not by the server: ${unsaturated.join('; ')}`
    : `every server used at least ${pct(SATURATED)} of its core in every throughput cell (median)`,
];

function textTable(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
function markdownTable(header, rows) {
  const line = (cells) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line)].join('\n');
}
const CPU_TITLE = 'Server CPU (share of core 0) and requests per second of server CPU:';

const markdown = [
  markdownTable(header, rows),
  '',
  CPU_TITLE,
  '',
  markdownTable(cpuHeader, cpuRows),
  '',
  ...preamble.map((p) => `- ${p}`),
  ...notes.map((n) => `- ${n}`),
  '',
].join('\n');
console.log(
  [
    '', ...preamble, '', textTable(header, rows), '', CPU_TITLE, '', textTable(cpuHeader, cpuRows), '',
    ...notes.map((n) => `* ${n}`), '', 'Markdown:', '', markdown,
  ].join('\n'),
);

writeFileSync(mdPath, markdown);
writeFileSync(
  jsonPath,
  `${JSON.stringify(
    {
      machine: { nproc: Number(meta.nproc), cpu: meta.cpu, kernel: meta.kernel, date: meta.date, commit: meta.commit },
      tools: { rustc: meta.rustc, nginx: meta.nginx, wrk: meta.wrk, h2load: meta.h2load },
      settings: {
        rounds: Number(meta.rounds),
        duration_s: Number(meta.duration_s),
        connections: Number(meta.connections),
        h2_streams_per_connection: Number(meta.streams),
        idle_connections: Number(meta.idle_connections),
        body_bytes: Number(meta.body_bytes),
        br_bytes: Number(meta.br_bytes),
      },
      servers: {
        ours: { runtime: 'tokio multi-thread', workers: Number(meta.ours_workers), threads: Number(meta.ours_threads) },
        constant: { runtime: 'tokio multi-thread', workers: Number(meta.constant_workers), threads: Number(meta.constant_threads) },
        'constant-ct': { runtime: 'tokio current-thread', threads: Number(meta['constant-ct_threads']) },
        nginx: { worker_processes: Number(meta.nginx_workers) },
      },
      wrk_session_resumption: {
        probe_handshakes: Number(meta.wrk_handshakes),
        resumed: resumed,
        tls_version: meta.wrk_tls_version,
      },
      server_session_resumption: Object.fromEntries(SERVERS.map((s) => [s, meta[`${s}_resumes`] === 'yes'])),
      load_average: { before: meta.load_before, after: meta.load_after },
      extra_headers: extraHeaders,
      measure_seconds: Number(meta.measure_seconds),
      results,
      ratios,
    },
    null,
    2,
  )}\n`,
);
console.error(`bench/report: wrote ${jsonPath} and ${mdPath}`);
