//! Real sockets on port 0: HTTP/1.1 and HTTP/2, plain and over TLS, with a real client.

mod common;

use bytes::Bytes;
use common::net::{Running, page_request, send, tls_client};
use common::{TWO_HOSTS, config, csp_query, two_hosts_with, write_cert};
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
    assert_eq!(policies[0], common::frame_policy(origin, served_as));
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

/// The two hosts (which take reports), one that takes none, and a head deadline short enough that a
/// stalled body is refused within the test.
fn desync_hosts() -> String {
    let deadline = "[limits]\nheader_read_timeout = \"1s\"\n";
    two_hosts_with("", &format!("{deadline}{}", common::QUIET_HOST))
}

/// What an attacker hides in the part of a body the service has not read: a page with a
/// policy of its choice, and a chunked request the head reader refuses.
fn hidden_requests() -> String {
    let csp = csp_query(r#"{"connectDomains":["https://smuggled.example"]}"#);
    format!(
        "GET /?{csp} HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n\
         GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    )
}

/// One early answer: what is sent before the body stalls, and the status it is answered.
#[derive(Clone)]
struct EarlyAnswer {
    name: &'static str,
    /// Complete requests sent first, on the same connection.
    before: String,
    /// The head of the request whose body is left unfinished; its `Content-Length` counts the
    /// first part of the body and the hidden requests.
    head: String,
    status: u16,
}

const BODY_START: &str = "{\"csp-report\":{";

fn early_answers() -> Vec<EarlyAnswer> {
    let length = BODY_START.len() + hidden_requests().len();
    let report = |host: &str, content_type: &str| {
        format!(
            "POST /csp-report HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n"
        )
    };
    let full_report = {
        let body = r#"{"csp-report":{"effective-directive":"img-src","blocked-uri":"https://a.example/"}}"#;
        format!(
            "POST /csp-report HTTP/1.1\r\nHost: chat.sandbox.test\r\nContent-Type: application/csp-report\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    };
    let case = |name, before: String, head: String, status| EarlyAnswer {
        name,
        before,
        head,
        status,
    };
    vec![
        case(
            "no host",
            String::new(),
            report("", "application/csp-report").replace("Host: \r\n", ""),
            400,
        ),
        case(
            "reports off",
            String::new(),
            report("quiet.sandbox.test", "application/csp-report"),
            404,
        ),
        case(
            "stalled",
            String::new(),
            report("chat.sandbox.test", "application/csp-report"),
            408,
        ),
        case(
            "too large",
            String::new(),
            report("chat.sandbox.test", "application/csp-report").replace(
                &format!("Content-Length: {length}"),
                "Content-Length: 70000",
            ),
            413,
        ),
        case(
            "media type",
            String::new(),
            report("chat.sandbox.test", "text/plain"),
            415,
        ),
        case(
            "misdirected",
            String::new(),
            report("nowhere.sandbox.test", "application/csp-report"),
            421,
        ),
        // The connection's burst of reports is 64: the next is refused before its body is read.
        case(
            "rate",
            full_report.repeat(70),
            report("chat.sandbox.test", "application/csp-report"),
            429,
        ),
        case(
            "page with a body",
            String::new(),
            format!(
                "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nContent-Length: {length}\r\n\r\n"
            ),
            400,
        ),
    ]
}

/// The status lines in `answers`, in order.
fn statuses(answers: &[u8]) -> Vec<u16> {
    let text = String::from_utf8_lossy(answers);
    text.match_indices("HTTP/1.1 ")
        .filter_map(|(at, _)| text.get(at + 9..at + 12)?.parse().ok())
        .collect()
}

/// Sends `case` on `stream`: the requests before, the head and the start of its body; reads
/// its answer; then sends the rest of the body (the hidden requests) and a request after it,
/// and reads whatever else the connection answers until it ends. What went wrong, if anything.
async fn early_answer_then_hidden<S>(mut stream: S, case: &EarlyAnswer) -> Result<(), String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use std::time::Duration;
    let first = format!("{}{}{BODY_START}", case.before, case.head);
    stream.write_all(first.as_bytes()).await.unwrap();
    let mut answered = Vec::new();
    let wanted = case.before.matches("HTTP/1.1\r\n").count() + 1;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while statuses(&answered).len() < wanted || !answered.ends_with(b"\n") {
        let mut chunk = [0u8; 4096];
        match tokio::time::timeout_at(deadline, stream.read(&mut chunk)).await {
            Ok(Ok(n)) if n > 0 => answered.extend_from_slice(&chunk[..n]),
            _ => break,
        }
    }
    // Give a wrongly kept connection time to rest, as one that waits between requests does.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let rest = format!(
        "{}GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n",
        hidden_requests()
    );
    let _ = stream.write_all(rest.as_bytes()).await;
    let mut after = Vec::new();
    let mut chunk = [0u8; 4096];
    let ended = loop {
        match tokio::time::timeout(Duration::from_secs(3), stream.read(&mut chunk)).await {
            Ok(Ok(0) | Err(_)) => break true,
            Ok(Ok(n)) => after.extend_from_slice(&chunk[..n]),
            Err(_) => break false,
        }
    };
    let seen = statuses(&answered);
    let text = String::from_utf8_lossy(&answered).to_ascii_lowercase();
    let mut wrong = Vec::new();
    if seen.last() != Some(&case.status) {
        wrong.push(format!("answered {seen:?}"));
    }
    let last_head = text.rsplit("http/1.1 ").next().unwrap_or_default();
    let last_head = last_head.split("\r\n\r\n").next().unwrap_or_default();
    if !last_head.contains("\r\nconnection: close\r\n") {
        wrong.push("its answer does not say it closes the connection".to_owned());
    }
    if text.matches("x-content-type-options: nosniff").count() != seen.len() {
        wrong.push("an answer without the security headers".to_owned());
    }
    if !after.is_empty() {
        let smuggled = String::from_utf8_lossy(&after).contains("smuggled.example");
        let after = statuses(&after);
        wrong.push(format!(
            "then answered {after:?} (the smuggled policy served: {smuggled})"
        ));
    }
    if !ended {
        wrong.push("the connection stayed open".to_owned());
    }
    match wrong.is_empty() {
        true => Ok(()),
        false => Err(format!("{}: {}", case.name, wrong.join("; "))),
    }
}

/// Runs every early answer at once, each on a connection of its own from `connect`, and fails
/// naming every case that went wrong.
async fn nothing_answered_after_an_early_answer<F, Fut, S>(connect: F, over: &str)
where
    F: Fn(EarlyAnswer) -> Fut,
    Fut: std::future::Future<Output = S> + Send + 'static,
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send,
{
    let mut runs = tokio::task::JoinSet::new();
    for case in early_answers() {
        let connecting = connect(case.clone());
        runs.spawn(async move { early_answer_then_hidden(connecting.await, &case).await });
    }
    let wrong: Vec<String> = runs
        .join_all()
        .await
        .into_iter()
        .filter_map(Result::err)
        .collect();
    assert!(wrong.is_empty(), "over {over}:\n{}", wrong.join("\n"));
}

#[tokio::test]
async fn a_request_hidden_in_an_unread_body_is_never_answered_over_plain_http1() {
    let running = Running::start(&config(&desync_hosts())).await;
    let addr = running.addr;
    let connect = move |_| async move { TcpStream::connect(addr).await.unwrap() };
    nothing_answered_after_an_early_answer(connect, "plain HTTP/1.1").await;
    running.stop().await;
}

#[tokio::test]
async fn a_request_hidden_in_an_unread_body_is_never_answered_over_tls_http1() {
    let dir = tempfile::tempdir().unwrap();
    let names = [
        "chat.sandbox.test",
        "quiet.sandbox.test",
        "nowhere.sandbox.test",
    ];
    let (cert, key, der) = write_cert(dir.path(), "sandbox", &names);
    let text = format!(
        "{}\n[tls]\ncert = {cert:?}\nkey = {key:?}\n",
        desync_hosts()
    );
    let running = Running::start(&config(&text)).await;
    let addr = running.addr;
    let connect = move |case: EarlyAnswer| {
        let connector = tls_client(der.clone(), &[b"http/1.1"]);
        async move {
            // The name the request's Host names, so that only the case's own rule refuses it.
            let host = case
                .head
                .split("Host: ")
                .nth(1)
                .and_then(|h| h.split('\r').next());
            let name =
                ServerName::try_from(host.unwrap_or("chat.sandbox.test").to_owned()).unwrap();
            let tcp = TcpStream::connect(addr).await.unwrap();
            connector.connect(name, tcp).await.unwrap()
        }
    };
    nothing_answered_after_an_early_answer(connect, "TLS HTTP/1.1").await;
    running.stop().await;
}

#[tokio::test]
async fn a_report_whose_body_is_slow_keeps_its_connection() {
    use std::time::Duration;
    // The default 10 s deadline: the pause below is far inside it, however loaded the machine.
    let running = Running::start(&config(TWO_HOSTS)).await;
    let mut stream = TcpStream::connect(running.addr).await.unwrap();
    let body =
        r#"{"csp-report":{"effective-directive":"img-src","blocked-uri":"https://a.example/"}}"#;
    let head = format!(
        "POST /csp-report HTTP/1.1\r\nHost: chat.sandbox.test\r\nContent-Type: application/csp-report\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let (start, end) = body.split_at(10);
    stream
        .write_all(format!("{head}{start}").as_bytes())
        .await
        .unwrap();
    // Longer than a connection idles before it rests, within the body's deadline.
    tokio::time::sleep(Duration::from_millis(400)).await;
    stream.write_all(end.as_bytes()).await.unwrap();
    let mut answer = vec![0u8; 4096];
    let n = stream.read(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer[..n]).to_ascii_lowercase();
    assert!(answer.starts_with("http/1.1 204"), "{answer}");
    assert!(!answer.contains("connection: close"), "{answer}");
    let next = "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nConnection: close\r\n\r\n";
    stream.write_all(next.as_bytes()).await.unwrap();
    let mut page = Vec::new();
    stream.read_to_end(&mut page).await.unwrap();
    assert!(
        page.starts_with(b"HTTP/1.1 200"),
        "{:?}",
        String::from_utf8_lossy(&page[..page.len().min(200)])
    );
    running.stop().await;
}
