// The fault table (run it with tests/faults/run): the release binary on 127.0.0.1, a steady
// loop of good requests, and one fault after another. Each phase is bounded in time, each load
// in count; the run stops by itself. See tests/faults/run for what it checks.
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, renameSync, readFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import https from 'node:https';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';

const QUICK = process.argv.includes('--quick');
const SETTINGS = QUICK
  ? { held: 300, overCap: 100, phaseMs: 3000, attackConnections: 10 }
  : { held: 2000, overCap: 400, phaseMs: 10_000, attackConnections: 30 };
const STREAMS = 100;
const WORKERS = 4;
const NAME = 'chat.sandbox.test';
const BINARY = process.env.MCP_SANDBOX_PROXY_BIN;
const dir = mkdtempSync(join(tmpdir(), 'msp-faults-'));
const lookup = (_host, options, callback) => (options && options.all
  ? callback(null, [{ address: '127.0.0.1', family: 4 }])
  : callback(null, '127.0.0.1', 4));

// A private CA and two leaves signed by it: the swap alternates them, testssl.sh trusts the CA.
function makeCertificates() {
  const run = (args) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  run(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key',
    '-out', 'ca.crt', '-days', '365', '-subj', '/CN=faults test CA', '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  for (const leaf of ['a', 'b']) {
    run(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', `${leaf}.key`,
      '-out', `${leaf}.csr`, '-subj', `/CN=${NAME}`]);
    writeFileSync(join(dir, `${leaf}.ext`), `subjectAltName=DNS:${NAME}\nextendedKeyUsage=serverAuth\n` +
      'crlDistributionPoints=URI:http://127.0.0.1:9/none.crl\n');
    run(['x509', '-req', '-in', `${leaf}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out',
      `${leaf}.crt`, '-days', '200', '-extfile', `${leaf}.ext`]);
  }
  return readFileSync(join(dir, 'ca.crt'));
}

function swapCertificate(leaf) {
  for (const kind of ['crt', 'key']) {
    writeFileSync(join(dir, `next.${kind}`), readFileSync(join(dir, `${leaf}.${kind}`)));
    renameSync(join(dir, `next.${kind}`), join(dir, `tls.${kind}`));
  }
}

async function startService() {
  swapCertificate('a');
  const config = join(dir, 'proxy.toml');
  writeFileSync(config, `listen = "127.0.0.1:0"
admin_listen = "127.0.0.1:0"
watch_interval = "0s"
[tls]
cert = "tls.crt"
key = "tls.key"
[[hosts]]
origin = "https://chat.example.com"
sandbox = "${NAME}"
[limits]
max_connections = ${SETTINGS.held + 64}
handshake_timeout = "30s"
header_read_timeout = "30s"
h2_max_concurrent_streams = ${STREAMS}
shutdown_grace = "20s"
`);
  const child = spawn(BINARY, ['serve', '--config', config], {
    env: { ...process.env, MCP_SANDBOX_PROXY_LOG_FORMAT: 'json', RUST_LOG: 'warn,mcp_sandbox_proxy::cli=info' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines = createInterface({ input: child.stderr });
  const started = await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the service exited with ${code}`)));
    lines.on('line', (line) => {
      try {
        const event = JSON.parse(line);
        if (event.message === 'listening') resolve(event);
      } catch { /* not JSON */ }
    });
  });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, port: Number(started.listen.split(':').pop()), exited };
}

/** The resident set of the service, sampled; the peak is kept per phase. */
function watchMemory(pid) {
  const memory = { peakKiB: 0, phasePeakKiB: 0 };
  const timer = setInterval(() => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const kib = Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
      memory.peakKiB = Math.max(memory.peakKiB, kib);
      memory.phasePeakKiB = Math.max(memory.phasePeakKiB, kib);
    } catch { /* exited */ }
  }, 50);
  return { memory, stop: () => clearInterval(timer) };
}

