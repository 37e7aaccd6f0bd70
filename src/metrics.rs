//! Counters and gauges of the service, rendered as Prometheus text on the admin listener.
//!
//! Counters outlive config reloads: each host's counters are looked up by origin when a config
//! is built, so the request path only touches atomics.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};

use http::StatusCode;

use crate::idle::Closed;
use crate::reports::{Intake, ViolationCounts};

const PREFIX: &str = "mcp_sandbox_proxy";

/// The statuses the service answers with; anything else is counted as `other`.
const STATUSES: [u16; 9] = [200, 304, 400, 404, 405, 421, 431, 503, 0];

/// Counters of one host origin (or of requests that matched no host).
#[derive(Debug, Default)]
pub(crate) struct HostCounters {
    by_status: [AtomicU64; STATUSES.len()],
    dropped_csp_entries: AtomicU64,
    policy_upgrades: AtomicU64,
    embedder_mismatches: AtomicU64,
    refused_signatures: AtomicU64,
    /// Reported CSP violations, by directive.
    pub(crate) violations: Arc<ViolationCounts>,
}

impl HostCounters {
    pub(crate) fn count_response(&self, status: StatusCode) {
        let slot = STATUSES
            .iter()
            .position(|s| *s == status.as_u16())
            .unwrap_or(STATUSES.len() - 1);
        self.by_status[slot].fetch_add(1, Relaxed);
    }

    pub(crate) fn count_dropped(&self, entries: usize) {
        self.dropped_csp_entries.fetch_add(entries as u64, Relaxed);
    }

    /// A page framed, as its request said, by another origin than the one it is pinned to.
    pub(crate) fn count_embedder_mismatch(&self) {
        self.embedder_mismatches.fetch_add(1, Relaxed);
    }

    /// A page the relay asked for again, with the domains its resource declared.
    pub(crate) fn count_policy_upgrade(&self) {
        self.policy_upgrades.fetch_add(1, Relaxed);
    }

    /// A page of a host that signs its policies, served the default policy: its `?csp=` was
    /// unsigned, expired or signed with another key.
    pub(crate) fn count_refused_signature(&self) {
        self.refused_signatures.fetch_add(1, Relaxed);
    }
}

/// One certificate's expiry, as the last successful load saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CertExpiry {
    pub(crate) file: String,
    pub(crate) not_after_seconds: i64,
}

#[derive(Debug, Default)]
/// The service's counters, by host entry, kept across reloads and served as Prometheus text.
pub struct Metrics {
    hosts: Mutex<BTreeMap<String, Arc<HostCounters>>>,
    unmatched: Arc<HostCounters>,
    open_connections: AtomicI64,
    resting_connections: AtomicI64,
    max_connections: AtomicI64,
    connections_total: AtomicU64,
    handshake_failures: AtomicU64,
    connection_deadlines: AtomicU64,
    reloads_ok: AtomicU64,
    reloads_failed: AtomicU64,
    accept_errors: AtomicU64,
    idle_connections_closed: AtomicU64,
    slow_heads_closed: AtomicU64,
    acme_issued: AtomicU64,
    acme_failed: AtomicU64,
    certificates: Mutex<Vec<CertExpiry>>,
    reports: Arc<Intake>,
}

/// Holds one open connection in the gauge until dropped.
#[derive(Debug)]
pub(crate) struct OpenConnection(Arc<Metrics>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.open_connections.fetch_sub(1, Relaxed);
    }
}

/// Holds one HTTP/1 connection at rest in the gauge until dropped.
#[derive(Debug)]
pub(crate) struct RestingConnection(Arc<Metrics>);

impl Drop for RestingConnection {
    fn drop(&mut self) {
        self.0.resting_connections.fetch_sub(1, Relaxed);
    }
}

