// The dashboard and the alerts, checked offline against the service they watch: promtool
// accepts the rules file, each alert fires on its condition and stays quiet without it, the
// PrometheusRule in the Kubernetes base holds the same groups, and every query (dashboard and
// rules) parses as PromQL and names only series the running service exports, while every
// series it exports has a place on the dashboard.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './tools.mjs';
import { freePort, startProxy } from '../browser/harness.mjs';

const RULES = join(ROOT, 'deploy', 'prometheus', 'alerts.yml');
const PROMETHEUS_RULE = join(ROOT, 'deploy', 'kubernetes', 'base', 'prometheusrule.yaml');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'mcp-sandbox-proxy.json');
const METRIC = /\bmcp_sandbox_proxy_[a-z_]+\b/g;

/** YAML documents as JSON, read by PyYAML (checkov's dependency, as in kubernetes.test.mjs). */
function readYaml(file) {
  const script = 'import sys, json, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))';
  return JSON.parse(execFileSync('python3', ['-c', script, file], { encoding: 'utf8' }));
}

function scratch(name, text) {
  const file = join(mkdtempSync(join(tmpdir(), 'msp-monitoring-')), name);
  writeFileSync(file, text);
  return file;
}

function promtool(...args) {
  const run = spawnSync('promtool', args, { encoding: 'utf8' });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
}

const rules = () => readYaml(RULES)[0].groups.flatMap((group) => group.rules);
const dashboard = () => JSON.parse(readFileSync(DASHBOARD, 'utf8'));
const panelsOf = (board) => board.panels.filter((panel) => panel.type !== 'row');

/** A dashboard query with Grafana's variables as Prometheus would get them. */
function asPromql(expr) {
  return expr
    .replaceAll('$__rate_interval', '5m')
    .replaceAll('$__range', '1h')
    .replace(/\$\{?(instance|host)\}?/g, '.*');
}

