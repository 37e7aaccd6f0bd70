//! Request heads on real sockets: cookies of any size cost a view nothing over HTTP/1 and up to
//! the browsers' partitioned-cookie cap over HTTP/2; every refusal, whatever refused it, is the
//! service's answer with the security headers (and HSTS over TLS).

mod common;

use bytes::Bytes;
use common::net::{Running, page_request, send, tls_client};
use common::{TWO_HOSTS, config, write_cert};
use http::{HeaderValue, StatusCode, header};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Writes `request` on a new connection, closes its sending side (a partial head then gets no
/// answer, as from hyper) and reads the answer to the end.
async fn raw(running: &Running, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(running.addr).await.unwrap();
    let _ = stream.write_all(request).await;
    let _ = stream.shutdown().await;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        stream.read_to_end(&mut answer),
    )
    .await;
    assert!(read.is_ok(), "the server answered and closed within 10 s");
    String::from_utf8_lossy(&answer).into_owned()
}

fn head_of(answer: &str) -> &str {
    answer.split("\r\n\r\n").next().unwrap_or_default()
}

fn assert_error_headers(answer: &str, status: &str, reason: &str) {
    let head = head_of(answer).to_ascii_lowercase();
    assert!(
        answer.starts_with(&format!("HTTP/1.1 {status}")),
        "{answer}"
    );
    assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    assert!(
        head.contains("content-security-policy: default-src 'none'; frame-ancestors 'none'"),
        "{head}"
    );
    assert!(answer.contains(reason), "{answer}");
}

#[tokio::test]
async fn http1_refusals_are_the_services_own_answers() {
    let running = Running::start(&config(TWO_HOSTS)).await;
    let over_query = format!(
        "GET /?csp={} HTTP/1.1\r\nHost: chat.sandbox.test\r\nConnection: close\r\n\r\n",
        "a".repeat(17_000)
    );
    let over_target = format!(
        "GET /?csp={} HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n",
        "a".repeat(64_000)
    );
    let over_fields = format!(
        "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nX-Big: {}\r\n\r\n",
        "b".repeat(17_000)
    );
    // The most fields a head may have, and one more: hyper reads the first, and the second is
    // the service's own 431, never hyper's bare one.
    let fields = |n: usize| {
        let extra: String = (1..n).map(|i| format!("X-{i}: v\r\n")).collect();
        format!("GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n{extra}Connection: close\r\n\r\n")
    };
    let most = raw(&running, fields(99).as_bytes()).await;
    assert!(most.starts_with("HTTP/1.1 200 OK"), "{}", head_of(&most));
    let too_many = fields(100);
    let cases = [
        (too_many.as_str(), "431", "or more than 100"),
        (
            over_query.as_str(),
            "400",
            "the limit is 16384 (limits.max_query_bytes)",
        ),
        (over_target.as_str(), "400", "(limits.max_query_bytes)"),
        (over_fields.as_str(), "431", "limits.max_header_bytes"),
        (
            "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "400",
            "not valid HTTP/1.1",
        ),
        (
            "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nContent-Length: 3\r\n\r\nabc",
            "400",
            "carries no body",
        ),
        // hyper refuses an empty or blank length itself, with a bare 400.
        (
            "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nContent-Length:\r\n\r\n",
            "400",
            "not valid HTTP/1.1",
        ),
        (
            "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nContent-Length:  \r\n\r\n",
            "400",
            "not valid HTTP/1.1",
        ),
        // A bare CR in a cookie: one field here, two for a front end that ends lines at CR.
        (
            "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nCookie: a\rContent-Length: 40\r\n\r\n",
            "400",
            "not valid HTTP/1.1",
        ),
        (
            "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nCookie: a\x00b\x7f\r\n\r\n",
            "400",
            "not valid HTTP/1.1",
        ),
    ];
    for (request, status, reason) in cases {
        let answer = raw(&running, request.as_bytes()).await;
        assert_error_headers(&answer, status, reason);
    }
    running.stop().await;
}

#[tokio::test]
async fn a_target_at_the_highest_query_limit_is_answered_by_the_service() {
    let text = format!("{TWO_HOSTS}\n[limits]\nmax_query_bytes = 61438\n");
    let running = Running::start(&config(&text)).await;
    let cases = [
        (61_438, "csp is not valid JSON"),
        (61_439, "limits.max_query_bytes"),
        (65_600, "limits.max_query_bytes"),
    ];
    for (query, reason) in cases {
        let request = format!(
            "GET /?csp={} HTTP/1.1\r\nHost: chat.sandbox.test\r\nConnection: close\r\n\r\n",
            "a".repeat(query - 4)
        );
        let answer = raw(&running, request.as_bytes()).await;
        assert_error_headers(&answer, "400", reason);
    }
    running.stop().await;
}

/// The answers in `answer` (status lines), and how many of them carry the service's headers.
fn answers_and_own(answer: &str) -> (usize, usize) {
    let lines = || answer.lines().map(str::to_ascii_lowercase);
    (
        lines().filter(|l| l.starts_with("http/1.")).count(),
        lines()
            .filter(|l| l == "x-content-type-options: nosniff")
            .count(),
    )
}

#[tokio::test]
async fn no_head_whatever_its_bytes_gets_an_answer_without_the_security_headers() {
    // SECURITY.md: every refusal is the service's own answer. Hostile heads drawn from the
    // property tests' pieces, each on a connection of its own: each answer must be the
    // service's.
    let running = Running::start(&config(TWO_HOSTS)).await;
    let mut seed: u64 = 0x5eed_0005;
    let mut below = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for _ in 0..400 {
        let head = common::heads::random_head(&mut below);
        let answer = raw(&running, &head).await;
        let (answers, own) = answers_and_own(&answer);
        assert_eq!(
            answers,
            own,
            "{:?}\n→ {answer}",
            String::from_utf8_lossy(&head)
        );
    }
    running.stop().await;
}