// The good client: keep-alive HTTPS as a browser's, trusting the test CA. A request on a kept
// connection that the server closed before answering is retried once on a new one, as browsers
// do for idempotent requests; that counts as answered, any other failure as lost.
function goodLoop(port, ca, phaseOf) {
  const stats = { sent: 0, answered: 0, failed: 0, retried: 0, errors: [], latencies: {} };
  let stopping = false;
  const inFlight = new Set();
  const query = `/sandbox.html?csp=${encodeURIComponent(JSON.stringify({ connectDomains: ['https://api.example.com'] }))}`;
  const once = (agent) => new Promise((resolve) => {
    const request = https.get({
      host: NAME, servername: NAME, port, path: query, agent, ca, lookup, headers: { host: NAME },
    }, (response) => {
      response.resume();
      response.on('end', () => resolve({ ok: response.statusCode === 200, status: response.statusCode }));
      response.on('error', (error) => resolve({ ok: false, error }));
    });
    request.setTimeout(15_000, () => request.destroy(new Error('no answer within 15 s')));
    request.on('error', (error) => resolve({ ok: false, error, reused: request.reusedSocket }));
  });
  async function worker() {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
    // Bounded: at most 1 000 000 requests per worker, and it stops when told.
    for (let i = 0; i < 1_000_000 && !stopping; i++) {
      const phase = phaseOf();
      const start = performance.now();
      stats.sent++;
      const done = once(agent).then(async (first) => {
        if (first.ok || !first.reused || first.status) return first;
        stats.retried++;
        return once(agent);
      });
      inFlight.add(done);
      const outcome = await done;
      inFlight.delete(done);
      if (outcome.ok) {
        stats.answered++;
        (stats.latencies[phase] ??= []).push(performance.now() - start);
      } else {
        stats.failed++;
        stats.errors.push(`${phase}: ${outcome.status ?? outcome.error?.message}`);
      }
    }
    agent.destroy();
  }
  const workers = Array.from({ length: WORKERS }, worker);
  return {
    stats,
    // Like a load balancer once readiness flips: no new request, the sent ones complete.
    async stop() {
      stopping = true;
      await Promise.all(workers);
    },
  };
}

/** Clients that connect and never finish a request: half silent TCP, half TLS that drips a head. */
async function holdSlowClients(port, count) {
  const sockets = [];
  for (let i = 0; i < count; i++) {
    if (i % 2 === 0) {
      const socket = net.connect({ host: '127.0.0.1', port });
      socket.on('error', () => {});
      sockets.push(socket);
    } else {
      const socket = tls.connect({ host: '127.0.0.1', port, servername: NAME, rejectUnauthorized: false });
      socket.on('error', () => {});
      let sent = 0;
      const head = `GET / HTTP/1.1\r\nHost: ${NAME}\r\nX-Slow: ${'a'.repeat(200)}`;
      const timer = setInterval(() => {
        if (sent < head.length && !socket.destroyed) socket.write(head[sent++]);
      }, 500);
      socket.on('close', () => clearInterval(timer));
      sockets.push(socket);
    }
    if (i % 100 === 99) await new Promise((r) => setTimeout(r, 10));
  }
  return () => sockets.forEach((s) => s.destroy());
}

/** Connections beyond the cap: they wait in the kernel's backlog; none may disturb the good loop. */
function overTheCap(port, count) {
  const sockets = Array.from({ length: count }, () => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.on('error', () => {});
    return socket;
  });
  return () => sockets.forEach((s) => s.destroy());
}

/**
 * Clients that flood the CSP report endpoint: HTTP/2 connections, each keeping 8 POSTs in
 * flight, every body a batch of 32 reports of origins never sent before. The endpoint's rates
 * refuse most of them unread (429); what is taken fills the bounded table. Bounded: each
 * connection stops after 200 000 posts or when told.
 */
