//! The headers of every answer: the page's (policy, content type; its caching is `caching`'s)
//! and the error answers', each with the security headers.

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderName, HeaderValue};
use http::{Response, StatusCode};

use crate::body::Body;
use crate::compress::Encoding;

use super::caching::NO_STORE;
use super::forms::Encoded;
use super::render::RenderedPage;

// The referrer a view's requests carry: the sandbox origin only, and nothing over http.
// `no-referrer` would break referrer-bound APIs (map tiles, some CDNs) that views use; the
// full URL would leak `?csp=` to every third party the view talks to.
pub(super) const REFERRER_POLICY: HeaderValue =
    HeaderValue::from_static("strict-origin-when-cross-origin");

pub(super) const HTML: HeaderValue = HeaderValue::from_static("text/html; charset=utf-8");

pub(super) const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");

pub(super) const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");

pub(super) const ORIGIN_AGENT_CLUSTER: HeaderName = HeaderName::from_static("origin-agent-cluster");

pub(super) const OAC_ON: HeaderValue = HeaderValue::from_static("?1");

pub(super) const ALLOW_GET_HEAD: HeaderValue = HeaderValue::from_static("GET, HEAD");

pub(super) const RETRY_AFTER: HeaderValue = HeaderValue::from_static("1");

pub(super) const CLEAR_SITE_DATA: HeaderName = HeaderName::from_static("clear-site-data");

pub(super) const CLEAR_COOKIES: HeaderValue = HeaderValue::from_static("\"cookies\"");

// Error answers are not pages: nothing in them may run, and nobody may frame them.
pub(super) const ERROR_CSP: HeaderValue =
    HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'");

/// A page's answer in the form `encoded`, without a body for `HEAD`, and without its caching
/// headers (`caching`'s).
pub(super) fn page_response(
    page: &RenderedPage,
    encoded: &Encoded,
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
        .get_or_init(|| page_headers(page, encoded, encoding))
        .clone();
    response
}

fn page_headers(page: &RenderedPage, encoded: &Encoded, encoding: Encoding) -> HeaderMap {
    // Room for the caching headers too, which `caching` adds to each answer.
    let mut headers = HeaderMap::with_capacity(12);
    headers.insert(header::CONTENT_TYPE, HTML);
    headers.insert(header::CONTENT_LENGTH, encoded.length.clone());
    if let Some(name) = encoding.header() {
        headers.insert(header::CONTENT_ENCODING, name);
    }
    headers.insert(header::CONTENT_SECURITY_POLICY, page.csp.clone());
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
