//! Real sockets on port 0: HTTP/1.1 and HTTP/2, plain and over TLS, with a real client.

mod common;

use bytes::Bytes;
use common::net::{Running, page_request, send, tls_client};
use common::{TWO_HOSTS, config, csp_query, write_cert};
use http::{StatusCode, Version, header};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn assert_page(parts: &http::response::Parts, body: &Bytes, origin: &str, served_as: &str) {
    assert_eq!(parts.status, StatusCode::OK);
    let csp: Vec<_> = parts
        .headers
        .get_all(header::CONTENT_SECURITY_POLICY)
        .iter()
        .collect();
    assert_eq!(csp.len(), 1, "one header");
    let policies: Vec<_> = csp[0].to_str().unwrap().split(", ").collect();
    assert_eq!(policies.len(), 2, "holding two policies");
    assert_eq!(policies[1], common::frame_policy(origin, served_as));
    assert!(
        std::str::from_utf8(body)
            .unwrap()
            .contains("sandbox-config")
    );
}

#[tokio::test]
async fn plain_http1_and_h2_serve_the_page() {
    let running = Running::start(&config(TWO_HOSTS)).await;
    let port = running.addr.port();
    for h2 in [false, true] {
        let authority = format!("chat.sandbox.test:{port}");
        // The sandbox names carry no port, so a request naming this port is misdirected...
        let stream = TcpStream::connect(running.addr).await.unwrap();
        let (parts, _) = send(stream, h2, page_request(&authority, h2, "/")).await;
        assert_eq!(parts.status, StatusCode::MISDIRECTED_REQUEST, "h2={h2}");
        // ...and one naming the sandbox is served.
        let stream = TcpStream::connect(running.addr).await.unwrap();
        let query = format!(
            "/?{}",
            csp_query(r#"{"connectDomains":["https://api.example.com"]}"#)
        );
        let (parts, body) = send(
            stream,
            h2,
            page_request("abc.studio.sandbox.test", h2, &query),
        )
        .await;
        let served_as = "https://abc.studio.sandbox.test";
        assert_page(&parts, &body, "https://studio.example.com", served_as);
        assert_eq!(
            parts.version,
            if h2 {
                Version::HTTP_2
            } else {
                Version::HTTP_11
            }
        );
        assert!(
            parts
                .headers
                .get(header::STRICT_TRANSPORT_SECURITY)
                .is_none()
        );
    }
    running.stop().await;
}

#[tokio::test]
async fn tls_negotiates_h2_and_http1_by_alpn() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, der) = write_cert(
        dir.path(),
        "sandbox",
        &[
            "chat.sandbox.test",
            "*.studio.sandbox.test",
            "studio.sandbox.test",
        ],
    );
    let text = format!(
        "{TWO_HOSTS}
[tls]
cert = {:?}
key = {:?}
",
        cert, key
    );
    let running = Running::start(&config(&text)).await;
    for (alpn, h2) in [(&b"h2"[..], true), (&b"http/1.1"[..], false)] {
        let connector = tls_client(der.clone(), &[alpn]);
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        let name = ServerName::try_from("x1.studio.sandbox.test").unwrap();
        let tls = connector.connect(name, tcp).await.unwrap();
        assert_eq!(tls.get_ref().1.alpn_protocol(), Some(alpn));
        let (parts, body) = send(
            tls,
            h2,
            page_request("x1.studio.sandbox.test", h2, "/sandbox.html"),
        )
        .await;
        let served_as = "https://x1.studio.sandbox.test";
        assert_page(&parts, &body, "https://studio.example.com", served_as);
        assert_eq!(
            parts.headers[header::STRICT_TRANSPORT_SECURITY],
            "max-age=31536000"
        );
    }
    running.stop().await;
}

#[tokio::test]
async fn tls_without_alpn_is_http1() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, der) = write_cert(dir.path(), "sandbox", &["chat.sandbox.test"]);
    let text = format!("{TWO_HOSTS}\n[tls]\ncert = {:?}\nkey = {:?}\n", cert, key);
    let running = Running::start(&config(&text)).await;
    let tcp = TcpStream::connect(running.addr).await.unwrap();
    let name = ServerName::try_from("chat.sandbox.test").unwrap();
    let tls = tls_client(der, &[]).connect(name, tcp).await.unwrap();
    let (parts, body) = send(tls, false, page_request("chat.sandbox.test", false, "/")).await;
    assert_page(
        &parts,
        &body,
        "https://chat.example.com",
        "https://chat.sandbox.test",
    );
    running.stop().await;
}

#[tokio::test]
async fn a_one_megabyte_query_is_a_4xx_not_a_crash() {
    let running = Running::start(&config(TWO_HOSTS)).await;
    // `http` itself refuses a URI this long, so the request is written by hand.
    let mut raw = TcpStream::connect(running.addr).await.unwrap();
    let request = format!(
        "GET /?csp={} HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n",
        "a".repeat(1 << 20)
    );
    let _ = raw.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = raw.read_to_end(&mut answer).await;
    let status_line = String::from_utf8_lossy(&answer[..answer.len().min(12)]).to_string();
    assert!(status_line.starts_with("HTTP/1.1 4"), "{status_line:?}");
    // The server still serves afterwards.
    let stream = TcpStream::connect(running.addr).await.unwrap();
    let (parts, _) = send(stream, false, page_request("chat.sandbox.test", false, "/")).await;
    assert_eq!(parts.status, StatusCode::OK);
    running.stop().await;
}
