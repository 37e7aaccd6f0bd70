//! Requests refused before they are routed: a head the head reader refused (HTTP/1: the
//! [`Refusal`] comes with the request, see `limits`), or header fields over the limit
//! (HTTP/2, which has no head reader). Each gets its own status and a reason that names the
//! limit, never what the client sent.

use http::{Request, Response, StatusCode, header};

use crate::body::Body;
use crate::limits::{MAX_FIELDS, REQUEST_LINE_SLACK, Refusal};
use crate::reports::Refused;

use super::Service;
use super::headers::error;
use super::reports::refusal as report_refusal;

impl Service {
    /// Why `req` is refused before it is routed, if it is.
    pub(super) fn refusal_of<B>(&self, req: &Request<B>) -> Option<Refusal> {
        if let Some(refusal) = req.extensions().get::<Refusal>() {
            return Some(*refusal);
        }
        (field_bytes(req) > self.max_header_bytes).then_some(Refusal::FieldsTooLarge)
    }

    /// The answer to a refused request.
    pub(super) fn refused(&self, refusal: Refusal) -> Response<Body> {
        let (status, reason) = match refusal {
            Refusal::FieldsTooLarge => (
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                format!(
                    "the request's header fields are over limits.max_header_bytes ({} bytes, cookies not counted) or more than {MAX_FIELDS}",
                    self.max_header_bytes
                ),
            ),
            Refusal::TargetTooLong => (
                StatusCode::BAD_REQUEST,
                format!(
                    "the request target is over {} bytes; the query limit is {} (limits.max_query_bytes)",
                    self.max_query_bytes + REQUEST_LINE_SLACK,
                    self.max_query_bytes
                ),
            ),
            Refusal::Malformed => (
                StatusCode::BAD_REQUEST,
                "the request is not valid HTTP/1.1".to_owned(),
            ),
            Refusal::Body => (
                StatusCode::BAD_REQUEST,
                "a request to this service carries no body, but a CSP report's (POST /csp-report, with Content-Length)".to_owned(),
            ),
            Refusal::ReportTooLarge => {
                self.reports.count_refused(Refused::TooLarge);
                return report_refusal(Refused::TooLarge);
            }
        };
        error(status, &reason)
    }
}

/// Bytes of the request's header fields as a client wrote them (`name: value` and a line
/// ending), cookies not counted: they are limited apart (see `io::head`). Pseudo-headers of
/// HTTP/2 are not fields here; `:path` is limited with the query.
fn field_bytes<B>(req: &Request<B>) -> usize {
    req.headers()
        .iter()
        .filter(|(name, _)| *name != header::COOKIE)
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum()
}
