#!/usr/bin/env node
// What reading a request head costs the service: server CPU per head and per head byte, for a
// browser's head and for the worst heads the default limits let through, on plain HTTP/1.1
// keep-alive connections (the head reader is the same over TLS; TLS would only add its own cost
// per byte to every row). Every head asks for the same page, so each row pays for the same
// answer and what differs is the head.
//
//   browser         a Chromium page request: about 700 bytes, 14 fields
//   empty lines     16 KiB of empty lines before it (skipped, kept nowhere)
//   tiny fields     86 more fields of 4 bytes: 100 fields, the most a head may have
//   field at cap    one more field that fills limits.max_header_bytes (16 KiB) exactly
//   target at cap   a query of limits.max_query_bytes (16 KiB), with an ignored parameter
//   cookie flood    a 64 KiB Cookie value, dropped as it streams by
//
// The service runs on core 0 with one worker, this client on core 1; each row sends heads
// pipelined in batches on CONNECTIONS connections for SECONDS_PER_ROW, and reads server CPU
// from /proc.
// Prints a table and writes HEADS_JSON. The row to watch is the worst ns per byte over the
// browser's: by construction of the head reader, work per byte is constant.
//
//   bench/heads.mjs   SECONDS_PER_ROW=3  HEADS_JSON=target/heads.json
//                     MCP_SANDBOX_PROXY_BIN=path (default: the release binary)
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import net from 'node:net';

const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '..');
const SECONDS = Number(process.env.SECONDS_PER_ROW ?? 3);
const CONNECTIONS = 4;
const BATCH = 16;
const JSON_OUT = resolve(process.env.HEADS_JSON ?? join(ROOT, 'target', 'heads.json'));
const BINARY = process.env.MCP_SANDBOX_PROXY_BIN ?? join(ROOT, 'target', 'release', 'mcp-sandbox-proxy');
const NAME = 'chat.sandbox.test';
const LIMIT = 16 * 1024;
// Bounded: every row is SECONDS long; this stops a hang.
const watchdog = setTimeout(() => { console.error('bench/heads: no result within the watchdog'); process.exit(1); },
  (SECONDS + 20) * 1000 * 8);
watchdog.unref();

if (!existsSync(BINARY)) {
  console.error(`bench/heads: no binary at ${BINARY} (cargo build --release, or set MCP_SANDBOX_PROXY_BIN)`);
  process.exit(1);
}

const QUERY = 'csp=%7B%22connectDomains%22%3A%5B%22https%3A%2F%2Fapi.example.com%22%5D%7D';
const BROWSER_FIELDS = [
  `Host: ${NAME}`,
  'Connection: keep-alive',
  'sec-ch-ua: "Chromium";v="142", "Not_A Brand";v="99"',
  'sec-ch-ua-mobile: ?0',
  'sec-ch-ua-platform: "Linux"',
  'Upgrade-Insecure-Requests: 1',
  'User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36',
  'Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8',
  'Sec-Fetch-Site: cross-site',
  'Sec-Fetch-Mode: navigate',
  'Sec-Fetch-Dest: iframe',
  'Referer: https://chat.example.com/',
  'Accept-Encoding: identity',
  'Accept-Language: en-US,en;q=0.9',
];
const head = (target, fields, before = '') => `${before}GET ${target} HTTP/1.1\r\n${fields.map((f) => `${f}\r\n`).join('')}\r\n`;
const browser = head(`/?${QUERY}`, BROWSER_FIELDS);
const browserFieldBytes = BROWSER_FIELDS.reduce((n, f) => n + f.length + 2, 0) + 2;
const fill = LIMIT - browserFieldBytes - 'X-Fill: \r\n'.length;
const SHAPES = [
  ['browser', browser],
  ['empty lines', head(`/?${QUERY}`, BROWSER_FIELDS, '\r\n'.repeat(LIMIT / 2))],
  ['tiny fields', head(`/?${QUERY}`, [...BROWSER_FIELDS, ...Array.from({ length: 86 }, () => 'a:b')])],
  ['field at cap', head(`/?${QUERY}`, [...BROWSER_FIELDS, `X-Fill: ${'v'.repeat(fill)}`])],
  ['target at cap', head(`/?${QUERY}&x=${'q'.repeat(LIMIT - QUERY.length - 3)}`, BROWSER_FIELDS)],
  ['cookie flood', head(`/?${QUERY}`, [...BROWSER_FIELDS, `Cookie: ${'c=v; '.repeat(64 * 1024 / 5)}`])],
];

