//! The report endpoint's side of the service: what is checked before a report's body is read,
//! the reading, and the answer, which says nothing but whether it was taken.

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;

use crate::answer::PerConnection;
use crate::body::Body;
use crate::reports::{self, MediaType, Refused, ReportTarget, Source};

use super::headers::{error, plain_text};
use super::route::Routed;
use super::{Service, Turned};

const ALLOW_POST: HeaderValue = HeaderValue::from_static("POST");

impl Service {
    /// The routed report read and taken, with its answer and the host it was for; or the
    /// answer that refuses it before its body is read.
    #[allow(clippy::result_large_err)]
    pub(super) fn report<'s>(
        self: &'s Arc<Self>,
        req: &Request<()>,
        routed: Routed<'s, '_>,
        body: Incoming,
        connection: &PerConnection,
    ) -> Result<impl Future<Output = (usize, Response<Body>)> + Send + 'static, Turned<'s>> {
        let (target, media_type) = self.admit_report(req, &routed)?;
        let service = self.clone();
        let per_connection = connection.reports.clone();
        let index = routed.index;
        Ok(async move {
            let intake = &service.reports;
            let timeout = service.report_read_timeout;
            let taken =
                reports::receive(intake, &target, media_type, body, &per_connection, timeout).await;
            let response = match taken {
                Ok(_) => no_content(),
                Err(refused) => {
                    intake.count_refused(refused);
                    refusal(refused)
                }
            };
            (index, response)
        })
    }

    /// For whom a routed report is, and how its body is written; or the answer that refuses
    /// it before its body is read.
    #[allow(clippy::result_large_err)]
    fn admit_report<'s>(
        &'s self,
        req: &Request<()>,
        routed: &Routed<'s, '_>,
    ) -> Result<(ReportTarget, MediaType), Turned<'s>> {
        let host = routed.host;
        let refuse = |refused: Refused| {
            self.reports.count_refused(refused);
            (Some(host), refusal(refused))
        };
        if !host.config.csp_reports {
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
        let target = ReportTarget {
            host: host.name.clone(),
            violations: host.counters.violations.clone(),
            label: routed.label().map(Box::from),
            source: Source::from_query(req.uri().query()),
        };
        Ok((target, media_type))
    }
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
pub(super) fn refusal(refused: Refused) -> Response<Body> {
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
