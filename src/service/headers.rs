//! The headers of every answer: the page's (policy, caching, content type) and the error
//! answers', each with the security headers.

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Request, Response, StatusCode};

use crate::body::Body;
use crate::compress::Encoding;
use crate::embedders::Pinned;

use super::Entry;
use super::page_cache::{Encoded, RenderedPage};
use super::policy::Signature;

// The referrer a view's requests carry: the sandbox origin only, and nothing over http.
// `no-referrer` would break referrer-bound APIs (map tiles, some CDNs) that views use; the
// full URL would leak `?csp=` to every third party the view talks to.
pub(super) const REFERRER_POLICY: HeaderValue =
    HeaderValue::from_static("strict-origin-when-cross-origin");

pub(super) const HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");

pub(super) const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");

pub(super) const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");

// A page whose policy a signature decided: a cache may keep it, but must ask again before
// using it, so that no cache serves a signed policy after its expiry.
pub(super) const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");

pub(super) const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");

pub(super) const ORIGIN_AGENT_CLUSTER: HeaderName = HeaderName::from_static("origin-agent-cluster");

pub(super) const OAC_ON: HeaderValue = HeaderValue::from_static("?1");

pub(super) const ALLOW_GET_HEAD: HeaderValue = HeaderValue::from_static("GET, HEAD");

pub(super) const RETRY_AFTER: HeaderValue = HeaderValue::from_static("1");

pub(super) const VARY_ACCEPT_ENCODING: HeaderValue = HeaderValue::from_static("accept-encoding");

pub(super) const CLEAR_SITE_DATA: HeaderName = HeaderName::from_static("clear-site-data");

pub(super) const CLEAR_COOKIES: HeaderValue = HeaderValue::from_static("\"cookies\"");

// Error answers are not pages: nothing in them may run, and nobody may frame them.
pub(super) const ERROR_CSP: HeaderValue =
    HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'");

/// The page's `Content-Security-Policy`: `frame-ancestors <origin>` with the page's own
/// `sandbox` policy (see `sandbox`), then the view policy, as two policies, each enforced on
/// its own, so the framing and sandbox rules hold whatever the view policy says. They travel in
/// one header, separated by a comma (CSP's separator between policies, and what HTTP makes of
/// two headers of one name anyway), because scanners such as testssl.sh flag a repeated
/// `Content-Security-Policy` header. The page's own policy comes first: scanners that read the
/// header as one policy (the HTTP Observatory, CSP Evaluator) then see `frame-ancestors`;
/// browsers enforce both whatever the order. No source in a view policy can hold a comma
/// (`csp` drops such entries), so the split is exact.
///
/// No view policy (the host writes its own into the view's `<meta>`): framing and sandbox, and
/// `object-src 'none'`, a floor under the host's `<meta>`. Every template of the spec has it;
/// a host's that omits it must not let a view load plugins (`<object>`, `<embed>`).
pub(super) fn content_security_policy(
    view_policy: Option<&str>,
    origins: &Pinned<'_>,
    sandbox: &str,
    report_to: Option<&str>,
) -> String {
    // Each policy names the endpoint with its own mark, so a report says which it broke.
    // `report-uri` alone: Firefox ESR 153 drops a policy's `report-uri` when it also has
    // `report-to`, and then sends nothing (docs/http.md, tests/browser/reports.test.mjs).
    let report = |source: &str| match report_to {
        Some(url) => format!("; report-uri {url}?from={source}"),
        None => String::new(),
    };
    let page = format!("frame-ancestors {origins}; {sandbox}");
    match view_policy {
        Some(view_policy) => format!("{page}{}, {view_policy}{}", report("page"), report("view")),
        None => format!("{page}; {HOST_POLICY_FLOOR}{}", report("page")),
    }
}

/// What the page's own policy adds where the host writes the view's.
const HOST_POLICY_FLOOR: &str = "object-src 'none'";

/// Whether the client holds this very form already: `If-None-Match` names its `ETag` (weakly
/// compared, as RFC 9110 asks for this header) or is `*`.
pub(super) fn is_fresh<B>(req: &Request<B>, etag: &HeaderValue) -> bool {
    let ours = etag.as_bytes();
    req.headers()
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .flat_map(|value| value.as_bytes().split(|b| *b == b','))
        .map(|tag| tag.trim_ascii())
        .any(|tag| tag == b"*" || tag.strip_prefix(b"W/").unwrap_or(tag) == ours)
}

pub(super) fn page_response(
    page: &RenderedPage,
    encoded: &Encoded,
    entry: &Entry,
    head: bool,
    encoding: Encoding,
) -> Response<Body> {
    let body = if head {
        Bytes::new()
    } else {
        encoded.body.clone()
    };
    let body = Body::new(body).also_holding(page.csp.len());
    let mut response = Response::new(body);
    // Built once per form and cloned: a clone is two allocations, where ten inserts hash ten
    // names and grow the map twice.
    *response.headers_mut() = encoded
        .headers
        .get_or_init(|| page_headers(page, encoded, entry, encoding))
        .clone();
    response
}

pub(super) fn page_headers(
    page: &RenderedPage,
    encoded: &Encoded,
    entry: &Entry,
    encoding: Encoding,
) -> HeaderMap {
    let mut headers = HeaderMap::with_capacity(12);
    headers.insert(header::CONTENT_TYPE, HTML);
    headers.insert(header::CONTENT_LENGTH, encoded.length.clone());
    if let Some(name) = encoding.header() {
        headers.insert(header::CONTENT_ENCODING, name);
    }
    headers.insert(header::VARY, VARY_ACCEPT_ENCODING);
    headers.insert(header::CONTENT_SECURITY_POLICY, page.csp.clone());
    let cache_control = match page.signature {
        Signature::NotChecked => entry.cache_control.clone(),
        Signature::Valid(_) | Signature::Refused(_) if entry.cacheable => NO_CACHE,
        Signature::Valid(_) | Signature::Refused(_) => NO_STORE,
    };
    headers.insert(header::CACHE_CONTROL, cache_control);
    if entry.cacheable {
        headers.insert(header::ETAG, encoded.etag.clone());
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    headers.insert(header::REFERRER_POLICY, REFERRER_POLICY);
    headers.insert(ORIGIN_AGENT_CLUSTER, OAC_ON);
    headers
}

pub(super) fn error(status: StatusCode, reason: &str) -> Response<Body> {
    let body = format!(
        "{} {}: {reason}\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    plain_text(status, Bytes::from(body))
}

/// A plain-text answer that is not a page (an error, an ACME HTTP-01 answer), with the
/// security headers every such answer carries: nothing in it may run, be framed or be kept.
pub(crate) fn plain_text(status: StatusCode, body: Bytes) -> Response<Body> {
    let length = HeaderValue::from(body.len());
    let mut response = Response::new(Body::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, TEXT);
    headers.insert(header::CONTENT_LENGTH, length);
    headers.insert(header::CONTENT_SECURITY_POLICY, ERROR_CSP);
    headers.insert(header::CACHE_CONTROL, NO_STORE);
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, NOSNIFF);
    response
}