function reportFlood(port, connections) {
  const stats = { posted: 0, taken: 0, refused: 0, other: {} };
  let stopping = false;
  let serial = 0;
  const batch = () => JSON.stringify(Array.from({ length: 32 }, () => ({
    type: 'csp-violation',
    body: { effectiveDirective: 'connect-src', blockedURL: `https://flood${serial++}.example/p?user=secret` },
  })));
  const sessions = Array.from({ length: connections }, () => {
    const session = http2.connect(`https://${NAME}:${port}`, { lookup, rejectUnauthorized: false });
    session.on('error', () => {});
    return session;
  });
  const post = (session) => new Promise((resolve) => {
    const body = batch();
    const stream = session.request({
      ':method': 'POST', ':path': '/csp-report?from=view', ':authority': NAME,
      'content-type': 'application/reports+json', 'content-length': Buffer.byteLength(body),
    });
    stream.on('response', (headers) => {
      const status = headers[':status'];
      if (status === 204) stats.taken++;
      else if (status === 429) stats.refused++;
      else stats.other[status] = (stats.other[status] ?? 0) + 1;
    });
    stream.on('error', () => {});
    stream.on('close', resolve);
    stream.resume();
    stream.end(body);
  });
  const loops = sessions.flatMap((session) => Array.from({ length: 8 }, async () => {
    for (let i = 0; i < 25_000 && !stopping && !session.destroyed; i++) {
      stats.posted++;
      await post(session);
    }
  }));
  return {
    stats,
    async stop() {
      stopping = true;
      await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 5000))]);
      sessions.forEach((s) => s.destroy());
    },
  };
}

/**
 * HTTP/1.1 clients that hide requests in report bodies the service answers before reading: a
 * POST to /csp-report whose media type is refused (415), that names no host (400), or that
 * comes after the connection's burst of reports (429), with part of its declared body; once
 * answered, a pause long enough for a kept connection to rest, then the rest of the body (a
 * page with a policy of the attacker's) and a request after it. Each connection must end after
 * that answer: nothing hidden is served. (A body that stalls until its deadline, 408, is the
 * same seam; the table's 30 s deadline outlasts its phases, so tests/socket.rs holds that one.)
 * Bounded: each client stops after 10 000 attempts or when told.
 */
function hiddenInBodies(port, connections) {
  const stats = { attempts: 0, answered: 0, smuggled: 0, leftOpen: 0, other: {} };
  let stopping = false;
  const hidden = `GET /?csp=${encodeURIComponent(JSON.stringify({ connectDomains: ['https://smuggled.example'] }))} ` +
    `HTTP/1.1\r\nHost: ${NAME}\r\n\r\n`;
  const start = '{"csp-report":{';
  const length = start.length + hidden.length;
  const report = '{"csp-report":{"effective-directive":"img-src","blocked-uri":"https://a.example/"}}';
  const full = `POST /csp-report HTTP/1.1\r\nHost: ${NAME}\r\nContent-Type: application/csp-report\r\n` +
    `Content-Length: ${report.length}\r\n\r\n${report}`;
  const heads = [
    `POST /csp-report HTTP/1.1\r\nHost: ${NAME}\r\nContent-Type: text/plain\r\nContent-Length: ${length}\r\n\r\n`,
    `POST /csp-report HTTP/1.1\r\nContent-Type: application/csp-report\r\nContent-Length: ${length}\r\n\r\n`,
    `${full.repeat(65)}POST /csp-report HTTP/1.1\r\nHost: ${NAME}\r\nContent-Type: application/csp-report\r\nContent-Length: ${length}\r\n\r\n`,
  ];
  const attempt = (head) => new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: NAME, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    let received = '';
    let answered = false;
    const wanted = head.split('HTTP/1.1\r\n').length - 1;
    const timer = setTimeout(() => { stats.leftOpen++; socket.destroy(); }, 5000);
    socket.on('error', () => {});
    socket.on('secureConnect', () => socket.write(head + start));
    socket.on('data', (data) => {
      received += data.toString('latin1');
      const refused = /HTTP\/1\.1 4\d\d[^]*?\r\n\r\n/.test(received);
      if (!answered && (refused || received.split('HTTP/1.1 ').length - 1 >= wanted)) {
        answered = true;
        // Longer than a kept connection idles before it rests.
        setTimeout(() => socket.write(`${hidden}GET / HTTP/1.1\r\nHost: ${NAME}\r\n\r\n`, () => {}), 150);
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
      const last = statuses.at(-1);
      const before = statuses.slice(0, -1);
      if (received.includes('smuggled.example') || statuses.some((s) => s === 200)) stats.smuggled++;
      else if ([400, 415, 429].includes(last) && before.every((s) => s === 204)) stats.answered++;
      else stats.other[statuses.join(',') || 'none'] = (stats.other[statuses.join(',') || 'none'] ?? 0) + 1;
      resolve();
    });
  });
  const loops = Array.from({ length: connections }, async (_, c) => {
    for (let i = 0; i < 10_000 && !stopping; i++) {
      stats.attempts++;
      await attempt(heads[(c + i) % heads.length]);
    }
  });
  return {
    stats,
    async stop() {
      stopping = true;
      await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 6000))]);
    },
  };
}