const dir = mkdtempSync(join(tmpdir(), 'msp-heads-'));
const config = join(dir, 'proxy.toml');
writeFileSync(config, `listen = "127.0.0.1:0"\nadmin_listen = "127.0.0.1:0"\nwatch_interval = "0s"\n` +
  `[[hosts]]\norigin = "https://chat.example.com"\nsandbox = "${NAME}"\n`);
const child = spawn('taskset', ['-c', '0', BINARY, 'serve', '--config', config], {
  env: { ...process.env, TOKIO_WORKER_THREADS: '1', MCP_SANDBOX_PROXY_LOG_FORMAT: 'json', RUST_LOG: 'warn,mcp_sandbox_proxy::cli=info' },
  stdio: ['ignore', 'ignore', 'pipe'],
});
const port = await new Promise((resolvePort, reject) => {
  child.once('exit', (code) => reject(new Error(`the service exited with ${code}`)));
  createInterface({ input: child.stderr }).on('line', (line) => {
    try {
      const event = JSON.parse(line);
      if (event.message === 'listening') resolvePort(Number(event.listen.split(':').pop()));
    } catch { /* not JSON */ }
  });
});
const ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
function cpuSeconds() {
  const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
}

/** Sends `text` once and returns the answer's bytes: every later answer has as many. */
function probe(text) {
  return new Promise((resolveProbe, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const chunks = [];
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const answer = Buffer.concat(chunks).toString('latin1');
      const end = answer.indexOf('\r\n\r\n');
      const length = /content-length: (\d+)/i.exec(answer);
      if (end >= 0 && length && answer.length >= end + 4 + Number(length[1])) {
        socket.destroy();
        if (!answer.startsWith('HTTP/1.1 200')) reject(new Error(`not a 200: ${answer.slice(0, 200)}`));
        else resolveProbe(end + 4 + Number(length[1]));
      }
    });
    socket.on('error', reject);
    socket.write(text);
  });
}

/** Keeps BATCH heads in flight on one connection until `until`; resolves to heads answered. */
function pump(batch, answerBytes, until) {
  return new Promise((resolvePump, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let answered = 0;
    let pending = 0;
    const send = () => { pending += BATCH * answerBytes; socket.write(batch); };
    socket.on('connect', send);
    socket.on('data', (chunk) => {
      pending -= chunk.length;
      if (pending > 0) return;
      if (pending < 0) reject(new Error('answers of another size: a head was refused'));
      answered += BATCH;
      if (performance.now() < until) send();
      else { socket.destroy(); resolvePump(answered); }
    });
    socket.on('error', reject);
    socket.on('close', () => { if (pending > 0) reject(new Error('closed with answers outstanding')); });
  });
}

const rows = [];
for (const [name, text] of SHAPES) {
  const answerBytes = await probe(text);
  const batch = Buffer.from(text.repeat(BATCH), 'latin1');
  const cpu0 = cpuSeconds();
  const until = performance.now() + SECONDS * 1000;
  const counts = await Promise.all(Array.from({ length: CONNECTIONS }, () => pump(batch, answerBytes, until)));
  const cpu = cpuSeconds() - cpu0;
  const heads = counts.reduce((a, b) => a + b, 0);
  const bytes = Buffer.byteLength(text, 'latin1');
  rows.push({ shape: name, head_bytes: bytes, heads, cpu_s: cpu, us_per_head: (cpu / heads) * 1e6, ns_per_byte: (cpu / heads / bytes) * 1e9 });
}
child.kill('SIGTERM');

const base = rows[0];
const worst = rows.slice(1).reduce((w, r) => (r.ns_per_byte > w.ns_per_byte ? r : w));
console.log('| head | bytes | heads answered | µs CPU per head | ns CPU per byte | per byte / browser |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.shape} | ${r.head_bytes} | ${r.heads} | ${r.us_per_head.toFixed(1)} | ${r.ns_per_byte.toFixed(1)} | ${(r.ns_per_byte / base.ns_per_byte).toFixed(2)} |`);
}
console.log(`worst per byte: ${worst.shape}, ${(worst.ns_per_byte / base.ns_per_byte).toFixed(2)}x the browser's head`);
mkdirSync(dirname(JSON_OUT), { recursive: true });
writeFileSync(JSON_OUT, JSON.stringify({ seconds: SECONDS, connections: CONNECTIONS, batch: BATCH, rows }, null, 2));
process.exit(0);
