//! The proxy page's answer, each step in a file of its own, in this order: its paths and
//! methods (here), the page itself (`page_cache`; on a miss its query read once and the page
//! rendered, `render`), what is logged and counted about it (`logs`), the form the client
//! accepts (`forms`), its headers (`headers`), and its caching (`caching`).

use std::borrow::Cow;
use std::sync::Arc;

use http::header;
use http::{Method, Request, Response, StatusCode};

use crate::body::Body;
use crate::compress::Encoding;
use crate::page_query::PageQuery;
use crate::signing::unix_now;

use super::Service;
use super::headers::{ALLOW_GET_HEAD, error, page_response};
use super::logs::{embedder_refused, page_served};
use super::render::{self, PageError, RenderedPage};
use super::route::Routed;

impl Service {
    /// The answer to a request for the page of the host it was routed to.
    pub(super) fn page<B>(&self, req: &Request<B>, routed: &Routed<'_, '_>) -> Response<Body> {
        let host = routed.host;
        let paths = &host.config.page_paths;
        if !paths.contains(req.uri().path()) {
            return error(
                StatusCode::NOT_FOUND,
                &format!("not found: the proxy page is at {paths}"),
            );
        }
        let head = match *req.method() {
            Method::GET => false,
            Method::HEAD => true,
            _ => {
                let mut response = error(
                    StatusCode::METHOD_NOT_ALLOWED,
                    "the proxy page takes GET or HEAD",
                );
                response.headers_mut().insert(header::ALLOW, ALLOW_GET_HEAD);
                return response;
            }
        };
        let page = match self.rendered(routed, req.uri().query().unwrap_or("")) {
            Ok(page) => page,
            Err(refused) => {
                match &refused {
                    PageError::Embedder(named) => embedder_refused(host, named),
                    _ => tracing::debug!(reason = %refused, "refused a page's query"),
                }
                return error(StatusCode::BAD_REQUEST, &refused.to_string());
            }
        };
        page_served(host, &page, req);
        let encoding = Encoding::accepted_by(req);
        let encoded = page.forms.encoded(&page.body, page.tag, encoding);
        let response = page_response(&page, encoded, head, encoding);
        host.caching
            .answer(req, &page.signature, &encoded.etag, response)
    }

    /// The page for a routed request's raw query, from the cache or built and cached. The
    /// query is read only for a page not in the cache.
    fn rendered(
        &self,
        routed: &Routed<'_, '_>,
        raw_query: &str,
    ) -> Result<Arc<RenderedPage>, PageError> {
        let now = unix_now();
        let Routed {
            index,
            host,
            served_as,
        } = routed;
        // A signature's verdict and the report endpoint's URL depend on the name served, so
        // such a host's pages are kept per name; every other host's are shared by its names.
        let cache_key = if host.config.policy_keys.is_some() || host.config.csp_reports {
            Cow::Owned(format!("{served_as}\n{raw_query}"))
        } else {
            Cow::Borrowed(raw_query)
        };
        self.pages.get_or_render(*index, &cache_key, now, || {
            let query = PageQuery::parse(raw_query, self.max_query_bytes)?;
            render::render(
                &self.page,
                host,
                served_as,
                &query,
                now,
                self.max_query_bytes,
            )
        })
    }
}