/** Certificates swapped and SIGHUP sent every 200 ms for the phase. */
function reloadStorm(child) {
  let leaf = 'a';
  const timer = setInterval(() => {
    leaf = leaf === 'a' ? 'b' : 'a';
    swapCertificate(leaf);
    child.kill('SIGHUP');
  }, 200);
  return () => clearInterval(timer);
}

/** The attack of issue 9: HTTP/2 connections, every stream a different heavy page, no window. */
function closedWindows(port, connections) {
  const sessions = [];
  for (let c = 0; c < connections; c++) {
    const session = http2.connect(`https://${NAME}:${port}`, {
      lookup, rejectUnauthorized: false, settings: { initialWindowSize: 0 }, maxHeaderListPairs: 4096,
      maxSessionMemory: 64,
    });
    session.on('error', () => {});
    for (let s = 0; s < STREAMS; s++) {
      const domains = Array.from({ length: 300 }, (_, i) => `https://cdn${i}-${c}-${s}.example.com`);
      const path = `/?csp=${encodeURIComponent(JSON.stringify({ resourceDomains: domains }))}`;
      const stream = session.request({ ':path': path, ':authority': NAME });
      stream.on('error', () => {});
    }
    sessions.push(session);
  }
  return () => sessions.forEach((s) => s.destroy());
}

/**
 * Clients that send the costliest heads the limits let through, each at 2 Mbit/s (what kept a
 * core busy when a head's cost grew with the square of its length), or that stream bare CRs
 * into a head at that rate until it is refused, then connect again: a head's cost per byte must
 * stay that of any head, so the good loop must not notice them.
 */
const WORST_HEAD_BYTES_PER_TICK = 12_800; // every 50 ms: 256 KiB/s, 2 Mbit/s per client
function worstHeads(port, connections) {
  const fields = [`Host: ${NAME}`, 'Accept: */*'];
  const head = (before, extra) => `${before}GET / HTTP/1.1\r\n${[...fields, ...extra].map((f) => `${f}\r\n`).join('')}\r\n`;
  const shapes = [
    head('\r\n'.repeat(8192), []),
    head('', Array.from({ length: 98 }, () => 'a:b')),
    head('', [`X-Fill: ${'v'.repeat(16 * 1024 - 64)}`]),
    head('', [`Cookie: ${'c=v; '.repeat(16 * 1024)}`]),
  ];
  let stopping = false;
  const sockets = new Set();
  function connect(i) {
    if (stopping) return;
    const socket = tls.connect({ host: '127.0.0.1', port, servername: NAME, rejectUnauthorized: false });
    sockets.add(socket);
    const bareCrs = i % (shapes.length + 1) === shapes.length;
    const text = bareCrs ? '\r'.repeat(WORST_HEAD_BYTES_PER_TICK) : shapes[i % (shapes.length + 1)];
    const repeat = Math.max(1, Math.round(WORST_HEAD_BYTES_PER_TICK / text.length));
    const tick = Buffer.from(text.repeat(repeat), 'latin1');
    let timer;
    socket.on('secureConnect', () => {
      if (bareCrs) socket.write(`GET / HTTP/1.1\r\nHost: ${NAME}\r\n`);
      timer = setInterval(() => { if (!socket.destroyed && socket.writableLength < 1 << 20) socket.write(tick); }, 50);
    });
    socket.resume();
    socket.on('error', () => {});
    // Refused (the bare CRs) or cut: again, after a pause, until the phase ends.
    socket.on('close', () => { clearInterval(timer); sockets.delete(socket); setTimeout(() => connect(i), 50); });
  }
  for (let i = 0; i < connections; i++) connect(i);
  return () => { stopping = true; sockets.forEach((s) => s.destroy()); };
}

