//! The report endpoint's side of the service: which host entry and server label a report is
//! for, what is checked before its body is read, and the answer, which says nothing but
//! whether it was taken.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode, Version};
use hyper::body::Incoming;

use crate::answer::{Answer, PerConnection};
use crate::body::Body;
use crate::reports::{self, MediaType, REPORT_PATH, Refused, ReportTarget, Source};
use crate::routing::route_key;

use super::headers::{error, plain_text};
use super::{Entry, Service, Transport, Turned};

const ALLOW_POST: HeaderValue = HeaderValue::from_static("POST");
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
        let (index, target, media_type) = match self.checked_report(&req, transport) {
            Ok(checked) => checked,
            Err((entry, response)) => {
                let response = closing_if(http1, response);
                let unsent = Some(&connection.unsent);
                return Answer::ready(self.finish(entry, had_cookies, response, unsent));
            }
        };
        let service = self.clone();
        let unsent = connection.unsent.clone();
        let per_connection = connection.reports.clone();
        let body = req.into_body();
        Answer::Reading(Box::pin(async move {
            let intake = &service.reports;
            let timeout = service.report_read_timeout;
            let taken =
                reports::receive(intake, &target, media_type, body, &per_connection, timeout).await;
            let response = match taken {
                Ok(_) => no_content(),
                Err(refused) => {
                    intake.count_refused(refused);
                    closing_if(http1, refusal(refused))
                }
            };
            let entry = Some(&service.entries[index]);
            service.finish(entry, had_cookies, response, Some(&unsent))
        }))
    }

    /// The report's host entry, target and media type, or the answer that refuses it before
    /// its body is read.
    #[allow(clippy::result_large_err)]
    fn checked_report<B>(
        &self,
        req: &Request<B>,
        transport: Transport<'_>,
    ) -> Result<(usize, ReportTarget, MediaType), Turned<'_>> {
        let (index, authority) = self.route_request(req, transport)?;
        let entry = &self.entries[index];
        let refuse = |refused: Refused| {
            self.reports.count_refused(refused);
            (Some(entry), refusal(refused))
        };
        if !entry.reports {
            return Err(refuse(Refused::Off));
        }
        if req.method() != Method::POST {
            return Err(refuse(Refused::Method));
        }
        let content_type = req.headers().get(header::CONTENT_TYPE);
        let Some(media_type) = content_type.and_then(|value| MediaType::of(value.as_bytes()))
        else {
            return Err(refuse(Refused::MediaType));
        };
        let served_as = route_key(authority, self.default_port);
        let target = ReportTarget {
            host: entry.name.clone(),
            violations: entry.counters.violations.clone(),
            label: entry.label_of(&served_as).map(Box::from),
            source: Source::from_query(req.uri().query()),
        };
        Ok((index, target, media_type))
    }
}

impl Entry {
    /// The server label of a per-server name: what `served_as` (a route key) has below the
    /// sandbox name. The router took it as one DNS label.
    fn label_of<'a>(&self, served_as: &'a str) -> Option<&'a str> {
        served_as
            .strip_suffix(&*self.sandbox)?
            .strip_suffix('.')
            .filter(|label| !label.is_empty())
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

/// A report taken: an empty `204`, with the headers of every answer that is not a page.
fn no_content() -> Response<Body> {
    let mut response = plain_text(StatusCode::NO_CONTENT, Bytes::new());
    let headers = response.headers_mut();
    headers.remove(header::CONTENT_TYPE);
    headers.remove(header::CONTENT_LENGTH);
    response
}

/// A report refused: its `4xx`, which names the rule and nothing the client sent.
fn refusal(refused: Refused) -> Response<Body> {
    let status = match refused {
        Refused::Method => StatusCode::METHOD_NOT_ALLOWED,
        Refused::MediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        Refused::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        Refused::Malformed => StatusCode::BAD_REQUEST,
        Refused::Slow => StatusCode::REQUEST_TIMEOUT,
        Refused::Connection | Refused::Rate => StatusCode::TOO_MANY_REQUESTS,
        Refused::Off => StatusCode::NOT_FOUND,
    };
    let mut response = error(status, &refused.to_string());
    if refused == Refused::Method {
        response.headers_mut().insert(header::ALLOW, ALLOW_POST);
    }
    response
}
