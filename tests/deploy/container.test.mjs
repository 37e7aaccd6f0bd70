// The runtime stage of the Dockerfile, built with podman from the locally built static binary
// (the build stage needs a registry this machine cannot reach), then inspected: one static
// binary and nothing else, a numeric non-root user, SIGTERM, no HEALTHCHECK, OCI labels.
// Containers cannot be started here (crun may not set rlimits), so the binary is also run
// directly from the image, as that user.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, STATIC_BINARY } from './tools.mjs';

const PODMAN = ['--storage-driver', 'vfs'];
const podman = (...args) => execFileSync('podman', [...PODMAN, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

it('the runtime image holds one static binary, runs as a non-root number, stops with SIGTERM', { timeout: 300_000 }, (t) => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.indexOf('FROM scratch AS runtime'));
  assert.ok(runtime.startsWith('FROM scratch AS runtime'), 'the Dockerfile has a scratch runtime stage');
  const context = mkdtempSync(join(tmpdir(), 'msp-image-'));
  copyFileSync(STATIC_BINARY, join(context, 'mcp-sandbox-proxy'));
  // The real runtime stage, verbatim, fed by a stage that holds the local binary.
  writeFileSync(join(context, 'Containerfile'), `FROM scratch AS build\nCOPY mcp-sandbox-proxy /out/mcp-sandbox-proxy\n\n${runtime}`);
  const tag = `localhost/mcp-sandbox-proxy-test:${process.pid}`;
  podman('build', '--isolation', 'chroot', '--pull=never', '-f', join(context, 'Containerfile'), '-t', tag, context);
  t.after(() => { try { podman('rmi', '-f', tag); } catch { /* already gone */ } });

  const [image] = JSON.parse(podman('image', 'inspect', tag));
  const config = image.Config;
  assert.equal(config.User, '65532:65532', 'numeric non-root user');
  assert.deepEqual(config.Entrypoint, ['/mcp-sandbox-proxy']);
  assert.equal(config.StopSignal, 'SIGTERM');
  assert.ok(!config.Healthcheck, 'no HEALTHCHECK: probes use the admin port');
  for (const label of ['title', 'description', 'licenses', 'source', 'documentation']) {
    assert.ok(config.Labels[`org.opencontainers.image.${label}`], `label org.opencontainers.image.${label}`);
  }
  assert.deepEqual(Object.keys(config.ExposedPorts).sort(), ['8443/tcp', '9464/tcp']);

  // The filesystem: exactly the binary.
  const saved = mkdtempSync(join(tmpdir(), 'msp-saved-'));
  podman('save', '--format', 'docker-dir', '-o', join(saved, 'image'), tag);
  const manifest = JSON.parse(readFileSync(join(saved, 'image', 'manifest.json'), 'utf8'));
  const layers = manifest.layers.map((layer) => layer.digest.replace('sha256:', ''));
  const files = layers.flatMap((layer) => execFileSync('tar', ['-tf', join(saved, 'image', layer)], { encoding: 'utf8' }).split('\n').filter(Boolean));
  assert.deepEqual(files.filter((f) => !f.endsWith('/')), ['mcp-sandbox-proxy'], `image files: ${files}`);
  const unpacked = mkdtempSync(join(tmpdir(), 'msp-fs-'));
  execFileSync('tar', ['-xf', join(saved, 'image', layers[0]), '-C', unpacked]);
  const binary = join(unpacked, 'mcp-sandbox-proxy');
  const ldd = (() => { try { return execFileSync('ldd', [binary], { encoding: 'utf8' }); } catch (e) { return `${e.stdout}${e.stderr}`; } })();
  assert.match(ldd, /statically linked|not a dynamic executable/, ldd);
  const version = execFileSync('setpriv', ['--reuid=65532', '--regid=65532', '--clear-groups', binary, '--version'], { encoding: 'utf8' });
  assert.match(version, /^mcp-sandbox-proxy \d+\.\d+\.\d+ \(/);

  const megabytes = (image.Size / 1024 / 1024).toFixed(1);
  t.diagnostic(`image size: ${image.Size} bytes (${megabytes} MiB)`);
  assert.ok(image.Size < 20 * 1024 * 1024, `image size ${image.Size}`);
});