/**
 * Clients that take every free slot of the cap and hold it as cheaply as they can: one
 * request, then one byte of the next head, and another byte well within the header deadline.
 * Meanwhile `newClients` measures what a browser opening a new connection gets.
 */
function holdTheCap(port, connections) {
  const sockets = [];
  const timers = [];
  for (let i = 0; i < connections; i++) {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: NAME, rejectUnauthorized: false });
    socket.on('error', () => {});
    socket.resume();
    socket.on('secureConnect', () => socket.write(`GET /nowhere HTTP/1.1\r\nHost: ${NAME}\r\n\r\n`));
    // Once answered, the first byte of the next head, on its own, then one byte per 20 s.
    socket.once('data', () => {
      const head = `GET / HTTP/1.1\r\nHost: ${NAME}\r\nX: ${'a'.repeat(64)}`;
      let sent = 0;
      const drip = () => { if (!socket.destroyed && sent < head.length) socket.write(head[sent++]); };
      setTimeout(drip, 50);
      timers.push(setInterval(drip, 20_000));
    });
    sockets.push(socket);
  }
  return () => { timers.forEach(clearInterval); sockets.forEach((s) => s.destroy()); };
}

/**
 * Clients that take every free slot of the cap and send nothing a request could start with:
 * silent TCP, five bytes of a ClientHello, or a TLS handshake (ALPN h2) followed by `PRI *` or
 * by the bare HTTP/2 preface; each one closed connects again after 20 ms, so the cap stays
 * full for the phase.
 */
const PARTIAL_CLIENT_HELLO = Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00]);
const AFTER_HANDSHAKE = ['PRI *', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'];
function holdTheCapSilently(port, connections) {
  let stopping = false;
  const sockets = new Set();
  function connect(i) {
    if (stopping) return;
    const shape = i % 4;
    let socket;
    if (shape < 2) {
      socket = net.connect({ host: '127.0.0.1', port });
      if (shape === 1) socket.on('connect', () => socket.write(PARTIAL_CLIENT_HELLO));
    } else {
      socket = tls.connect({ host: '127.0.0.1', port, servername: NAME, rejectUnauthorized: false, ALPNProtocols: ['h2'] });
      socket.on('secureConnect', () => socket.write(AFTER_HANDSHAKE[shape - 2]));
    }
    sockets.add(socket);
    socket.resume();
    socket.on('error', () => {});
    socket.on('close', () => { sockets.delete(socket); setTimeout(() => connect(i), 20); });
  }
  for (let i = 0; i < connections; i++) connect(i);
  return () => { stopping = true; sockets.forEach((s) => s.destroy()); };
}

/**
 * A new connection per request, one at a time, for the phase: what a new browser gets. Stop it
 * before the hold it measures ends, so that every request it sent was sent and answered (or
 * not) while the hold lasted.
 */
function newClients(port, ca) {
  const stats = { sent: 0, answered: 0, failed: 0, latencies: [], errors: [] };
  let stopping = false;
  const query = '/sandbox.html';
  const once = () => new Promise((resolve) => {
    const request = https.get({ host: NAME, servername: NAME, port, path: query, agent: false, ca, lookup, headers: { host: NAME } },
      (response) => { response.resume(); response.on('end', () => resolve(response.statusCode === 200 ? null : `status ${response.statusCode}`)); });
    request.setTimeout(15_000, () => request.destroy(new Error('no answer within 15 s')));
    request.on('error', (error) => resolve(error.message));
  });
  const done = (async () => {
    // Bounded: at most 10 000 requests, and it stops when told.
    for (let i = 0; i < 10_000 && !stopping; i++) {
      const start = performance.now();
      stats.sent++;
      const error = await once();
      if (error) { stats.failed++; stats.errors.push(error); } else { stats.answered++; stats.latencies.push(performance.now() - start); }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return { stats, stop: async () => { stopping = true; await done; } };
}

function p99(values = []) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
}

function testssl(port) {
  const json = join(dir, 'testssl.json');
  const run = spawnSyncQuiet('testssl', ['--quiet', '--color', '0', '--warnings', 'off', '--ip', '127.0.0.1',
    '--add-ca', join(dir, 'ca.crt'), '--jsonfile', json, `${NAME}:${port}`]);
  const findings = JSON.parse(readFileSync(json, 'utf8'));
  // LOW and below pass. Two notes above LOW are choices, explained in docs/operations.md: the
  // cipher order (the client's is kept: every suite offered is strong, as Mozilla advises),
  // and BREACH, which testssl.sh reports for any compressed answer; BREACH needs a secret in
  // the compressed body beside the attacker's input, and the page holds none (no cookie, no
  // token: the same bytes for everyone who asks for that URL).
  const expected = ['cipher_order', 'BREACH'];
  const worse = findings.filter((f) => ['MEDIUM', 'HIGH', 'CRITICAL'].includes(f.severity) && !expected.includes(f.id));
  const noted = (id) => findings.find((f) => f.id === id)?.severity;
  return { status: run, worse, cipherOrder: noted('cipher_order'), breach: noted('BREACH') };
}

function spawnSyncQuiet(command, args) {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 300_000 });
    return 0;
  } catch (error) {
    return error.status ?? -1;
  }
}