impl Metrics {
    /// No request counted yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Metrics::default())
    }

    /// The counters of `origin`, created on first use and kept across reloads.
    pub(crate) fn entry(&self, origin: &str) -> Arc<HostCounters> {
        let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        hosts.entry(origin.to_owned()).or_default().clone()
    }

    /// Counters for requests that named no configured sandbox.
    pub(crate) fn unmatched(&self) -> Arc<HostCounters> {
        self.unmatched.clone()
    }

    /// The connection cap the listener was started with (`limits.max_connections`).
    pub(crate) fn set_max_connections(&self, cap: usize) {
        self.max_connections
            .store(i64::try_from(cap).unwrap_or(i64::MAX), Relaxed);
    }

    pub(crate) fn connection_opened(self: &Arc<Self>) -> OpenConnection {
        self.open_connections.fetch_add(1, Relaxed);
        self.connections_total.fetch_add(1, Relaxed);
        OpenConnection(self.clone())
    }

    /// An HTTP/1 connection at rest between requests (see `connection::h1`), until the guard is dropped.
    pub(crate) fn connection_resting(self: &Arc<Self>) -> RestingConnection {
        self.resting_connections.fetch_add(1, Relaxed);
        RestingConnection(self.clone())
    }

    /// Connections of the public listener that have closed so far.
    pub(crate) fn connections_closed(&self) -> u64 {
        let open = u64::try_from(self.open_connections.load(Relaxed)).unwrap_or(0);
        self.connections_total.load(Relaxed).saturating_sub(open)
    }

    pub(crate) fn handshake_failed(&self) {
        self.handshake_failures.fetch_add(1, Relaxed);
    }

    pub(crate) fn connection_deadline_passed(&self) {
        self.connection_deadlines.fetch_add(1, Relaxed);
    }

    pub(crate) fn accept_failed(&self) {
        self.accept_errors.fetch_add(1, Relaxed);
    }

    pub(crate) fn connection_closed_for_room(&self, closed: Closed) {
        let counter = match closed {
            Closed::Idle => &self.idle_connections_closed,
            Closed::SlowHead => &self.slow_heads_closed,
        };
        counter.fetch_add(1, Relaxed);
    }

    pub(crate) fn reloaded(&self, ok: bool) {
        let counter = if ok {
            &self.reloads_ok
        } else {
            &self.reloads_failed
        };
        counter.fetch_add(1, Relaxed);
    }

    /// An ACME order ended: a certificate issued and written, or not.
    pub(crate) fn acme_ordered(&self, issued: bool) {
        let counter = if issued {
            &self.acme_issued
        } else {
            &self.acme_failed
        };
        counter.fetch_add(1, Relaxed);
    }

    pub(crate) fn set_certificates(&self, certificates: Vec<CertExpiry>) {
        *self
            .certificates
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = certificates;
    }

    /// The Prometheus text exposition (format 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::with_capacity(2048);
        header(
            &mut out,
            "requests_total",
            "counter",
            "Requests answered, by host origin and status.",
        );
        let hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        let all_hosts = hosts
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .chain([("", &self.unmatched)]);
        for (origin, counters) in all_hosts.clone() {
            for (i, status) in STATUSES.iter().enumerate() {
                let status = if *status == 0 {
                    "other".to_owned()
                } else {
                    status.to_string()
                };
                let value = counters.by_status[i].load(Relaxed);
                let _ = writeln!(
                    out,
                    "{PREFIX}_requests_total{{host=\"{}\",status=\"{status}\"}} {value}",
                    escape(origin)
                );
            }
        }
        per_host_counter(
            &mut out,
            "csp_entries_dropped_total",
            "Declared ?csp= entries dropped as not a safe host-source.",
            all_hosts.clone(),
            |c| &c.dropped_csp_entries,
        );
        per_host_counter(
            &mut out,
            "policy_upgrades_total",
            "Pages the relay reloaded with the ?csp= its resource declared (the host sent the csp only in sandbox-resource-ready).",
            all_hosts.clone(),
            |c| &c.policy_upgrades,
        );
        per_host_counter(
            &mut out,
            "embedder_mismatches_total",
            "Page requests framed by another origin than the page's host (the browser refuses the frame).",
            all_hosts.clone(),
            |c| &c.embedder_mismatches,
        );
        per_host_counter(
            &mut out,
            "refused_policy_signatures_total",
            "Page requests of a host that signs its policies whose ?csp= was unsigned, expired or wrongly signed: served the spec's default policy.",
            all_hosts.clone(),
            |c| &c.refused_signatures,
        );
        self.render_reports(&mut out, all_hosts);
        drop(hosts);
        gauge(
            &mut out,
            "open_connections",
            "Connections open on the public listener.",
            self.open_connections.load(Relaxed),
        );
        gauge(
            &mut out,
            "resting_connections",
            "HTTP/1 connections on the public listener at rest between requests.",
            self.resting_connections.load(Relaxed),
        );
        gauge(
            &mut out,
            "max_connections",
            "The cap on open public connections (limits.max_connections, as started).",
            self.max_connections.load(Relaxed),
        );
        counter(
            &mut out,
            "connections_total",
            "Connections accepted on the public listener.",
            self.connections_total.load(Relaxed),
        );
        counter(
            &mut out,
            "tls_handshake_failures_total",
            "TLS handshakes that failed or passed their deadline.",
            self.handshake_failures.load(Relaxed),
        );
        counter(
            &mut out,
            "connection_deadlines_total",
            "Connections closed for passing a header-read or idle deadline.",
            self.connection_deadlines.load(Relaxed),
        );
        counter(
            &mut out,
            "accept_errors_total",
            "Failed accepts (such as EMFILE), each followed by a back-off.",
            self.accept_errors.load(Relaxed),
        );
        counter(
            &mut out,
            "idle_connections_closed_total",
            "Idle keep-alive connections closed at the connection cap to admit a new one.",
            self.idle_connections_closed.load(Relaxed),
        );
        counter(
            &mut out,
            "slow_heads_closed_total",
            "Connections closed at the connection cap, none being idle, after waiting a second or more for a head.",
            self.slow_heads_closed.load(Relaxed),
        );
        by_outcome(
            &mut out,
            "reloads_total",
            "Config and certificate reloads, by outcome.",
            [
                ("success", self.reloads_ok.load(Relaxed)),
                ("failure", self.reloads_failed.load(Relaxed)),
            ],
        );
        by_outcome(
            &mut out,
            "acme_orders_total",
            "ACME orders, by outcome: a certificate issued and written, or a failure (the current certificate keeps serving).",
            [
                ("issued", self.acme_issued.load(Relaxed)),
                ("failure", self.acme_failed.load(Relaxed)),
            ],
        );
        header(
            &mut out,
            "certificate_expiry_seconds",
            "gauge",
            "notAfter of each served certificate, in seconds since the epoch.",
        );
        for cert in self
            .certificates
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
        {
            let _ = writeln!(
                out,
                "{PREFIX}_certificate_expiry_seconds{{file=\"{}\"}} {}",
                escape(&cert.file),
                cert.not_after_seconds
            );
        }
        header(&mut out, "build_info", "gauge", "The running build.");
        let _ = writeln!(
            out,
            "{PREFIX}_build_info{{version=\"{}\",revision=\"{}\"}} 1",
            env!("CARGO_PKG_VERSION"),
            escape(env!("MCP_SANDBOX_PROXY_GIT_REV"))
        );
        out
    }
}

