//! What the service logs and counts about the pages it serves, each kind of line within a
//! budget per second.

use http::Request;
use http::header::{self};

use crate::csp::Dropped;
use crate::embedders::EmbedderError;
use crate::telemetry::LogBudget;

use super::host::Host;
use super::policy::Signature;
use super::render::RenderedPage;

/// Logs and counts what is worth it about `page`, served to `req`: dropped sources, a framer
/// the page is not pinned to, a refused signature, the relay's own reload.
pub(super) fn page_served<B>(host: &Host, page: &RenderedPage, req: &Request<B>) {
    log_dropped(host, &page.dropped);
    if let Some(framer) = foreign_framer(req, &page.embedder) {
        host.counters.count_embedder_mismatch();
        log_embedder_mismatch(host, &page.embedder, &framer);
    }
    if matches!(page.signature, Signature::Refused(_)) {
        host.counters.count_refused_signature();
    }
    if page.policy_upgrade {
        host.counters.count_policy_upgrade();
    }
}

/// At most this many dropped entries are logged one by one per request; the rest as a count.
pub(super) const MAX_DROPPED_LOGGED: usize = 16;

/// Dropped-entry lines per second across all requests; the rest are counted in metrics only.
pub(super) static DROPPED_LOG_BUDGET: LogBudget = LogBudget::new(20);

/// Mismatched-embedder lines per second, in all: a misconfigured host reloads its pages often.
pub(super) static EMBEDDER_LOG_BUDGET: LogBudget = LogBudget::new(5);

/// The origin framing this page request, when it is none of those the page is pinned to
/// (`embedder`, space-separated): the browser will refuse the frame (`frame-ancestors`), and
/// the host developer sees only a blank frame. Fetch metadata says the page is being framed (`Sec-Fetch-Dest: iframe`), and the
/// `Referer`, which browsers cut to the framing page's origin across origins, names the framer.
/// A request without either says nothing, and a same-origin one is the relay reloading itself.
fn foreign_framer<B>(req: &Request<B>, embedder: &str) -> Option<String> {
    let headers = req.headers();
    let destination = headers.get("sec-fetch-dest")?.as_bytes();
    if destination != b"iframe" && destination != b"frame" {
        return None;
    }
    if headers
        .get("sec-fetch-site")
        .is_some_and(|site| site.as_bytes() == b"same-origin")
    {
        return None;
    }
    let referer = headers.get(header::REFERER)?.to_str().ok()?;
    let framer = url::Url::parse(referer).ok()?.origin();
    if !framer.is_tuple() {
        return None;
    }
    let framer = framer.ascii_serialization();
    embedder
        .split(' ')
        .all(|pinned| pinned != framer)
        .then_some(framer)
}

/// Logs a page refused for the host origin its query names (`embedder`, `parentOrigin`): the
/// host developer sees the `400` in the frame, the operator here, within the same budget as a
/// mismatched framer.
pub(super) fn embedder_refused(host: &Host, refused: &EmbedderError) {
    if !EMBEDDER_LOG_BUDGET.allow() {
        return;
    }
    let suppressed = EMBEDDER_LOG_BUDGET.take_suppressed();
    // SECURITY: the named origin is the client's to write; it is logged as a value, escaped by
    // the log format.
    tracing::warn!(
        host = %host.name,
        suppressed,
        reason = %refused,
        "refused a page for a host origin this sandbox does not serve"
    );
}

fn log_embedder_mismatch(host: &Host, embedder: &str, framer: &str) {
    if !EMBEDDER_LOG_BUDGET.allow() {
        return;
    }
    let suppressed = EMBEDDER_LOG_BUDGET.take_suppressed();
    // SECURITY: the Referer is the client's to write; it is logged as a value, escaped by the
    // log format, and never reaches an answer.
    tracing::warn!(
        host = %host.name,
        configured = embedder,
        framed_by = framer,
        suppressed,
        "a page was framed by an origin this sandbox does not serve: the browser refuses the frame (frame-ancestors), and the host page shows it blank"
    );
}

fn log_dropped(host: &Host, dropped: &[Dropped]) {
    if dropped.is_empty() {
        return;
    }
    host.counters.count_dropped(dropped.len());
    if !DROPPED_LOG_BUDGET.allow() {
        return;
    }
    let suppressed = DROPPED_LOG_BUDGET.take_suppressed();
    if suppressed > 0 {
        tracing::warn!(
            suppressed,
            "dropped-CSP-source lines were suppressed by the log rate limit"
        );
    }
    for dropped in dropped.iter().take(MAX_DROPPED_LOGGED) {
        tracing::warn!(
            host = %host.name,
            list = dropped.list.key(),
            entry = ?dropped.entry,
            reason = %dropped.reason,
            "dropped CSP source"
        );
    }
    if dropped.len() > MAX_DROPPED_LOGGED {
        tracing::warn!(
            host = %host.name,
            more = dropped.len() - MAX_DROPPED_LOGGED,
            "dropped more CSP sources than are logged one by one"
        );
    }
}