const ca = makeCertificates();
const service = await startService();
const watcher = watchMemory(service.child.pid);
let phase = 'no fault';
const good = goodLoop(service.port, ca, () => phase);
const rows = [];
async function runPhase(name, start) {
  phase = name;
  watcher.memory.phasePeakKiB = 0;
  const before = { ...good.stats };
  const stop = start ? await start() : () => {};
  await new Promise((r) => setTimeout(r, SETTINGS.phaseMs));
  rows.push({
    phase: name,
    sent: good.stats.sent - before.sent,
    answered: good.stats.answered - before.answered,
    failed: good.stats.failed - before.failed,
    p99: p99(good.stats.latencies[name]),
    peakMiB: watcher.memory.phasePeakKiB / 1024,
  });
  await stop();
}

await runPhase('no fault');
let releaseHeld;
await runPhase(`${SETTINGS.held} slow or silent clients held`, async () => {
  releaseHeld = await holdSlowClients(service.port, SETTINGS.held);
  return () => {};
});
await runPhase(`${SETTINGS.overCap} connections over the cap`, () => overTheCap(service.port, SETTINGS.overCap));
releaseHeld();
await runPhase('certificate swaps and SIGHUP every 200 ms', () => reloadStorm(service.child));
await runPhase(`${SETTINGS.attackConnections} HTTP/2 connections × ${STREAMS} streams, windows closed`,
  () => closedWindows(service.port, SETTINGS.attackConnections));
let capProbe;
await runPhase(`every free slot of the cap held with one byte of a head, a byte per 20 s`, async () => {
  const stopHolding = holdTheCap(service.port, SETTINGS.held + 64 - WORKERS);
  await new Promise((r) => setTimeout(r, 1500));
  capProbe = newClients(service.port, ca);
  return async () => { await capProbe.stop(); stopHolding(); };
});
let silentProbe;
await runPhase('every free slot of the cap held by silent TCP, 5 bytes of a ClientHello, or TLS then `PRI *` or the h2 preface, kept up', async () => {
  const stopHolding = holdTheCapSilently(service.port, SETTINGS.held + 64 - WORKERS);
  await new Promise((r) => setTimeout(r, 1500));
  silentProbe = newClients(service.port, ca);
  return async () => { await silentProbe.stop(); stopHolding(); };
});
await runPhase(`${SETTINGS.attackConnections} clients sending the worst heads the limits allow, 2 Mbit/s each`,
  () => worstHeads(service.port, SETTINGS.attackConnections));
let flood;
await runPhase(`${SETTINGS.attackConnections} HTTP/2 clients flooding the CSP report endpoint, 8 batches of 32 new origins in flight each`, () => {
  flood = reportFlood(service.port, SETTINGS.attackConnections);
  return () => flood.stop();
});
let hiding;
await runPhase(`${SETTINGS.attackConnections} HTTP/1.1 clients hiding requests in report bodies answered before they are read`, () => {
  hiding = hiddenInBodies(service.port, SETTINGS.attackConnections);
  return () => hiding.stop();
});
await runPhase('after the faults');
const scan = testssl(service.port);
// SIGTERM: the loop stops sending (as a load balancer does once readiness flips), what was sent
// completes, and the process exits 0 within its grace.
const drained = good.stop();
service.child.kill('SIGTERM');
await drained;
const exitCode = await Promise.race([service.exited, new Promise((r) => setTimeout(() => r('no exit within 30 s'), 30_000))]);
watcher.stop();