impl Metrics {
    /// The reports the endpoint took, per host origin and directive (only those seen: the
    /// series are bounded by the config and the directive list, never by clients), and those it
    /// refused, by reason.
    fn render_reports<'h>(
        &self,
        out: &mut String,
        hosts: impl Iterator<Item = (&'h str, &'h Arc<HostCounters>)>,
    ) {
        header(
            out,
            "csp_violations_total",
            "counter",
            "CSP violations browsers reported to the sandbox, by host origin and effective directive (advisory: anyone can send a report).",
        );
        for (origin, counters) in hosts {
            for (directive, value) in counters.violations.counts() {
                if value > 0 {
                    let _ = writeln!(
                        out,
                        "{PREFIX}_csp_violations_total{{host=\"{}\",directive=\"{directive}\"}} {value}",
                        escape(origin)
                    );
                }
            }
        }
        header(
            out,
            "csp_reports_refused_total",
            "counter",
            "Report requests the endpoint refused, by reason (rate and connection_rate: over its limits).",
        );
        for (reason, value) in self.reports.refusals() {
            let _ = writeln!(
                out,
                "{PREFIX}_csp_reports_refused_total{{reason=\"{}\"}} {value}",
                reason.label()
            );
        }
        let (rows, evicted) = self.reports.table.rows();
        gauge(
            out,
            "csp_report_table_rows",
            "Rows in the admin listener's /csp-reports table.",
            i64::try_from(rows.len()).unwrap_or(i64::MAX),
        );
        counter(
            out,
            "csp_report_table_evictions_total",
            "Rows of the /csp-reports table evicted to make room for new ones (its size is capped).",
            evicted,
        );
    }

    /// What the report endpoint shares across reloads: the table, rates and refusals.
    pub(crate) fn reports(&self) -> Arc<Intake> {
        self.reports.clone()
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {PREFIX}_{name} {help}");
    let _ = writeln!(out, "# TYPE {PREFIX}_{name} {kind}");
}

/// A counter with one series per host origin (the empty origin: requests that matched none).
fn per_host_counter<'h>(
    out: &mut String,
    name: &str,
    help: &str,
    hosts: impl Iterator<Item = (&'h str, &'h Arc<HostCounters>)>,
    value: impl Fn(&HostCounters) -> &AtomicU64,
) {
    header(out, name, "counter", help);
    for (origin, counters) in hosts {
        let value = value(counters).load(Relaxed);
        let _ = writeln!(
            out,
            "{PREFIX}_{name}{{host=\"{}\"}} {value}",
            escape(origin)
        );
    }
}

fn counter(out: &mut String, name: &str, help: &str, value: u64) {
    header(out, name, "counter", help);
    let _ = writeln!(out, "{PREFIX}_{name} {value}");
}

/// A counter with one series per outcome.
fn by_outcome<const N: usize>(
    out: &mut String,
    name: &str,
    help: &str,
    outcomes: [(&str, u64); N],
) {
    header(out, name, "counter", help);
    for (outcome, value) in outcomes {
        let _ = writeln!(out, "{PREFIX}_{name}{{outcome=\"{outcome}\"}} {value}");
    }
}

fn gauge(out: &mut String, name: &str, help: &str, value: i64) {
    header(out, name, "gauge", help);
    let _ = writeln!(out, "{PREFIX}_{name} {value}");
}

/// Prometheus label values escape backslash, double quote and newline.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