#[tokio::test]
async fn an_http1_cookie_flood_still_gets_the_page_and_is_cleared() {
    let running = Running::start(&config(TWO_HOSTS)).await;
    // Far beyond any limit: the value is dropped as it streams by, never buffered.
    let flood = (0..250)
        .map(|i| format!("c{i}={}", "v".repeat(3000)))
        .collect::<Vec<_>>()
        .join("; ");
    let request = format!(
        "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nCookie: {flood}\r\nConnection: close\r\n\r\n"
    );
    let answer = raw(&running, request.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{}", head_of(&answer));
    assert!(
        head_of(&answer)
            .to_ascii_lowercase()
            .contains("clear-site-data: \"cookies\""),
        "{}",
        head_of(&answer)
    );
    assert!(answer.ends_with("</html>\n"), "the whole page");
    running.stop().await;
}

/// The service over TLS for chat.sandbox.test (with `limits`, a `[limits]` table or nothing),
/// and a way to connect to it with an ALPN protocol.
struct TlsService {
    running: Running,
    der: Vec<u8>,
    _dir: tempfile::TempDir,
}

impl TlsService {
    async fn start(limits: &str) -> TlsService {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key, der) = write_cert(dir.path(), "sandbox", &["chat.sandbox.test"]);
        let text = format!("{TWO_HOSTS}\n[tls]\ncert = {cert:?}\nkey = {key:?}\n{limits}");
        let running = Running::start(&config(&text)).await;
        TlsService {
            running,
            der,
            _dir: dir,
        }
    }

    async fn connect(&self, alpn: &[u8]) -> tokio_rustls::client::TlsStream<TcpStream> {
        let tcp = TcpStream::connect(self.running.addr).await.unwrap();
        let name = ServerName::try_from("chat.sandbox.test").unwrap();
        tls_client(self.der.clone(), &[alpn])
            .connect(name, tcp)
            .await
            .unwrap()
    }
}

#[tokio::test]
async fn http2_takes_the_partitioned_cookie_cap_and_refuses_with_headers() {
    let service = TlsService::start("").await;
    let h2 = || service.connect(b"h2");
    // What Chromium sends at its cap: 180 partitioned cookies, 10 KiB in all, one field each.
    let mut request = page_request("chat.sandbox.test", true, "/");
    for i in 0..180 {
        let crumb = format!("c{i:03}={}", "v".repeat(52));
        request
            .headers_mut()
            .append(header::COOKIE, HeaderValue::from_str(&crumb).unwrap());
    }
    let (parts, _) = send(h2().await, true, request).await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(parts.headers["clear-site-data"], "\"cookies\"");

    let over_query = format!("/?csp={}", "a".repeat(17_000));
    let (parts, body) = send(
        h2().await,
        true,
        page_request("chat.sandbox.test", true, &over_query),
    )
    .await;
    assert_refusal(
        &parts,
        &body,
        StatusCode::BAD_REQUEST,
        "(limits.max_query_bytes)",
    );

    let mut big = page_request("chat.sandbox.test", true, "/");
    let value = HeaderValue::from_str(&"b".repeat(17_000)).unwrap();
    big.headers_mut().insert("x-big", value);
    let (parts, body) = send(h2().await, true, big).await;
    assert_refusal(
        &parts,
        &body,
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        "limits.max_header_bytes",
    );
    service.running.stop().await;
}

fn assert_refusal(parts: &http::response::Parts, body: &Bytes, status: StatusCode, reason: &str) {
    assert_eq!(parts.status, status);
    let h = &parts.headers;
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(
        h[header::CONTENT_SECURITY_POLICY],
        "default-src 'none'; frame-ancestors 'none'"
    );
    assert!(
        h.contains_key(header::STRICT_TRANSPORT_SECURITY),
        "HSTS over TLS"
    );
    let text = String::from_utf8_lossy(body);
    assert!(text.contains(reason), "{text}");
}

#[tokio::test]
async fn tls_http1_refusals_carry_hsts() {
    let service = TlsService::start("").await;
    let mut tls = service.connect(b"http/1.1").await;
    tls.write_all(b"GET / HTTP/1.1\r\nBad Name: x\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    assert_error_headers(&answer, "400", "not valid HTTP/1.1");
    assert!(
        head_of(&answer)
            .to_ascii_lowercase()
            .contains("strict-transport-security: max-age="),
        "{answer}"
    );
    service.running.stop().await;
}

#[tokio::test]
async fn http2_takes_a_firefox_sized_flood_when_h2_cookie_bytes_allows_it() {
    let service = TlsService::start("[limits]\nh2_cookie_bytes = 1048576\n").await;
    let tls = service.connect(b"h2").await;
    // What Firefox ESR 153 sent after a view planted its fill: 169 cookies of 4 000 bytes.
    let mut request = page_request("chat.sandbox.test", true, "/");
    for i in 0..169 {
        let crumb = format!("c{i:03}={}", "v".repeat(4000));
        request
            .headers_mut()
            .append(header::COOKIE, HeaderValue::from_str(&crumb).unwrap());
    }
    let (parts, _) = send(tls, true, request).await;
    assert_eq!(parts.status, StatusCode::OK);
    assert_eq!(parts.headers["clear-site-data"], "\"cookies\"");
    service.running.stop().await;
}
