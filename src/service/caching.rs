//! Caching, decided here alone: a page's `Cache-Control`, `ETag` and `Vary`, when a client's
//! copy is still good (`304`), and what no cache may keep. Every answer that is not a page is
//! `no-store`, without an `ETag` (`headers::plain_text`).

use std::time::Duration;

use bytes::Bytes;
use http::header::{self, HeaderValue};
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

    /// `response`, a page's answer in the form tagged `etag`, with its caching headers; a
    /// `304` if the client holds this very form already.
    pub(super) fn answer<B>(
        &self,
        req: &Request<B>,
        signature: &Signature,
        etag: &HeaderValue,
        mut response: Response<Body>,
    ) -> Response<Body> {
        let headers = response.headers_mut();
        headers.insert(header::VARY, VARY_ACCEPT_ENCODING);
        // SECURITY: an answer that clears one client's cookies (`front_door`) is that client's
        // alone: no cache may keep it and replay it to others.
        let for_no_one = req.headers().contains_key(header::COOKIE);
        let cache_control = match signature {
            _ if for_no_one => NO_STORE,
            Signature::NotChecked => self.cache_control.clone(),
            Signature::Valid(_) | Signature::Refused(_) if self.cacheable => NO_CACHE,
            Signature::Valid(_) | Signature::Refused(_) => NO_STORE,
        };
        headers.insert(header::CACHE_CONTROL, cache_control);
        if self.cacheable && !for_no_one {
            headers.insert(header::ETAG, etag.clone());
        }
        if self.is_fresh(req, etag) {
            *response.status_mut() = StatusCode::NOT_MODIFIED;
            response.headers_mut().remove(header::CONTENT_LENGTH);
            *response.body_mut() = Body::new(Bytes::new());
        }
        response
    }

    /// Whether the client holds this very form already, for a host whose pages may be kept:
    /// `If-None-Match` names its `ETag` (weakly compared, as RFC 9110 asks for this header) or
    /// is `*`.
    fn is_fresh<B>(&self, req: &Request<B>, etag: &HeaderValue) -> bool {
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
