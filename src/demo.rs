//! The embedded default's demo host page: our own host embedding our own sample view
//! through the proxy. Only `serve` without `--config` binds it.

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Request, Response, StatusCode};
use serde_json::json;

use crate::body::Body;
use crate::page::script_safe_json;

const HOST_PAGE: &str = include_str!("../demo/host.html");
const SAMPLE_VIEW: &str = include_str!("../demo/view.html");
const CONFIG_SLOT: &str = "/*DEMO_CONFIG*/";

/// The demo page, rendered once: it never varies.
#[derive(Debug)]
pub(crate) struct DemoHost {
    page: Bytes,
    csp: HeaderValue,
}

impl DemoHost {
    /// `proxy_origin` is where the proxy listens, e.g. `http://localhost:8081`.
    pub(crate) fn new(proxy_origin: &str) -> Self {
        let config = json!({ "proxyOrigin": proxy_origin, "viewHtml": SAMPLE_VIEW });
        let page = HOST_PAGE.replacen(CONFIG_SLOT, &script_safe_json(&config), 1);
        let csp = format!(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-src {proxy_origin}; base-uri 'none'; form-action 'none'"
        );
        DemoHost {
            page: Bytes::from(page),
            // The proxy origin comes from a validated sandbox name: visible ASCII.
            csp: HeaderValue::from_str(&csp).expect("a validated sandbox name is visible ASCII"),
        }
    }

    pub(crate) fn handle<B>(&self, req: &Request<B>) -> Response<Body> {
        let found = matches!(req.uri().path(), "/" | "/index.html");
        let readable = matches!(*req.method(), Method::GET | Method::HEAD);
        if !found || !readable {
            let mut response = Response::new(Body::new(Bytes::from_static(b"not found\n")));
            *response.status_mut() = StatusCode::NOT_FOUND;
            return response;
        }
        let mut response = Response::new(Body::new(self.page.clone()));
        let headers = response.headers_mut();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        );
        headers.insert(header::CONTENT_SECURITY_POLICY, self.csp.clone());
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        headers.insert(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        );
        response
    }
}
