//! Caching, decided here alone: a page's `Cache-Control`, `ETag` and `Vary`, when a client's
//! copy is still good (`304`), and what no cache may keep. Every answer that is not a page is
//! `no-store` (`headers::plain_text`).

use std::time::Duration;

use http::header::{self, HeaderMap, HeaderValue};
use http::{Request, Response, StatusCode};

use crate::body::Body;

use super::policy::Signature;

pub(super) const NO_STORE: HeaderValue = HeaderValue::from_static("no-store");

// A page whose policy a signature decided: a cache may keep it, but must ask again before
// using it, so that no cache serves a signed policy after its expiry.
const NO_CACHE: HeaderValue = HeaderValue::from_static("no-cache");

const VARY_ACCEPT_ENCODING: HeaderValue = HeaderValue::from_static("accept-encoding");

/// How one host's pages may be kept (`cache_max_age`).
#[derive(Debug)]
pub(super) struct Caching {
    /// `no-store`, or `public, max-age=N` when the host's pages may be cached.
    cache_control: HeaderValue,
    cacheable: bool,
}

impl Caching {
    pub(super) fn new(max_age: Duration) -> Self {
        let seconds = max_age.as_secs();
        let cache_control = if seconds == 0 {
            NO_STORE
        } else {
            let value = format!("public, max-age={seconds}");
            HeaderValue::from_str(&value).unwrap_or(NO_STORE)
        };
        Caching {
            cache_control,
            cacheable: seconds > 0,
        }
    }

    /// The caching headers of one form of a page (its coding's `etag`), kept with the form.
    pub(super) fn page_headers(
        &self,
        signature: &Signature,
        etag: &HeaderValue,
        headers: &mut HeaderMap,
    ) {
        headers.insert(header::VARY, VARY_ACCEPT_ENCODING);
        let cache_control = match signature {
            Signature::NotChecked => self.cache_control.clone(),
            Signature::Valid(_) | Signature::Refused(_) if self.cacheable => NO_CACHE,
            Signature::Valid(_) | Signature::Refused(_) => NO_STORE,
        };
        headers.insert(header::CACHE_CONTROL, cache_control);
        if self.cacheable {
            headers.insert(header::ETAG, etag.clone());
        }
    }

    /// Whether the client holds this very form already, for a host whose pages may be kept:
    /// `If-None-Match` names its `ETag` (weakly compared, as RFC 9110 asks for this header) or
    /// is `*`. Then the answer is [`not_modified`].
    pub(super) fn is_fresh<B>(&self, req: &Request<B>, etag: &HeaderValue) -> bool {
        let ours = etag.as_bytes();
        self.cacheable
            && req
                .headers()
                .get_all(header::IF_NONE_MATCH)
                .iter()
                .flat_map(|value| value.as_bytes().split(|b| *b == b','))
                .map(|tag| tag.trim_ascii())
                .any(|tag| tag == b"*" || tag.strip_prefix(b"W/").unwrap_or(tag) == ours)
    }
}

/// A page's answer (built without a body) as a `304`.
pub(super) fn not_modified(response: &mut Response<Body>) {
    *response.status_mut() = StatusCode::NOT_MODIFIED;
    response.headers_mut().remove(header::CONTENT_LENGTH);
}

/// An answer that clears one client's cookies is that client's alone: no cache may keep it and
/// replay it to others.
pub(super) fn keep_for_no_one(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, NO_STORE);
    headers.remove(header::ETAG);
}