const total = { sent: good.stats.sent, answered: good.stats.answered, failed: good.stats.failed };
const table = [
  '| phase | good sent | answered | failed | p99 ms | peak RSS MiB |',
  '|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.phase} | ${r.sent} | ${r.answered} | ${r.failed} | ${r.p99.toFixed(1)} | ${r.peakMiB.toFixed(1)} |`),
  `| SIGTERM drain, then exit ${exitCode} | ${total.sent} in all | ${total.answered} | ${total.failed} | | ${(watcher.memory.peakKiB / 1024).toFixed(1)} overall |`,
];
console.log(table.join('\n'));
console.log(`requests retried once on a kept connection closed by the server: ${good.stats.retried}`);
const cap = capProbe.stats;
const silent = silentProbe.stats;
const probeLine = (what, stats) => `new connections while ${what}: ${stats.sent} sent, ${stats.answered} answered, ${stats.failed} failed, p99 ${p99(stats.latencies).toFixed(0)} ms`;
console.log(probeLine('the cap was held', cap));
console.log(probeLine('the cap was held by silent connections', silent));
const floodStats = flood.stats;
console.log(`CSP report flood: ${floodStats.posted} posted, ${floodStats.taken} taken (204), ${floodStats.refused} refused over the rates (429), other answers ${JSON.stringify(floodStats.other)}`);
const hid = hiding.stats;
console.log(`requests hidden in report bodies: ${hid.attempts} attempts, ${hid.answered} answered once and closed, ${hid.smuggled} with more answered, ${hid.leftOpen} left open, other ${JSON.stringify(hid.other)}`);
console.log(`testssl.sh: cipher order ${scan.cipherOrder}, BREACH ${scan.breach}; other findings worse than LOW: ${scan.worse.length}`);
for (const f of scan.worse) console.log(`  ${f.severity} ${f.id}: ${f.finding}`);
mkdirSync('target', { recursive: true });
writeFileSync('target/faults.json', JSON.stringify({ settings: SETTINGS, rows, total, retried: good.stats.retried, capProbe: { ...cap, latencies: undefined, p99: p99(cap.latencies) }, silentProbe: { ...silent, latencies: undefined, p99: p99(silent.latencies) }, reportFlood: flood.stats, hiddenInBodies: hiding.stats, exitCode, peakKiB: watcher.memory.peakKiB, testssl: scan }, null, 2));

const problems = [];
if (total.failed > 0 || total.sent !== total.answered) problems.push(`good requests lost: ${good.stats.errors.slice(0, 10).join('; ')}`);
if (cap.failed > 0 || cap.answered === 0) problems.push(`new clients not served while the cap was held: ${cap.errors.slice(0, 5).join('; ')}`);
if (silent.failed > 0 || silent.answered === 0) problems.push(`new clients not served while silent connections held the cap: ${silent.errors.slice(0, 5).join('; ')}`);
if (floodStats.taken === 0 || floodStats.refused === 0 || Object.keys(floodStats.other).length > 0) {
  problems.push(`the report endpoint under a flood: ${floodStats.taken} taken, ${floodStats.refused} refused, other ${JSON.stringify(floodStats.other)}`);
}
if (hid.answered === 0 || hid.smuggled > 0 || hid.leftOpen > 0 || Object.keys(hid.other).length > 0) {
  problems.push(`requests hidden in report bodies: ${hid.answered} answered once, ${hid.smuggled} with more answered, ${hid.leftOpen} left open, other ${JSON.stringify(hid.other)}`);
}
if (exitCode !== 0) problems.push(`the drain ended with ${exitCode}`);
if (scan.worse.length > 0) problems.push('testssl.sh found more than LOW');
console.log(problems.length ? `faults: FAILED: ${problems.join(' | ')}` : 'faults: passed');
process.exit(problems.length ? 1 : 0);
