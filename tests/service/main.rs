//! The service without sockets: routing, status codes, every header, the rendered page.

#[path = "../common/mod.rs"]
mod common;

use common::page::{body, csp_headers, futures_body, page_config};
use common::{TWO_HOSTS, config, csp_query, two_hosts_with};
use http::{Method, Request, Response, StatusCode, header};
use mcp_sandbox_proxy::{Body, Config, Refusal, Service, Transport, UPGRADE_PARAMETER};

mod caching;
mod embedders;
mod headers;
mod policy;
mod routing;

fn service() -> Service {
    Service::new(&config(TWO_HOSTS))
}

fn request(method: Method, host: &str, path_and_query: &str) -> Request<()> {
    Request::builder()
        .method(method)
        .uri(path_and_query)
        .header(header::HOST, host)
        .body(())
        .unwrap()
}

fn get(host: &str, path_and_query: &str) -> Response<Body> {
    service().handle(&request(Method::GET, host, path_and_query))
}

fn assert_security_headers(response: &Response<Body>, what: &str) {
    let h = response.headers();
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{what}");
    assert_eq!(
        h[header::CONTENT_SECURITY_POLICY],
        "default-src 'none'; frame-ancestors 'none'",
        "{what}"
    );
}
