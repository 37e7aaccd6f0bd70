// The Kubernetes manifests, checked offline: kustomize renders base and overlay,
// kubernetes-validate accepts every built-in kind, and checkov finds nothing that the overlay
// does not justify. Then the properties ops rely on, read from the rendered Deployment.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, STATIC_BINARY } from './tools.mjs';

const BASE = join(ROOT, 'deploy', 'kubernetes', 'base');
const OVERLAY = join(ROOT, 'deploy', 'kubernetes', 'overlays', 'example');
// The one finding the example overlay justifies, in its checkov.io/skip annotation.
const JUSTIFIED = ['CKV_K8S_43'];

function render(dir) {
  const yaml = execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' });
  const file = join(mkdtempSync(join(tmpdir(), 'msp-k8s-')), 'rendered.yaml');
  writeFileSync(file, yaml);
  return { yaml, file };
}

describe('deploy/kubernetes', () => {
  for (const [name, dir] of [['base', BASE], ['example overlay', OVERLAY]]) {
    it(`${name}: kubernetes-validate accepts every built-in kind`, { timeout: 120_000 }, () => {
      const { file } = render(dir);
      const run = spawnSync('kubernetes-validate', ['--strict', '-k', '1.32.0', file], { encoding: 'utf8' });
      const lines = `${run.stdout}${run.stderr}`.split('\n').filter(Boolean);
      assert.equal(run.status, 0, lines.join('\n'));
      const notPassed = lines.filter((l) => !l.startsWith('INFO') || !l.includes('passed'));
      // cert-manager's Certificate and the Prometheus Operator's PrometheusRule and
      // ServiceMonitor are custom resources: no built-in schema to check them against.
      const custom = ['kind Certificate with api version cert-manager.io/v1',
        'kind PrometheusRule with api version monitoring.coreos.com/v1',
        'kind ServiceMonitor with api version monitoring.coreos.com/v1'];
      assert.deepEqual(notPassed.filter((l) => !custom.some((kind) => l.includes(kind))), []);
      assert.ok(lines.filter((l) => l.includes('passed')).length >= 9, lines.join('\n'));
    });
  }

  it('example overlay: checkov fails nothing that is not justified there', { timeout: 300_000 }, () => {
    const { file } = render(OVERLAY);
    const run = spawnSync('checkov', ['-f', file, '--framework', 'kubernetes', '--skip-download', '--compact', '-o', 'json'], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, BC_SKIP_MAPPING: 'TRUE', CHECKOV_RUN_SCA_PACKAGE_SCAN_V2: 'false' },
    });
    const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{')));
    const results = report.results ?? {};
    assert.deepEqual((results.failed_checks ?? []).map((c) => `${c.check_id} ${c.resource}`), []);
    const skipped = [...new Set((results.skipped_checks ?? []).map((c) => c.check_id))];
    assert.deepEqual(skipped.sort(), JUSTIFIED);
    assert.ok((results.passed_checks ?? []).length > 50, 'checkov ran its Kubernetes checks');
  });

  it('the Deployment drains without dropped requests and runs locked down', () => {
    // YAML to JSON with PyYAML (checkov's dependency), so no cluster is needed.
    const all = JSON.parse(execFileSync('python3', ['-c', 'import sys, json, yaml; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))'], {
      input: render(OVERLAY).yaml, encoding: 'utf8',
    }));
    const json = all.find((doc) => doc.kind === 'Deployment');
    const spec = json.spec.template.spec;
    const container = spec.containers[0];
    const hpa = all.find((doc) => doc.kind === 'HorizontalPodAutoscaler');
    assert.ok(hpa.spec.minReplicas >= 2);
    const pdb = all.find((doc) => doc.kind === 'PodDisruptionBudget');
    assert.deepEqual(pdb.spec.selector.matchLabels, json.spec.selector.matchLabels, 'the PDB protects these pods');
    assert.equal(json.spec.strategy.rollingUpdate.maxUnavailable, 0);
    assert.equal(container.readinessProbe.httpGet.path, '/readyz');
    assert.equal(container.readinessProbe.httpGet.port, 'admin');
    assert.equal(container.livenessProbe.httpGet.path, '/livez');
    const preStop = container.lifecycle.preStop.sleep.seconds;
    assert.ok(preStop >= 10, 'long enough for load balancers to notice');
    // preStop + shutdown_grace (25 s in the overlay's config) must fit in the grace period.
    assert.ok(spec.terminationGracePeriodSeconds >= preStop + 25 + 5, `${spec.terminationGracePeriodSeconds}`);
    assert.equal(container.securityContext.readOnlyRootFilesystem, true);
    assert.equal(container.securityContext.allowPrivilegeEscalation, false);
    assert.deepEqual(container.securityContext.capabilities.drop, ['ALL']);
    assert.equal(spec.securityContext.runAsNonRoot, true);
    assert.equal(spec.securityContext.seccompProfile.type, 'RuntimeDefault');
    assert.equal(spec.automountServiceAccountToken, false);
  });

  it('Prometheus scrapes the admin Service alone, from the namespace the NetworkPolicy lets in', () => {
    const all = JSON.parse(execFileSync('python3', ['-c', 'import sys, json, yaml; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))'], {
      input: render(OVERLAY).yaml, encoding: 'utf8',
    }));
    const monitor = all.find((doc) => doc.kind === 'ServiceMonitor');
    const selects = (service) => Object.entries(monitor.spec.selector.matchLabels)
      .every(([key, value]) => service.metadata.labels?.[key] === value);
    const services = all.filter((doc) => doc.kind === 'Service');
    assert.deepEqual(services.filter(selects).map((s) => s.metadata.name), ['mcp-sandbox-proxy-admin']);
    const admin = services.find(selects);
    assert.deepEqual(monitor.spec.endpoints.map((e) => [e.port, e.path]), [[admin.spec.ports[0].name, '/metrics']]);
    const policy = all.find((doc) => doc.kind === 'NetworkPolicy');
    const fromMonitoring = policy.spec.ingress.find((rule) => rule.from?.some((f) => f.namespaceSelector));
    assert.deepEqual(fromMonitoring.ports.map((p) => p.port), [admin.spec.ports[0].port]);
    assert.ok(all.some((doc) => doc.kind === 'PrometheusRule'), 'the alerts ship with the base');
  });

  for (const dir of [BASE, OVERLAY]) {
    it(`${dir.slice(ROOT.length + 1)}/config.toml is one the service accepts`, () => {
      // Only the rules: the certificate files exist in the cluster, not here.
      const out = spawnSync(STATIC_BINARY, ['check', '--config', join(dir, 'config.toml')], { encoding: 'utf8' });
      assert.match(out.stderr, /tls\/tls\.crt: cannot read/, `it got as far as the certificates: ${out.stderr}`);
      assert.doesNotMatch(out.stderr, /config\.toml:\d+: /, `no config error: ${out.stderr}`);
    });
  }
});
