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

/// A report that may be read: for whom, and how its body is written.
pub(super) struct Admitted {
    index: usize,
    target: ReportTarget,
    media_type: MediaType,
}

impl Service {
    /// The routed report, or the answer that refuses it before its body is read.
    #[allow(clippy::result_large_err)]
    pub(super) fn admit_report<'s, B>(
        &'s self,
        req: &Request<B>,
        routed: Routed<'s, '_>,
    ) -> Result<Admitted, Turned<'s>> {
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
        Ok(Admitted {
            index: routed.index,
            target,
            media_type,
        })
    }

    /// Reads an admitted report's body and takes it: its answer, and the host it was for.
    pub(super) fn receive_report(
        self: &Arc<Self>,
        admitted: Admitted,
        body: Incoming,
        connection: &PerConnection,
    ) -> impl Future<Output = (usize, Response<Body>)> + Send + 'static {
        let service = self.clone();
        let per_connection = connection.reports.clone();
        async move {
            let intake = &service.reports;
            let timeout = service.report_read_timeout;
            let Admitted {
                index,
                target,
                media_type,
            } = admitted;
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
        }
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
