//! Rendered pages by (host, raw query), within a byte budget.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError, RwLock};

use super::policy::Signature;
use super::render::RenderedPage;

/// Roughly what one form's header map holds: a dozen entries and their index.
const HEADER_MAP_BYTES: usize = 1024;

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

    /// The page kept for `host` and `query` if it may still be served at `now`, or the one
    /// `render` makes, kept.
    pub(super) fn get_or_render<E>(
        &self,
        host: usize,
        query: &str,
        now: u64,
        render: impl FnOnce() -> Result<RenderedPage, E>,
    ) -> Result<Arc<RenderedPage>, E> {
        if let Some(page) = self.get(host, query)
            && still_valid(&page, now)
        {
            return Ok(page);
        }
        let page = Arc::new(render()?);
        self.insert(host, query, &page);
        Ok(page)
    }

    fn get(&self, host: usize, query: &str) -> Option<Arc<RenderedPage>> {
        let pages = self.pages.read().unwrap_or_else(PoisonError::into_inner);
        pages.by_host.get(host)?.get(query).cloned()
    }

    fn insert(&self, host: usize, query: &str, page: &Arc<RenderedPage>) {
        let cost = cost(page, query);
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

/// What keeping `page` for `query` costs, roughly: the page, its policy, and the query that
/// keys it. Its other forms, once made, are each smaller than the page itself; each form's
/// header map is about a kilobyte.
fn cost(page: &RenderedPage, query: &str) -> usize {
    2 * page.body.len() + page.csp.len() + query.len() + 3 * HEADER_MAP_BYTES
}

/// Whether `page` may still be served at `now`: a signed policy ends at its expiry.
fn still_valid(page: &RenderedPage, now: u64) -> bool {
    match page.signature {
        Signature::Valid(signed) => now < signed.expires,
        Signature::NotChecked | Signature::Refused(_) => true,
    }
}
