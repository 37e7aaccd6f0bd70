//! The front door: every request the public listener takes comes in here, and leaves as one
//! answer, the same way for HTTP/1 and HTTP/2:
//!
//! 1. refused, when the head reader refused its head or its fields are over the limit
//!    (`refusal`);
//! 2. routed to its host entry, once (`route`);
//! 3. the page (`page`), or a CSP report (`reports`), read before it is answered;
//! 4. finished: charged to its connection, counted, HSTS, and cookies cleared.

use std::sync::Arc;

use http::header::{self, HeaderValue};
use http::{Request, Response, StatusCode, Version};
use hyper::body::Incoming;

use crate::answer::{Answer, PerConnection};
use crate::body::{Body, Unsent};
use crate::reports::REPORT_PATH;

use super::headers::{CLEAR_COOKIES, CLEAR_SITE_DATA, RETRY_AFTER, error};
use super::host::Host;
use super::route::Routed;
use super::{Service, Transport, Turned};

const CLOSE: HeaderValue = HeaderValue::from_static("close");

impl Service {
    /// Answers one request of a connection: a report once its body is read, any other at once.
    pub(crate) fn serve(
        self: &Arc<Self>,
        req: Request<Incoming>,
        transport: Transport<'_>,
        connection: &PerConnection,
    ) -> Answer {
        if req.uri().path() != REPORT_PATH {
            return Answer::ready(self.handle_on(&req, transport, Some(&connection.unsent)));
        }
        let had_cookies = req.headers().contains_key(header::COOKIE);
        let http1 = req.version() < Version::HTTP_2;
        let (parts, body) = req.into_parts();
        let head = Request::from_parts(parts, ());
        let reading = match self.admit(&head, transport) {
            Ok(routed) => self.report(&head, routed, body, connection),
            Err(turned) => Err(turned),
        };
        let reading = match reading {
            Ok(reading) => reading,
            Err((host, response)) => {
                let response = closing_if(http1, response);
                let unsent = Some(&connection.unsent);
                return Answer::ready(self.finish(host, had_cookies, response, unsent));
            }
        };
        let service = self.clone();
        let unsent = connection.unsent.clone();
        Answer::Reading(Box::pin(async move {
            let (index, response) = reading.await;
            let response = if response.status().is_success() {
                response
            } else {
                closing_if(http1, response)
            };
            let host = Some(&service.hosts[index]);
            service.finish(host, had_cookies, response, Some(&unsent))
        }))
    }

    /// Answers one request. Never fails: every problem is a 4xx with a plain-text reason.
    pub fn handle<B>(&self, req: &Request<B>) -> Response<Body> {
        self.handle_on(req, Transport::Plain, None)
    }

    /// Answers one request that arrived over `transport`, on a connection whose answers not
    /// yet read by its client are counted in `unsent`: one that holds too many gets a `503`.
    /// `serve` and the `headers` command both come here, so what `headers` prints is what
    /// `serve` sends.
    pub fn handle_on<B>(
        &self,
        req: &Request<B>,
        transport: Transport<'_>,
        unsent: Option<&Arc<Unsent>>,
    ) -> Response<Body> {
        let (host, response) = match self.admit(req, transport) {
            Ok(routed) => (Some(routed.host), self.page(req, &routed)),
            Err(turned) => turned,
        };
        let had_cookies = req.headers().contains_key(header::COOKIE);
        self.finish(host, had_cookies, response, unsent)
    }

    /// Steps 1 and 2: the request routed, or the answer that refuses it.
    #[allow(clippy::result_large_err)]
    fn admit<'r, B>(
        &self,
        req: &'r Request<B>,
        transport: Transport<'_>,
    ) -> Result<Routed<'_, 'r>, Turned<'_>> {
        if let Some(refusal) = self.refusal_of(req) {
            return Err((None, self.refused(refusal)));
        }
        self.route(req, transport)
    }

    /// Step 4, what every answer gets: charged to its connection, counted, HSTS, and cookies
    /// cleared.
    fn finish(
        &self,
        host: Option<&Host>,
        had_cookies: bool,
        response: Response<Body>,
        unsent: Option<&Arc<Unsent>>,
    ) -> Response<Body> {
        let mut response = match unsent {
            Some(unsent) => charged(response, unsent),
            None => response,
        };
        let counters = host.map_or(&self.unmatched, |host| &host.counters);
        counters.count_response(response.status());
        let headers = response.headers_mut();
        if let Some(hsts) = &self.hsts {
            headers.insert(header::STRICT_TRANSPORT_SECURITY, hsts.clone());
        }
        // SECURITY: this service sets no cookie, so any a request carries were set by a view
        // for the sandbox name (or its parent), where every other MCP server's view can read
        // them and a flood of them can cost views their pages. Each answer clears them, and no
        // cache keeps it (`caching` for a page; no other answer is kept).
        if had_cookies {
            headers.insert(CLEAR_SITE_DATA, CLEAR_COOKIES);
        }
        response
    }
}

/// `response`, with its body charged to its connection; a `503` if the connection already
/// holds as much as it may.
///
/// SECURITY: a client that never reads (an HTTP/2 client that keeps every stream's window
/// closed, an HTTP/1 client that stops reading) would otherwise make the service hold a page
/// per stream, each of them unique if every query differs: megabytes per connection.
fn charged(response: Response<Body>, unsent: &Arc<Unsent>) -> Response<Body> {
    let (parts, body) = response.into_parts();
    match body.charge_to(unsent) {
        Ok(body) => Response::from_parts(parts, body),
        Err(_) => {
            let reason = format!(
                "this connection holds {} bytes of answers its client has not read, the most it may (limits.max_unsent_bytes): read them, or use another connection",
                unsent.bytes()
            );
            let mut response = error(StatusCode::SERVICE_UNAVAILABLE, &reason);
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, RETRY_AFTER);
            response
        }
    }
}

/// SECURITY: a refused report's body may be unread, in part or whole (refused before it was
/// read, cut at the size cap or the deadline), and over HTTP/1 what follows it on the
/// connection is that body, never a request: so the answer closes the connection, and says so.
/// (The connection would close anyway, see `io::head::starts`; HTTP/2 frames each stream's body
/// apart, and forbids the field.)
fn closing_if(http1: bool, mut response: Response<Body>) -> Response<Body> {
    if http1 {
        response.headers_mut().insert(header::CONNECTION, CLOSE);
    }
    response
}
