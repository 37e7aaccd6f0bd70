// Releases, as a security team checks one before running it (docs/releases.md):
// - scripts/release's artifacts are in SHA256SUMS; the binary is static and carries its dependency
//   list, the same packages as the SBOM, each at Cargo.lock's version (and checksum); the image
//   holds exactly that binary and says where it comes from;
// - reproducible: the crate's own tarball, unpacked elsewhere and built later, gives the same
//   binary, and a second scripts/release the same bytes for every artifact;
// - `cargo package --locked` packs what the binary is built from and none of the tests, benches
//   or deployment files, and `cargo install --path .` gives the same service.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync, gunzipSync } from 'node:zlib';
import { ROOT } from '../deploy/tools.mjs';

const TARGET = `${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-unknown-linux-gnu`;
const VERSION = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8').match(/^version = "(.+)"$/m)[1];
const NAME = `mcp-sandbox-proxy-${VERSION}`;
const BINARY = `${NAME}-${TARGET}`;
const SBOM = `${NAME}.cdx.json`;
const IMAGE = `${NAME}-${TARGET}.oci.tar`;

const run = (command, args, options = {}) => execFileSync(command, args, {
  encoding: 'utf8', cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20, ...options,
});
const sha256 = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
/** A fresh directory, removed when the suite ends (the builds in them are large). */
const temporaries = [];
const temporary = (prefix) => {
  const dir = mkdtempSync(join(tmpdir(), `msp-${prefix}-`));
  temporaries.push(dir);
  return dir;
};
after(() => { for (const dir of temporaries) rmSync(dir, { recursive: true, force: true }); });
const git = (...args) => run('git', args).trim();

/** scripts/release into a fresh directory; the directory. */
function release() {
  const dist = temporary('dist');
  run(join(ROOT, 'scripts', 'release'), [], { env: { ...process.env, DIST: dist } });
  return dist;
}

/** Cargo.lock's packages, as `name@version` → checksum (none for the crate itself). */
function lockedPackages() {
  const packages = new Map();
  for (const block of readFileSync(join(ROOT, 'Cargo.lock'), 'utf8').split('[[package]]').slice(1)) {
    const field = (key) => block.match(new RegExp(`^${key} = "(.+)"$`, 'm'))?.[1];
    packages.set(`${field('name')}@${field('version')}`, field('checksum'));
  }
  return packages;
}

/** The dependency list cargo auditable embeds: section .dep-v0, zlib-compressed JSON. */
function embeddedDependencies(binary) {
  const dir = temporary('deps');
  run('objcopy', ['--dump-section', `.dep-v0=${join(dir, 'deps.z')}`, binary, join(dir, 'copy')]);
  return JSON.parse(inflateSync(readFileSync(join(dir, 'deps.z'))).toString('utf8'));
}

