//! A page answer read as a browser and the relay read it: body, policies, page config.

use bytes::Bytes;
use http::{Response, header};
use http_body_util::BodyExt;
use mcp_sandbox_proxy::Body;

pub fn body(response: Response<Body>) -> String {
    let bytes = futures_body(response.into_body());
    String::from_utf8(bytes.to_vec()).unwrap()
}

pub fn futures_body(body: Body) -> Bytes {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async { body.collect().await.unwrap().to_bytes() })
}

/// The policies a response enforces: every `Content-Security-Policy` header, each split at the
/// commas that separate policies. The page sends one header holding two.
pub fn csp_headers(response: &Response<Body>) -> Vec<String> {
    let headers: Vec<_> = response
        .headers()
        .get_all(header::CONTENT_SECURITY_POLICY)
        .iter()
        .collect();
    assert_eq!(headers.len(), 1, "one Content-Security-Policy header");
    headers
        .iter()
        .flat_map(|v| v.to_str().unwrap().split(", "))
        .map(str::to_owned)
        .collect()
}

/// The page's configuration JSON as the relay reads it.
pub fn page_config(page: &str) -> serde_json::Value {
    let start = page.find(r#"id="sandbox-config">"#).unwrap() + r#"id="sandbox-config">"#.len();
    let end = start + page[start..].find("</script>").unwrap();
    serde_json::from_str(&page[start..end]).unwrap()
}
