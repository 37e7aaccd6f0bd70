//! Rendered pages by (host, raw query), each with its compressed forms and their tags, within a
//! byte budget.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};

use crate::compress::{self, Encoding};
use crate::csp::Dropped;

use super::policy::Signature;

/// Roughly what one form's header map holds: a dozen entries and their index.
pub(super) const HEADER_MAP_BYTES: usize = 1024;

/// A page and the headers that depend on its query, built once; its compressed forms are made
/// the first time a client accepts one, and kept with it.
#[derive(Debug)]
pub(super) struct RenderedPage {
    pub(super) page: Encoded,
    pub(super) brotli: OnceLock<Encoded>,
    pub(super) gzip: OnceLock<Encoded>,
    /// Two policies in one header, `<view policy>, frame-ancestors <host origin>`: see
    /// `content_security_policy`.
    pub(super) csp: HeaderValue,
    /// Names the page's bytes and policy: the base of every form's `ETag`.
    pub(super) tag: u64,
    pub(super) dropped: Vec<Dropped>,
    /// The origins allowed to frame this page (`frame-ancestors`), as browsers serialize
    /// them, separated by spaces.
    pub(super) embedder: String,
    /// The query marks the relay asking for its page again (see `PageQuery::is_policy_upgrade`).
    pub(super) policy_upgrade: bool,
    pub(super) signature: Signature,
}

/// One form of a page, with its `Content-Length`, its strong `ETag`, and its answer's headers
/// once one was sent.
#[derive(Debug)]
pub(super) struct Encoded {
    pub(super) body: Bytes,
    pub(super) length: HeaderValue,
    pub(super) etag: HeaderValue,
    pub(super) headers: OnceLock<HeaderMap>,
}

impl Encoded {
    /// `tag` names everything the answer's bytes depend on (see `page_tag`); each coding is a
    /// representation of its own, so it has a tag of its own.
    pub(super) fn new(body: Bytes, tag: u64, encoding: Encoding) -> Self {
        let etag = match encoding.header() {
            Some(coding) => format!("\"{tag:016x}-{}\"", coding.to_str().unwrap_or_default()),
            None => format!("\"{tag:016x}\""),
        };
        Encoded {
            length: HeaderValue::from(body.len()),
            // Quotes, hex digits, a dash and a coding name: always a valid header value.
            etag: HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"\"")),
            headers: OnceLock::new(),
            body,
        }
    }
}

impl RenderedPage {
    /// What keeping it costs, roughly: the page, its policy, and the query that keys it.
    pub(super) fn bytes(&self, query: &str) -> usize {
        // The compressed forms, once made, are each smaller than the page itself; each form's
        // header map is about a kilobyte.
        2 * self.page.body.len() + self.csp.len() + query.len() + 3 * HEADER_MAP_BYTES
    }

    /// Whether the page may still be served at `now`: a signed policy ends at its expiry.
    pub(super) fn is_valid_at(&self, now: u64) -> bool {
        match self.signature {
            Signature::Valid(signed) => now < signed.expires,
            Signature::NotChecked | Signature::Refused(_) => true,
        }
    }

    /// The page in `encoding`, compressed now if this is the first time it is asked for.
    pub(super) fn encoded(&self, encoding: Encoding) -> &Encoded {
        let (page, tag) = (&self.page.body, self.tag);
        match encoding {
            Encoding::Identity => &self.page,
            Encoding::Brotli => self
                .brotli
                .get_or_init(|| Encoded::new(compress::brotli(page), tag, encoding)),
            Encoding::Gzip => self
                .gzip
                .get_or_init(|| Encoded::new(compress::gzip(page), tag, encoding)),
        }
    }
}

/// Rendered pages by (host, raw query), shared by every answer that carries one. The answer
/// depends only on those, so a repeated request costs a lookup and a few header clones. The
/// cache holds at most `budget` bytes whatever clients send; when a page would not fit, it
/// starts over (a simple rule that keeps a lookup a single hash probe and never evicts in a
/// loop).
#[derive(Debug)]
pub(super) struct PageCache {
    pub(super) pages: RwLock<CachedPages>,
    pub(super) budget: usize,
}

#[derive(Debug, Default)]
pub(super) struct CachedPages {
    /// Host index → raw query → page (the index needs no hashing; the query, which clients
    /// choose, is hashed with std's keyed SipHash).
    pub(super) by_host: Vec<HashMap<Box<str>, Arc<RenderedPage>>>,
    pub(super) bytes: usize,
}

impl PageCache {
    pub(super) fn new(budget: usize) -> Self {
        PageCache {
            pages: RwLock::new(CachedPages::default()),
            budget,
        }
    }

    pub(super) fn get(&self, host: usize, query: &str) -> Option<Arc<RenderedPage>> {
        let pages = self.pages.read().unwrap_or_else(PoisonError::into_inner);
        pages.by_host.get(host)?.get(query).cloned()
    }

    pub(super) fn insert(&self, host: usize, query: &str, page: &Arc<RenderedPage>) {
        let cost = page.bytes(query);
        if cost > self.budget {
            return;
        }
        let mut pages = self.pages.write().unwrap_or_else(PoisonError::into_inner);
        if pages.bytes + cost > self.budget {
            *pages = CachedPages::default();
        }
        if pages.by_host.len() <= host {
            pages.by_host.resize_with(host + 1, HashMap::new);
        }
        if pages.by_host[host]
            .insert(query.into(), page.clone())
            .is_none()
        {
            pages.bytes += cost;
        }
    }
}

/// What a page's answer depends on besides its coding: the page (which holds the relay, the
/// host origin and the view policy) and its `Content-Security-Policy`. Any change to either
/// gives a new tag, so a cache that revalidates never keeps a stale page. The hash is stable
/// for a given build, so replicas of one release agree behind a shared cache; a tag that
/// differs between releases costs one full answer, never a wrong one.
pub(super) fn page_tag(body: &[u8], csp: &HeaderValue) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    body.hash(&mut hasher);
    csp.as_bytes().hash(&mut hasher);
    hasher.finish()
}
