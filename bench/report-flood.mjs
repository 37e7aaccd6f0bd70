#!/usr/bin/env node
// What a refused CSP report costs, beside other refused requests: CONNECTIONS HTTP/2 clients,
// STREAMS requests in flight each, flood a bare service for PHASE_S seconds per kind, the kinds
// alternating for ROUNDS rounds in one run: report batches (32 reports of new origins each:
// nearly all refused over the rates, 429), the same bodies with a media type the endpoint does
// not take (415), and GETs of a path that is no page (404, no body).
//
//   bench/report-flood.mjs    CONNECTIONS=10 STREAMS=8 PHASE_S=3 ROUNDS=2
//                             MCP_SANDBOX_PROXY_BIN=path (default: the static release binary)
//
// Everything listens on 127.0.0.1; each phase is bounded in time and the run stops by itself.
import http2 from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { startProxy, freePort } from '../tests/browser/harness.mjs';

const env = (name, fallback) => Number(process.env[name] ?? fallback);
const CONNECTIONS = env('CONNECTIONS', 10);
const STREAMS = env('STREAMS', 8);
const PHASE_S = env('PHASE_S', 3);
const ROUNDS = env('ROUNDS', 2);
const NAME = 'chat.sandbox.test';

let serial = 0;
const batch = () => JSON.stringify(Array.from({ length: 32 }, () => ({
  type: 'csp-violation',
  body: { effectiveDirective: 'connect-src', blockedURL: `https://flood${serial++}.example/p` },
})));
const post = (type) => () => {
  const body = batch();
  return [{ ':method': 'POST', ':path': '/csp-report?from=view', ':authority': NAME,
    'content-type': type, 'content-length': Buffer.byteLength(body) }, body];
};
const KINDS = {
  'report (429)': post('application/reports+json'),
  'wrong media type (415)': post('text/plain'),
  'GET, no page (404)': () => [{ ':path': '/favicon.ico', ':authority': NAME }, null],
};

async function flood(port, request) {
  const statuses = {};
  let answered = 0;
  let stopping = false;
  const sessions = Array.from({ length: CONNECTIONS }, () => {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => {});
    return session;
  });
  const one = (session) => new Promise((resolve) => {
    const [headers, body] = request();
    const stream = session.request(headers);
    stream.on('response', (h) => { statuses[h[':status']] = (statuses[h[':status']] ?? 0) + 1; answered++; });
    stream.on('error', () => {});
    stream.on('close', resolve);
    stream.resume();
    stream.end(body ?? undefined);
  });
  const started = performance.now();
  const loops = sessions.flatMap((session) => Array.from({ length: STREAMS }, async () => {
    while (!stopping) await one(session);
  }));
  await sleep(PHASE_S * 1000);
  stopping = true;
  await Promise.all(loops);
  const seconds = (performance.now() - started) / 1000;
  sessions.forEach((s) => s.destroy());
  return { perSecond: answered / seconds, statuses };
}

const port = await freePort();
const proxy = await startProxy(`listen = "127.0.0.1:${port}"\nwatch_interval = "0s"\n` +
  `[[hosts]]\norigin = "https://chat.example.com"\nsandbox = "${NAME}"\n`);
const results = Object.fromEntries(Object.keys(KINDS).map((kind) => [kind, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [kind, request] of Object.entries(KINDS)) {
    const { perSecond, statuses } = await flood(port, request);
    results[kind].push(perSecond);
    console.log(`round ${round + 1}: ${kind}: ${Math.round(perSecond)} answers/s ${JSON.stringify(statuses)}`);
  }
}
await proxy.stop();
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const base = median(results['GET, no page (404)']);
console.log('\n| flood | answers/s (median) | / GET 404 |\n|---|---:|---:|');
for (const [kind, values] of Object.entries(results)) {
  console.log(`| ${kind} | ${Math.round(median(values))} | ${(median(values) / base).toFixed(2)} |`);
}