// One scenario per alert: series where it must fire (instance "a") beside series where it
// must not (instance "b", or another label), and the labels of the one alert expected.
const SCENARIOS = {
  SandboxCertificateExpiresSoon: {
    series: {
      'mcp_sandbox_proxy_certificate_expiry_seconds{instance="a", file="/tls/soon.pem"}': `${7200 + 10 * 86400}+0x150`,
      'mcp_sandbox_proxy_certificate_expiry_seconds{instance="a", file="/tls/later.pem"}': `${7200 + 30 * 86400}+0x150`,
    },
    at: '2h',
    fires: [{ instance: 'a', file: '/tls/soon.pem' }],
  },
  SandboxAcmeOrdersFailing: {
    series: {
      'mcp_sandbox_proxy_acme_orders_total{instance="a", outcome="failure"}': '0+1x300',
      'mcp_sandbox_proxy_acme_orders_total{instance="a", outcome="issued"}': '0+0x300',
      'mcp_sandbox_proxy_acme_orders_total{instance="b", outcome="failure"}': '0+1x300',
      'mcp_sandbox_proxy_acme_orders_total{instance="b", outcome="issued"}': '0+1x300',
    },
    at: '4h30m',
    fires: [{ instance: 'a', outcome: 'failure' }],
  },
  SandboxReloadRefused: {
    series: {
      'mcp_sandbox_proxy_reloads_total{instance="a", outcome="failure"}': '0 0 1 1 1',
      'mcp_sandbox_proxy_reloads_total{instance="b", outcome="failure"}': '0 0 0 0 0',
      'mcp_sandbox_proxy_reloads_total{instance="b", outcome="success"}': '0 1 2 3 4',
    },
    at: '3m',
    fires: [{ instance: 'a', outcome: 'failure' }],
  },
  SandboxFramedByWrongOrigin: {
    series: {
      'mcp_sandbox_proxy_embedder_mismatches_total{instance="a", host="https://chat.example.com"}': '0 0 3 3',
      'mcp_sandbox_proxy_embedder_mismatches_total{instance="a", host="https://studio.example.com"}': '2 2 2 2',
    },
    at: '3m',
    fires: [{ instance: 'a', host: 'https://chat.example.com' }],
  },
  SandboxMisdirectedRequests: {
    series: {
      'mcp_sandbox_proxy_requests_total{instance="a", host="", status="421"}': '0+120x20',
      'mcp_sandbox_proxy_requests_total{instance="b", host="", status="421"}': '0+30x20',
      'mcp_sandbox_proxy_requests_total{instance="b", host="", status="200"}': '0+6000x20',
    },
    at: '16m',
    fires: [{ instance: 'a' }],
  },
  SandboxClientsNotReading: {
    series: {
      'mcp_sandbox_proxy_requests_total{instance="a", host="https://chat.example.com", status="503"}': '0+120x20',
      'mcp_sandbox_proxy_requests_total{instance="b", host="https://chat.example.com", status="503"}': '0+30x20',
    },
    at: '16m',
    fires: [{ instance: 'a' }],
  },
  SandboxHandshakeFailures: {
    series: {
      'mcp_sandbox_proxy_tls_handshake_failures_total{instance="a"}': '0+600x20',
      'mcp_sandbox_proxy_tls_handshake_failures_total{instance="b"}': '0+60x20',
    },
    at: '16m',
    fires: [{ instance: 'a' }],
  },
  SandboxNearConnectionCap: {
    series: {
      'mcp_sandbox_proxy_open_connections{instance="a"}': '900+0x10',
      'mcp_sandbox_proxy_max_connections{instance="a"}': '1000+0x10',
      'mcp_sandbox_proxy_open_connections{instance="b"}': '500+0x10',
      'mcp_sandbox_proxy_max_connections{instance="b"}': '1000+0x10',
    },
    at: '7m',
    fires: [{ instance: 'a' }],
  },
  SandboxViewsRefusedLoads: {
    series: {
      'mcp_sandbox_proxy_csp_violations_total{instance="a", host="https://chat.example.com", directive="connect-src"}': '0+5x60',
      'mcp_sandbox_proxy_csp_violations_total{instance="a", host="https://chat.example.com", directive="img-src"}': '0+1x60',
    },
    at: '40m',
    fires: [{ host: 'https://chat.example.com', directive: 'connect-src' }],
  },
  SandboxReportFlood: {
    series: {
      'mcp_sandbox_proxy_csp_reports_refused_total{instance="a", reason="rate"}': '0+1200x30',
      'mcp_sandbox_proxy_csp_reports_refused_total{instance="b", reason="malformed"}': '0+1200x30',
      'mcp_sandbox_proxy_csp_reports_refused_total{instance="b", reason="rate"}': '0+60x30',
    },
    at: '20m',
    fires: [{ instance: 'a' }],
  },
};

/** Renders an annotation the way Prometheus does for the `{{ $labels.x }}` the rules use. */
function render(template, labels) {
  return template.replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, name) => labels[name] ?? '');
}

function unitTests() {
  const byName = new Map(rules().map((rule) => [rule.alert, rule]));
  const tests = Object.entries(SCENARIOS).map(([alertname, scenario]) => ({
    interval: '1m',
    input_series: Object.entries(scenario.series).map(([series, values]) => ({ series, values })),
    alert_rule_test: [{
      eval_time: scenario.at,
      alertname,
      exp_alerts: scenario.fires.map((labels) => {
        const rule = byName.get(alertname);
        const annotations = Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, render(v, labels)]));
        return { exp_labels: { ...labels, ...rule.labels }, exp_annotations: annotations };
      }),
    }],
  }));
  // JSON is YAML: promtool reads it as its test file.
  return JSON.stringify({ rule_files: [RULES], evaluation_interval: '1m', tests }, null, 1);
}

