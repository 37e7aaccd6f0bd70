//! The admin listener: `/livez`, `/readyz`, `/metrics` and `/csp-reports`, never on the
//! public listener.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};

use crate::body::Body;
use crate::metrics::Metrics;

const PROMETHEUS_TEXT: HeaderValue =
    HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");
const TEXT: HeaderValue = HeaderValue::from_static("text/plain; charset=utf-8");
const JSON: HeaderValue = HeaderValue::from_static("application/json");

#[derive(Debug)]
pub(crate) struct Admin {
    metrics: Arc<Metrics>,
    /// True once config and certificates are loaded and the listeners run; false again from
    /// the moment a drain starts.
    ready: Arc<AtomicBool>,
}

impl Admin {
    pub(crate) fn new(metrics: Arc<Metrics>, ready: Arc<AtomicBool>) -> Self {
        Admin { metrics, ready }
    }

    pub(crate) fn handle<B>(&self, req: &Request<B>) -> Response<Body> {
        if !matches!(*req.method(), Method::GET | Method::HEAD) {
            return text(StatusCode::METHOD_NOT_ALLOWED, "GET or HEAD\n");
        }
        match req.uri().path() {
            // Alive as long as this answers: the process is not wedged.
            "/livez" => text(StatusCode::OK, "ok\n"),
            "/readyz" if self.ready.load(Ordering::SeqCst) => text(StatusCode::OK, "ready\n"),
            "/readyz" => text(StatusCode::SERVICE_UNAVAILABLE, "not ready\n"),
            "/metrics" => {
                let mut response = Response::new(Body::new(Bytes::from(self.metrics.render())));
                response
                    .headers_mut()
                    .insert(header::CONTENT_TYPE, PROMETHEUS_TEXT);
                response
            }
            "/csp-reports" => {
                let body = crate::reports::table_json(&self.metrics.reports().table);
                let mut response = Response::new(Body::new(Bytes::from(body)));
                let headers = response.headers_mut();
                headers.insert(header::CONTENT_TYPE, JSON);
                headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                response
            }
            _ => text(
                StatusCode::NOT_FOUND,
                "not found: /livez, /readyz, /metrics, /csp-reports\n",
            ),
        }
    }
}

fn text(status: StatusCode, body: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, TEXT);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