/** Files of a tar archive (plain or gzip), by name; directories left out. */
function tarFiles(bytes) {
  const data = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
  const files = new Map();
  let pax = {};
  for (let at = 0; at + 512 <= data.length && data[at] !== 0;) {
    const field = (offset, length) => data.subarray(at + offset, at + offset + length).toString('latin1').replace(/\0.*$/s, '');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const body = data.subarray(at + 512, at + 512 + size);
    if (type === 'x') {
      pax = Object.fromEntries([...body.toString('utf8').matchAll(/^\d+ ([^=]+)=(.*)$/gm)].map((m) => [m[1], m[2]]));
    } else {
      const name = (pax.path ?? `${field(345, 155) ? `${field(345, 155)}/` : ''}${field(0, 100)}`).replace(/^\.\//, '');
      if (type === '0' || type === '') files.set(name, body);
      pax = {};
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}

let dist;
before(() => { dist = release(); }, { timeout: 900_000 });

it('every artifact is in SHA256SUMS and verifies', () => {
  const sums = readFileSync(join(dist, 'SHA256SUMS'), 'utf8');
  const listed = sums.trim().split('\n').map((line) => line.split(/\s+/)[1]).sort();
  assert.deepEqual(listed, [BINARY, SBOM, IMAGE].sort());
  assert.deepEqual(readdirSync(dist).sort(), [...listed, 'SHA256SUMS'].sort(), 'nothing else in the release');
  run('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: dist });
});

it('the binary is static, says its version and commit, and carries its dependency list', () => {
  const binary = join(dist, BINARY);
  const ldd = (() => { try { return run('ldd', [binary]); } catch (e) { return `${e.stdout}${e.stderr}`; } })();
  assert.match(ldd, /statically linked|not a dynamic executable/, ldd);
  assert.equal(run(binary, ['--version']).trim(), `mcp-sandbox-proxy ${VERSION} (${git('rev-parse', '--short=12', 'HEAD')})`);
  assert.match(run('readelf', ['-p', '.comment', binary]), /rustc version \d+\.\d+\.\d+/, 'the binary names its toolchain');
  for (const path of [ROOT, process.env.HOME, tmpdir()]) {
    assert.ok(!readFileSync(binary).includes(Buffer.from(`${path}/`)), `the binary names ${path}`);
  }

  const embedded = embeddedDependencies(binary);
  const root = embedded.packages.filter((p) => p.root);
  assert.deepEqual(root.map((p) => `${p.name}@${p.version}`), [`mcp-sandbox-proxy@${VERSION}`]);
  const locked = lockedPackages();
  for (const p of embedded.packages) {
    assert.ok(locked.has(`${p.name}@${p.version}`), `${p.name}@${p.version} is not in Cargo.lock`);
  }
  for (const crate of ['rustls', 'ring', 'hyper', 'h2', 'tokio']) {
    assert.ok(embedded.packages.some((p) => p.name === crate && p.source === 'crates.io'), crate);
  }
});

it('the SBOM lists the packages the binary carries, at Cargo.lock\'s versions and checksums', () => {
  const sbom = JSON.parse(readFileSync(join(dist, SBOM), 'utf8'));
  assert.equal(sbom.bomFormat, 'CycloneDX');
  assert.equal(sbom.specVersion, '1.5');
  const crate = sbom.metadata.component;
  assert.equal(`${crate.name}@${crate.version}`, `mcp-sandbox-proxy@${VERSION}`);
  assert.deepEqual(crate.licenses, [{ expression: 'MIT OR Apache-2.0' }]);
  assert.equal(sbom.metadata.timestamp.slice(0, 19), new Date(Number(git('log', '-1', '--format=%ct')) * 1000).toISOString().slice(0, 19),
    'dated by the commit, not by the build');
  assert.ok(!JSON.stringify(sbom).includes(ROOT), 'no path of this machine');

  const listed = new Set(sbom.components.map((c) => `${c.name}@${c.version}`));
  const carried = new Set(embeddedDependencies(join(dist, BINARY)).packages.filter((p) => !p.root).map((p) => `${p.name}@${p.version}`));
  assert.deepEqual([...listed].sort(), [...carried].sort(), 'the SBOM and the binary name the same packages');
  const locked = lockedPackages();
  for (const component of sbom.components) {
    const key = `${component.name}@${component.version}`;
    const hash = component.hashes?.find((h) => h.alg === 'SHA-256')?.content;
    assert.equal(hash, locked.get(key), `${key}: the SBOM's hash is Cargo.lock's checksum`);
    assert.equal(component.purl, `pkg:cargo/${key}`);
  }
});

it('the image holds exactly the binary, says where it comes from, and podman loads it', (t) => {
  const archive = tarFiles(readFileSync(join(dist, IMAGE)));
  const blob = (digest) => archive.get(`blobs/sha256/${digest.replace('sha256:', '')}`);
  const index = JSON.parse(archive.get('index.json'));
  assert.equal(index.manifests.length, 1);
  const manifest = JSON.parse(blob(index.manifests[0].digest));
  const config = JSON.parse(blob(manifest.config.digest));
  assert.equal(config.architecture, process.arch === 'arm64' ? 'arm64' : 'amd64');
  const labels = config.config.Labels;
  const commitTime = new Date(Number(git('log', '-1', '--format=%ct')) * 1000).toISOString().replace('.000', '');
  assert.equal(labels['org.opencontainers.image.version'], VERSION);
  assert.equal(labels['org.opencontainers.image.revision'], git('rev-parse', 'HEAD'));
  assert.equal(labels['org.opencontainers.image.created'], commitTime);
  assert.equal(labels['org.opencontainers.image.licenses'], 'MIT OR Apache-2.0');
  assert.match(labels['org.opencontainers.image.source'], /^https:\/\/github\.com\//);
  assert.equal(config.created, commitTime);

  assert.equal(manifest.layers.length, 1, 'one layer');
  const files = tarFiles(blob(manifest.layers[0].digest));
  assert.deepEqual([...files.keys()], ['mcp-sandbox-proxy'], 'the layer holds the binary only');
  assert.equal(createHash('sha256').update(files.get('mcp-sandbox-proxy')).digest('hex'), sha256(join(dist, BINARY)),
    'the released binary, byte for byte');

  const podman = ['--storage-driver', 'vfs'];
  const loaded = run('podman', [...podman, 'load', '--input', join(dist, IMAGE)]);
  const tag = loaded.match(/Loaded image: (\S+)/)?.[1];
  assert.equal(tag, `localhost/mcp-sandbox-proxy:${VERSION}`, loaded);
  t.after(() => { try { run('podman', [...podman, 'rmi', '-f', tag]); } catch { /* gone already */ } });
  const [inspected] = JSON.parse(run('podman', [...podman, 'image', 'inspect', tag]));
  assert.equal(inspected.Id, manifest.config.digest.replace('sha256:', ''));
});

it('a second release gives the same bytes for every artifact', { timeout: 900_000 }, () => {
  const again = release();
  assert.equal(readFileSync(join(again, 'SHA256SUMS'), 'utf8'), readFileSync(join(dist, 'SHA256SUMS'), 'utf8'));
});

it('cargo package packs what the binary is built from, and its tarball builds the same binary elsewhere', { timeout: 900_000 }, (t) => {
  // A working tree with changes (while working) is packed as it is; CI packs a clean checkout.
  const dirty = git('status', '--porcelain') !== '';
  const args = ['package', '--locked', '--no-verify', ...(dirty ? ['--allow-dirty'] : [])];
  const listing = run('cargo', [...args, '--list']).trim().split('\n');
  for (const file of ['build.rs', 'Cargo.lock', 'src/main.rs', 'src/minify.rs', 'proxy-page/sandbox.html',
    'proxy-page/relay/00-state.js', 'config/default.toml', 'demo/host.html', 'scripts/build', 'LICENSE-MIT', 'LICENSE-APACHE', 'SECURITY.md']) {
    assert.ok(listing.includes(file), `the package holds ${file}`);
  }
  for (const file of listing) {
    assert.doesNotMatch(file, /^(tests|bench|fuzz|deploy|node_modules|target|signer|\.ci)\/|^(package(-lock)?\.json|Dockerfile|deny\.toml)$/, `the package holds ${file}`);
  }
  // Clean: cargo says nothing but that it leaves the tests out (they are not packed).
  const packing = spawnSync('cargo', args, { cwd: ROOT, encoding: 'utf8' });
  assert.equal(packing.status, 0, packing.stderr);
  const warnings = packing.stderr.split('\n').filter((line) => line.startsWith('warning:'))
    .filter((line) => !/^warning: ignoring test `\w+` as `tests\/(\w+\.rs|\w+\/main\.rs)` is not included in the published package$/.test(line));
  assert.deepEqual(warnings, [], packing.stderr);

  const unpacked = temporary('crate');
  run('tar', ['-xzf', join(ROOT, 'target', 'package', `${NAME}.crate`), '-C', unpacked]);
  const crate = join(unpacked, NAME);
  const built = run(join(crate, 'scripts', 'build'), [TARGET], {
    cwd: crate, env: { ...process.env, CARGO_TARGET_DIR: join(unpacked, 'target') },
  }).trim();
  t.diagnostic(`built from the tarball in ${crate}: ${built}`);
  assert.equal(run(built, ['--version']).trim(), run(join(dist, BINARY), ['--version']).trim(),
    'the tarball knows its commit (.cargo_vcs_info.json)');
  assert.equal(sha256(built), sha256(join(dist, BINARY)), 'the same bytes from the tarball, in another directory, later');
});

// A debug install in the checkout's own target directory: it shares the build `cargo test` made
// (the rust layer), so the install path is proven without compiling the crate a fourth time; a
// release profile changes how fast the service runs, not what it answers.
it('cargo install --path . gives the same service', { timeout: 900_000 }, async () => {
  const root = temporary('install');
  run('cargo', ['install', '--locked', '--quiet', '--debug', '--path', ROOT, '--root', root], {
    env: { ...process.env, CARGO_TARGET_DIR: join(ROOT, 'target') },
  });
  const installed = join(root, 'bin', 'mcp-sandbox-proxy');
  const released = join(dist, BINARY);
  assert.equal(run(installed, ['--version']).trim(), run(released, ['--version']).trim());
  const [ours, theirs] = [await servedPage(released), await servedPage(installed)];
  assert.equal(ours.status, 200);
  assert.deepEqual(theirs, ours, 'the same status, headers and page');
});

/** Serves a one-host config with `binary` on a free port; the page's status, headers, body. */
async function servedPage(binary) {
  const dir = temporary('serve');
  writeFileSync(join(dir, 'config.toml'), 'listen = "127.0.0.1:0"\n[[hosts]]\norigin = "https://chat.example.com"\nsandbox = "chat.sandbox.test"\n');
  const child = spawn(binary, ['serve', '--config', join(dir, 'config.toml'), '--log-format', 'json'], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const address = await new Promise((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => reject(new Error(`no "listening" from ${binary}: ${seen}`)), 20_000);
      child.stderr.on('data', (chunk) => {
        seen += chunk;
        const listening = seen.split('\n').map((line) => { try { return JSON.parse(line); } catch { return {}; } })
          .find((event) => event.message === 'listening');
        if (listening) { clearTimeout(timer); resolve(listening.listen); }
      });
    });
    const [host, port] = [address.slice(0, address.lastIndexOf(':')), address.slice(address.lastIndexOf(':') + 1)];
    return await new Promise((resolve, reject) => {
      const query = `/?csp=${encodeURIComponent('{"connectDomains":["https://api.example.com"]}')}`;
      request({ host, port, path: query, headers: { host: 'chat.sandbox.test', 'accept-encoding': 'br' } }, (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => {
          const { date: _date, ...headers } = response.headers;
          resolve({ status: response.statusCode, headers, body: Buffer.concat(chunks).toString('base64') });
        });
      }).on('error', reject).end();
    });
  } finally {
    child.kill('SIGTERM');
  }
}