describe('deploy/prometheus and deploy/grafana', () => {
  it('promtool accepts the rules file', () => {
    const { ok, output } = promtool('check', 'rules', RULES);
    assert.ok(ok, output);
    assert.match(output, new RegExp(`SUCCESS: ${rules().length} rules found`));
  });

  it('each alert fires on its condition and not on the series beside it', () => {
    assert.deepEqual(Object.keys(SCENARIOS).sort(), rules().map((rule) => rule.alert).sort(), 'one scenario per alert');
    const { ok, output } = promtool('test', 'rules', scratch('alerts.test.json', unitTests()));
    assert.ok(ok, output);
    assert.match(output, /SUCCESS/);
  });

  it('an alert that would fire on the quiet series fails its test: the tests can fail', () => {
    const broken = readFileSync(RULES, 'utf8').replace('> 0.8 * mcp_sandbox_proxy_max_connections', '> 0.4 * mcp_sandbox_proxy_max_connections');
    assert.notEqual(broken, readFileSync(RULES, 'utf8'));
    const file = scratch('alerts.yml', broken);
    const { ok, output } = promtool('test', 'rules', scratch('alerts.test.json', unitTests().replaceAll(JSON.stringify(RULES), JSON.stringify(file))));
    assert.ok(!ok, output);
    assert.match(output, /SandboxNearConnectionCap/);
  });

  it('the PrometheusRule in the Kubernetes base holds the rules file\'s groups', () => {
    const [resource] = readYaml(PROMETHEUS_RULE);
    assert.equal(resource.kind, 'PrometheusRule');
    assert.deepEqual(resource.spec, readYaml(RULES)[0]);
    const kustomization = readFileSync(join(ROOT, 'deploy', 'kubernetes', 'base', 'kustomization.yaml'), 'utf8');
    assert.match(kustomization, /- prometheusrule\.yaml/);
    assert.match(kustomization, /- servicemonitor\.yaml/);
  });

  it('every dashboard query parses as PromQL', () => {
    const queries = panelsOf(dashboard()).flatMap((panel) => panel.targets.map((target) => target.expr));
    assert.ok(queries.length >= 20, `${queries.length} queries`);
    const recording = queries.map((expr, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(asPromql(expr))}\n`);
    const file = scratch('queries.yml', `groups:\n  - name: dashboard\n    rules:\n${recording.join('')}`);
    const { ok, output } = promtool('check', 'rules', file);
    assert.ok(ok, output);
  });

  it('the dashboard is laid out on Grafana\'s grid, each panel on the chosen data source', () => {
    const board = dashboard();
    assert.equal(board.uid, 'mcp-sandbox-proxy');
    const ids = board.panels.map((panel) => panel.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
    const cells = new Set();
    for (const panel of board.panels) {
      const { x, y, w, h } = panel.gridPos;
      assert.ok(x >= 0 && w > 0 && x + w <= 24, `${panel.title} fits in 24 columns`);
      for (let row = y; row < y + h; row++) {
        for (let col = x; col < x + w; col++) {
          assert.ok(!cells.has(`${row},${col}`), `${panel.title} overlaps another panel`);
          cells.add(`${row},${col}`);
        }
      }
      if (panel.type === 'row') continue;
      assert.equal(panel.datasource.uid, '${datasource}', panel.title);
      assert.ok(panel.description, `${panel.title} says what it shows`);
      for (const target of panel.targets) assert.equal(target.datasource.uid, '${datasource}', panel.title);
    }
    const variables = board.templating.list.map((variable) => variable.name);
    assert.deepEqual(variables, ['datasource', 'instance', 'host']);
  });

  describe('against the running service', () => {
    let proxy;
    let exported;
    before(async () => {
      const [port, admin] = [await freePort(), await freePort()];
      proxy = await startProxy(
        `listen = "127.0.0.1:${port}"\nadmin_listen = "127.0.0.1:${admin}"\n` +
        `[[hosts]]\norigin = "http://localhost:9300"\nsandbox = "sandbox.localhost"\n`,
      );
      const text = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
      exported = new Set([...text.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1]));
    });
    after(async () => assert.equal(await proxy.stop(), 0));

    it('the dashboard and the rules name only series the service exports', () => {
      assert.ok(exported.size >= 20, [...exported].join(' '));
      const named = (exprs) => new Set(exprs.flatMap((expr) => expr.match(METRIC) ?? []));
      const board = panelsOf(dashboard()).flatMap((panel) => panel.targets.map((target) => target.expr));
      const variables = dashboard().templating.list.map((variable) => variable.definition ?? '');
      for (const name of named([...board, ...variables, ...rules().map((rule) => rule.expr)])) {
        assert.ok(exported.has(name), `${name} is not exported by the service`);
      }
    });

    it('every series the service exports has a place on the dashboard', () => {
      const board = new Set(panelsOf(dashboard()).flatMap((panel) => panel.targets.flatMap((target) => target.expr.match(METRIC) ?? [])));
      assert.deepEqual([...exported].filter((name) => !board.has(name)), []);
    });
  });
});
