//! Deadlines, the connection cap, the admin listener and reloads, on real loopback sockets.
//! Every wait is bounded; nothing here measures speed.

mod common;

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use common::net::{Running, page_request, send, tls_client_trusting};
use common::{TWO_HOSTS, config, two_hosts_with, write_cert};
use http::StatusCode;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Long enough that a healthy test never hits it; short enough that a hang fails fast.
const BOUND: Duration = Duration::from_secs(10);

fn short_deadlines(extra: &str) -> String {
    deadlines(extra, "400ms", "400ms", "1500ms")
}

/// [`TWO_HOSTS`] with `extra` tables and these deadlines. A deadline a test does not probe is
/// kept long, so that a loaded machine cannot trip it.
fn deadlines(extra: &str, handshake: &str, header_read: &str, idle: &str) -> String {
    format!(
        "{TWO_HOSTS}{extra}\n[limits]\nhandshake_timeout = \"{handshake}\"\nheader_read_timeout = \"{header_read}\"\nidle_timeout = \"{idle}\"\n"
    )
}

/// Reads until the server closes the connection; the time it took, or `None` if it stayed open.
async fn closed_after<S: tokio::io::AsyncRead + Unpin>(stream: &mut S) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout(BOUND, stream.read(&mut buf)).await {
            Err(_) => return None,
            Ok(Ok(0)) | Ok(Err(_)) => return Some(start.elapsed()),
            Ok(Ok(_)) => continue,
        }
    }
}

/// Sends `bytes` one at a time, 100 ms apart, until the server stops reading.
async fn drip(stream: &mut TcpStream, bytes: &[u8]) -> usize {
    for (i, byte) in bytes.iter().enumerate() {
        if stream.write_all(&[*byte]).await.is_err() {
            return i;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut probe = [0u8; 1];
        if let Ok(Ok(0)) =
            tokio::time::timeout(Duration::from_millis(1), stream.peek(&mut probe)).await
        {
            return i + 1;
        }
    }
    bytes.len()
}

#[tokio::test]
async fn a_silent_client_is_cut_at_the_header_deadline() {
    let running = Running::start(&config(&short_deadlines(""))).await;
    // Plain TCP that sends nothing; and HTTP/2 that sends only its preface.
    let start = Instant::now();
    let mut silent = TcpStream::connect(running.addr).await.unwrap();
    let mut preface_only = TcpStream::connect(running.addr).await.unwrap();
    preface_only.write_all(H2_PREFACE).await.unwrap();
    for stream in [&mut silent, &mut preface_only] {
        assert!(
            closed_after(stream).await.is_some(),
            "the server closes a silent connection"
        );
        let after = start.elapsed();
        assert!(
            after >= Duration::from_millis(300),
            "cut by the deadline, not at once: {after:?}"
        );
    }
    running.stop().await;
}

#[tokio::test]
async fn a_slow_header_client_is_cut_over_http1_and_http2() {
    let running = Running::start(&config(&short_deadlines(""))).await;
    let head = b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
    let mut h1 = TcpStream::connect(running.addr).await.unwrap();
    let sent = drip(&mut h1, head).await;
    assert!(
        sent < head.len(),
        "cut after {sent} of {} bytes",
        head.len()
    );
    // HTTP/2: preface and an empty SETTINGS frame, then a HEADERS frame a byte at a time.
    let mut h2 = TcpStream::connect(running.addr).await.unwrap();
    h2.write_all(H2_PREFACE).await.unwrap();
    h2.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await.unwrap();
    let headers_frame = [0u8, 0, 40, 1, 4, 0, 0, 0, 1]
        .iter()
        .chain([0x82u8; 40].iter())
        .copied()
        .collect::<Vec<_>>();
    let sent = drip(&mut h2, &headers_frame).await;
    assert!(
        sent < headers_frame.len(),
        "h2 cut after {sent} of {} bytes",
        headers_frame.len()
    );
    running.stop().await;
}

#[tokio::test]
async fn tls_deadlines_cover_the_handshake_and_a_silent_client_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, der) = write_cert(dir.path(), "all", common::TWO_HOSTS_NAMES);
    // The handshakes that must succeed share this thread with the server: 3 s, not 400 ms.
    let tls = format!("[tls]\ncert = {cert:?}\nkey = {key:?}\n");
    let running = Running::start(&config(&deadlines(&tls, "3s", "400ms", "1500ms"))).await;
    let mut no_hello = TcpStream::connect(running.addr).await.unwrap();
    assert!(
        closed_after(&mut no_hello).await.is_some(),
        "no ClientHello: cut at the handshake deadline"
    );
    for alpn in [&b"h2"[..], &b"http/1.1"[..]] {
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        let connector = tls_client_trusting(std::slice::from_ref(&der), &[alpn]);
        let mut tls = connector
            .connect(ServerName::try_from("chat.sandbox.test").unwrap(), tcp)
            .await
            .unwrap();
        assert!(
            closed_after(&mut tls).await.is_some(),
            "silent after the handshake ({alpn:?}): cut"
        );
    }
    running.stop().await;
}

#[tokio::test]
async fn idle_keep_alive_lasts_the_idle_deadline_not_the_header_deadline() {
    let running = Running::start(&config(&deadlines("", "10s", "1s", "4s"))).await;
    let mut conn = TcpStream::connect(running.addr).await.unwrap();
    let request = b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n";
    conn.write_all(request).await.unwrap();
    read_response(&mut conn).await;
    // Idle longer than header_read_timeout (1s), well within idle_timeout (4s).
    tokio::time::sleep(Duration::from_millis(1500)).await;
    conn.write_all(request).await.unwrap();
    assert!(
        read_response(&mut conn).await.starts_with("HTTP/1.1 200"),
        "still open after the head deadline"
    );
    assert!(
        closed_after(&mut conn).await.is_some(),
        "closed once idle for idle_timeout"
    );
    running.stop().await;
}

#[tokio::test]
async fn a_head_begun_in_the_read_that_ended_the_last_is_held_to_the_header_deadline() {
    // One write: a whole request and the first bytes of the next. The second head began, so
    // the header deadline (1 s) holds it, not the idle one (20 s).
    let running = Running::start(&config(&deadlines("", "10s", "1s", "20s"))).await;
    let mut conn = TcpStream::connect(running.addr).await.unwrap();
    conn.write_all(b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\nGET / HT")
        .await
        .unwrap();
    assert!(read_response(&mut conn).await.starts_with("HTTP/1.1 200"));
    let closed = closed_after(&mut conn).await;
    assert!(
        closed.is_some_and(|after| after < Duration::from_secs(10)),
        "closed at the header deadline, not the idle one: {closed:?}"
    );
    running.stop().await;
}

/// Reads one response with a Content-Length body.
async fn read_response<S: tokio::io::AsyncRead + Unpin>(conn: &mut S) -> String {
    let mut responses = read_responses(conn, 1).await;
    responses.remove(0)
}

/// Reads `count` responses with Content-Length bodies, each as text; nothing more may follow.
async fn read_responses<S: tokio::io::AsyncRead + Unpin>(
    conn: &mut S,
    count: usize,
) -> Vec<String> {
    let mut responses = Vec::new();
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    while responses.len() < count {
        if let Some(length) = first_response_length(&data) {
            let rest = data.split_off(length);
            responses.push(String::from_utf8_lossy(&data).into_owned());
            data = rest;
            continue;
        }
        let n = tokio::time::timeout(BOUND, conn.read(&mut buf))
            .await
            .expect("a response")
            .unwrap();
        assert!(n > 0, "closed before a full response");
        data.extend_from_slice(&buf[..n]);
    }
    assert!(data.is_empty(), "more than {count} answer(s)");
    responses
}

/// The length of the first response in `data` if it is all there (head and Content-Length body).
fn first_response_length(data: &[u8]) -> Option<usize> {
    let end = data.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .map_or(0, |v| v.trim().parse::<usize>().unwrap());
    (data.len() >= end + length).then_some(end + length)
}

#[tokio::test]
async fn the_connection_cap_holds_while_no_connection_is_idle() {
    let running = Running::start(&config(&format!(
        "{TWO_HOSTS}[limits]\nmax_connections = 2\n"
    )))
    .await;
    let request = b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n";
    // Neither may be closed to make room within a second: one has not sent its first request
    // yet, the other is in the middle of its second. (After a second, either may: see
    // `at_the_cap_a_connection_that_sent_no_request_makes_room_whatever_it_sent`.)
    let fresh_since = Instant::now();
    let fresh = TcpStream::connect(running.addr).await.unwrap();
    let mut mid_head = TcpStream::connect(running.addr).await.unwrap();
    mid_head.write_all(request).await.unwrap();
    read_response(&mut mid_head).await;
    mid_head.write_all(b"GET / HTTP/1.1\r\nHo").await.unwrap();
    // The third connects (the kernel's backlog) but is not served while two are open.
    let mut third = TcpStream::connect(running.addr).await.unwrap();
    third.write_all(request).await.unwrap();
    let mut buf = [0u8; 1];
    // Until 900 ms after `fresh` connected, however long the steps above took.
    let window = Duration::from_millis(900).saturating_sub(fresh_since.elapsed());
    let early = tokio::time::timeout(window, third.read(&mut buf)).await;
    assert!(
        early.is_err(),
        "the third connection was served while the cap was full"
    );
    drop(fresh);
    assert!(
        read_response(&mut third).await.starts_with("HTTP/1.1 200"),
        "served once a slot frees"
    );
    drop(mid_head);
    running.stop().await;
}

/// A cap of two held by two connections that each had a page and then `then` (nothing: idle;
/// a byte: a head in progress), the first the longest; then a third client. Returns once the
/// third is served and `series` counted the close: the service and the two held connections.
async fn fill_the_cap_then_admit(
    limits: &str,
    then: &[u8],
    series: &str,
) -> (Running, Vec<TcpStream>) {
    let text = two_hosts_with(
        "admin_listen = \"127.0.0.1:0\"",
        &format!("[limits]\nmax_connections = 2\n{limits}"),
    );
    let running = Running::start(&config(&text)).await;
    let admin = running.admin.expect("admin listener bound");
    let request = b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n";
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut conn = TcpStream::connect(running.addr).await.unwrap();
        conn.write_all(request).await.unwrap();
        read_response(&mut conn).await;
        conn.write_all(then).await.unwrap();
        held.push(conn);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let start = Instant::now();
    let mut third = TcpStream::connect(running.addr).await.unwrap();
    third.write_all(request).await.unwrap();
    assert!(read_response(&mut third).await.starts_with("HTTP/1.1 200"));
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "admitted by closing a connection, not by a deadline (60 s)"
    );
    assert!(
        closed_after(&mut held[0]).await.is_some(),
        "the one waiting the longest is closed"
    );
    let metrics = get(admin, "admin", "/metrics").await;
    assert_eq!(metric_value(&metrics, series), 1.0, "{metrics}");
    drop(third);
    (running, held)
}

#[tokio::test]
async fn at_the_cap_the_connection_slowest_with_its_head_makes_room_when_none_is_idle() {
    // One byte of a next head held a slot until the header deadline: a whole cap held for a
    // few bytes a second. Now the oldest head in progress gives way, after a second.
    let (running, held) = fill_the_cap_then_admit(
        "header_read_timeout = \"60s\"\nidle_timeout = \"60s\"",
        b"G",
        "mcp_sandbox_proxy_slow_heads_closed_total",
    )
    .await;
    drop(held);
    running.stop().await;
}

#[tokio::test]
async fn at_the_cap_the_longest_idle_keep_alive_connection_makes_room() {
    // The idle deadline is far away: only the cap's eviction can admit the third client soon.
    let (running, mut held) = fill_the_cap_then_admit(
        "idle_timeout = \"60s\"",
        b"",
        "mcp_sandbox_proxy_idle_connections_closed_total",
    )
    .await;
    // Only the one idle the longest was closed: the other still serves.
    held[1]
        .write_all(b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n")
        .await
        .unwrap();
    assert!(
        read_response(&mut held[1])
            .await
            .starts_with("HTTP/1.1 200")
    );
    drop(held);
    running.stop().await;
}

/// Five bytes of a ClientHello: a TLS record's head announcing a handshake that never comes.
const PARTIAL_CLIENT_HELLO: &[u8] = b"\x16\x03\x01\x02\x00";

#[tokio::test]
async fn at_the_cap_a_connection_that_sent_no_request_makes_room_whatever_it_sent() {
    // Listed only after its handshake or its preface, a cap's worth of sockets that send
    // nothing, five bytes of a ClientHello or a part of the h2 preface held every slot for the
    // whole handshake deadline. Every deadline here is a minute away: only the cap's eviction
    // can admit the third client within the read bound.
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, der) = write_cert(dir.path(), "all", common::TWO_HOSTS_NAMES);
    let tls = format!("[tls]\ncert = {cert:?}\nkey = {key:?}\n");
    let cases: [(&str, &[u8]); 5] = [
        (&tls, b""),
        (&tls, PARTIAL_CLIENT_HELLO),
        ("", b""),
        ("", b"PRI *"),
        ("", H2_PREFACE),
    ];
    for (tls, sent) in cases {
        let limits = "[limits]\nmax_connections = 2\nhandshake_timeout = \"60s\"\nheader_read_timeout = \"60s\"\nidle_timeout = \"60s\"";
        let text = two_hosts_with("admin_listen = \"127.0.0.1:0\"", &format!("{tls}{limits}"));
        let running = Running::start(&config(&text)).await;
        let mut held = Vec::new();
        for _ in 0..2 {
            let mut conn = TcpStream::connect(running.addr).await.unwrap();
            conn.write_all(sent).await.unwrap();
            held.push(conn);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let request = b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n";
        let third = TcpStream::connect(running.addr).await.unwrap();
        let answer = if tls.is_empty() {
            let mut third = third;
            third.write_all(request).await.unwrap();
            read_response(&mut third).await
        } else {
            let connector = tls_client_trusting(std::slice::from_ref(&der), &[b"http/1.1"]);
            let name = ServerName::try_from("chat.sandbox.test").unwrap();
            let handshake = tokio::time::timeout(BOUND, connector.connect(name, third));
            let mut third = handshake.await.expect("admitted").unwrap();
            third.write_all(request).await.unwrap();
            read_response(&mut third).await
        };
        let case = format!("tls: {}, sent {sent:?}", !tls.is_empty());
        assert!(answer.starts_with("HTTP/1.1 200"), "{case}: {answer}");
        assert!(
            closed_after(&mut held[0]).await.is_some(),
            "{case}: the one waiting the longest is closed"
        );
        let admin = running.admin.expect("admin listener bound");
        let metrics = get(admin, "admin", "/metrics").await;
        let series = "mcp_sandbox_proxy_slow_heads_closed_total";
        assert_eq!(metric_value(&metrics, series), 1.0, "{case}: {metrics}");
        drop(held);
        running.stop().await;
    }
}

#[tokio::test]
async fn at_the_cap_an_http2_connection_that_stops_answering_still_makes_room() {
    // hyper's graceful shutdown waits for the client to answer its PING; a client that made a
    // request and then went quiet held its slot, and stopped every other eviction, until its
    // keep-alive ran out a minute later.
    let limits = "[limits]\nmax_connections = 2\nhandshake_timeout = \"60s\"\nheader_read_timeout = \"60s\"\nidle_timeout = \"120s\"";
    let text = two_hosts_with("admin_listen = \"127.0.0.1:0\"", limits);
    let running = Running::start(&config(&text)).await;
    let authority = b"chat.sandbox.test";
    let mut block = vec![
        0x82,
        0x86,
        0x84,
        0x41,
        u8::try_from(authority.len()).unwrap(),
    ];
    block.extend_from_slice(authority);
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut conn = TcpStream::connect(running.addr).await.unwrap();
        conn.write_all(H2_PREFACE).await.unwrap();
        conn.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await.unwrap();
        // HEADERS on stream 1, END_STREAM | END_HEADERS: GET / on the host's name.
        let length = u8::try_from(block.len()).unwrap();
        conn.write_all(&[0, 0, length, 1, 5, 0, 0, 0, 1])
            .await
            .unwrap();
        conn.write_all(&block).await.unwrap();
        // Some of the answer, so the request was served; then the client reads no more.
        let mut some = [0u8; 64];
        let read = tokio::time::timeout(BOUND, conn.read(&mut some)).await;
        assert!(matches!(read, Ok(Ok(n)) if n > 0), "answered: {read:?}");
        held.push(conn);
    }
    let admin = running.admin.expect("admin listener bound");
    let mut third = TcpStream::connect(running.addr).await.unwrap();
    third
        .write_all(b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n")
        .await
        .unwrap();
    let answer = read_response(&mut third).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let metrics = get(admin, "admin", "/metrics").await;
    let series = "mcp_sandbox_proxy_idle_connections_closed_total";
    assert_eq!(metric_value(&metrics, series), 1.0, "{metrics}");
    drop(held);
    running.stop().await;
}

/// The value of one series in a Prometheus text; 0 when it is not there.
fn metric_value(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// GET over HTTP/1.1, the whole response as text.
async fn get(addr: SocketAddr, host: &str, path: &str) -> String {
    let mut conn = TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    conn.write_all(request.as_bytes()).await.unwrap();
    let mut text = String::new();
    tokio::time::timeout(BOUND, conn.read_to_string(&mut text))
        .await
        .unwrap()
        .unwrap();
    text
}

/// Checks the Prometheus text format line by line; returns `name{labels}` → value.
fn parse_prometheus(text: &str) -> std::collections::BTreeMap<String, f64> {
    let mut samples = std::collections::BTreeMap::new();
    let mut typed = std::collections::BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split(' ');
            let name = parts.next().unwrap();
            assert!(matches!(parts.next(), Some("counter" | "gauge")), "{line}");
            assert!(typed.insert(name.to_owned()), "TYPE twice: {line}");
            continue;
        }
        if line.starts_with("# HELP ") {
            continue;
        }
        let (series, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("not a sample: {line}"));
        let name = series.split('{').next().unwrap();
        assert!(
            name.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':'),
            "{line}"
        );
        assert!(typed.contains(name), "sample before its TYPE: {line}");
        let labels = &series[name.len()..];
        if !labels.is_empty() {
            assert!(labels.starts_with('{') && labels.ends_with('}'), "{line}");
            for pair in labels[1..labels.len() - 1].split("\",") {
                let (key, value) = pair
                    .split_once("=\"")
                    .unwrap_or_else(|| panic!("bad label in {line}"));
                assert!(
                    key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
                    "{line}"
                );
                assert!(!value.trim_end_matches('"').contains('\n'));
            }
        }
        samples.insert(
            series.to_owned(),
            value
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("bad value: {line}")),
        );
    }
    samples
}

#[tokio::test]
async fn admin_listener_reports_health_and_counts_what_happened() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, der) = write_cert(dir.path(), "all", common::TWO_HOSTS_NAMES);
    let text = two_hosts_with(
        "admin_listen = \"127.0.0.1:0\"",
        &format!("[tls]\ncert = {cert:?}\nkey = {key:?}"),
    );
    let running = Running::start(&config(&text)).await;
    let admin = running.admin.expect("admin listener bound");
    assert!(get(admin, "x", "/livez").await.starts_with("HTTP/1.1 200"));
    assert!(get(admin, "x", "/readyz").await.starts_with("HTTP/1.1 200"));
    // Traffic to count: two pages, one with a dropped entry, one 404, one 421, one failed handshake.
    for (host, path, status) in [
        ("chat.sandbox.test", "/", StatusCode::OK),
        (
            "chat.sandbox.test",
            "/?csp=%7B%22connectDomains%22%3A%5B%22*%22%2C%22data%3A%22%5D%7D",
            StatusCode::OK,
        ),
        ("chat.sandbox.test", "/metrics", StatusCode::NOT_FOUND),
        ("studio.sandbox.test", "/livez", StatusCode::NOT_FOUND),
    ] {
        let tcp = TcpStream::connect(running.addr).await.unwrap();
        let sni = if host.starts_with("chat") {
            "chat.sandbox.test"
        } else {
            "studio.sandbox.test"
        };
        let tls = tls_client_trusting(std::slice::from_ref(&der), &[b"http/1.1"])
            .connect(ServerName::try_from(sni).unwrap(), tcp)
            .await
            .unwrap();
        let (parts, _) = send(tls, false, page_request(host, false, path)).await;
        assert_eq!(
            parts.status, status,
            "{host}{path}: nothing of the admin listener is public"
        );
    }
    let tcp = TcpStream::connect(running.addr).await.unwrap();
    let tls = tls_client_trusting(std::slice::from_ref(&der), &[b"http/1.1"])
        .connect(ServerName::try_from("chat.sandbox.test").unwrap(), tcp)
        .await
        .unwrap();
    let (parts, _) = send(tls, false, page_request("nope.test", false, "/")).await;
    assert_eq!(parts.status, StatusCode::MISDIRECTED_REQUEST);
    let tcp = TcpStream::connect(running.addr).await.unwrap();
    assert!(
        tls_client_trusting(std::slice::from_ref(&der), &[])
            .connect(ServerName::try_from("unknown.test").unwrap(), tcp)
            .await
            .is_err()
    );

    let response = get(admin, "x", "/metrics").await;
    assert!(
        response.contains("content-type: text/plain; version=0.0.4"),
        "{response}"
    );
    let body = &response[response.find("\r\n\r\n").unwrap() + 4..];
    let samples = parse_prometheus(body);
    let value = |series: &str| {
        samples
            .get(series)
            .copied()
            .unwrap_or_else(|| panic!("{series} missing:\n{body}"))
    };
    assert_eq!(
        value("mcp_sandbox_proxy_requests_total{host=\"https://chat.example.com\",status=\"200\"}"),
        2.0
    );
    assert_eq!(
        value("mcp_sandbox_proxy_requests_total{host=\"https://chat.example.com\",status=\"404\"}"),
        1.0
    );
    assert_eq!(
        value(
            "mcp_sandbox_proxy_requests_total{host=\"https://studio.example.com\",status=\"404\"}"
        ),
        1.0
    );
    assert_eq!(
        value("mcp_sandbox_proxy_requests_total{host=\"\",status=\"421\"}"),
        1.0
    );
    assert_eq!(
        value("mcp_sandbox_proxy_csp_entries_dropped_total{host=\"https://chat.example.com\"}"),
        2.0
    );
    assert_eq!(value("mcp_sandbox_proxy_tls_handshake_failures_total"), 1.0);
    assert_eq!(
        value("mcp_sandbox_proxy_reloads_total{outcome=\"success\"}"),
        0.0
    );
    assert!(value("mcp_sandbox_proxy_connections_total") >= 6.0);
    let expiry = samples
        .iter()
        .find(|(k, _)| k.starts_with("mcp_sandbox_proxy_certificate_expiry_seconds{"))
        .expect("expiry gauge")
        .1;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(
        (*expiry - now - 60.0 * 86400.0).abs() < 2.0 * 86400.0,
        "notAfter about 60 days out: {expiry}"
    );
    assert!(
        samples
            .keys()
            .any(|k| k.starts_with("mcp_sandbox_proxy_build_info{version="))
    );
    running.stop().await;
}

/// The Kubernetes layout: `tls.crt -> ..data/tls.crt`, `..data -> ..<generation>/`.
fn k8s_secret_dir(root: &Path, generation: &str, files: (&Path, &Path)) {
    let dir = root.join(format!("..{generation}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(files.0, dir.join("tls.crt")).unwrap();
    std::fs::copy(files.1, dir.join("tls.key")).unwrap();
    let tmp = root.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(format!("..{generation}"), &tmp).unwrap();
    std::fs::rename(&tmp, root.join("..data")).unwrap(); // the atomic swap
    for name in ["tls.crt", "tls.key"] {
        let link = root.join(name);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(format!("..data/{name}"), &link).unwrap();
        }
    }
}

async fn served_leaf(addr: SocketAddr, trust: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let tls = tls_client_trusting(trust, &[b"http/1.1"])
        .connect(ServerName::try_from("chat.sandbox.test").unwrap(), tcp)
        .await
        .map_err(|e| e.to_string())?;
    let leaf = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
        .map(|c| c.to_vec())
        .unwrap_or_default();
    let (parts, _) = send(tls, false, page_request("chat.sandbox.test", false, "/")).await;
    if parts.status != StatusCode::OK {
        return Err(format!("status {}", parts.status));
    }
    Ok(leaf)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_symlink_swapped_certificate_is_served_without_a_failed_request() {
    let made = tempfile::tempdir().unwrap();
    let (old_cert, old_key, old_der) = write_cert(made.path(), "old", common::TWO_HOSTS_NAMES);
    let (new_cert, new_key, new_der) = write_cert(made.path(), "new", common::TWO_HOSTS_NAMES);
    let secret = tempfile::tempdir().unwrap();
    k8s_secret_dir(secret.path(), "2026_11_01", (&old_cert, &old_key));
    let cert = secret.path().join("tls.crt");
    let key = secret.path().join("tls.key");
    let text = two_hosts_with(
        "watch_interval = \"200ms\"\nadmin_listen = \"127.0.0.1:0\"",
        &format!("[tls]\ncert = {cert:?}\nkey = {key:?}"),
    );
    let running = Running::start(&config(&text)).await;
    let addr = running.addr;
    let admin = running.admin.expect("admin listener bound");
    let trust = vec![old_der.clone(), new_der.clone()];
    assert_eq!(served_leaf(addr, &trust).await.unwrap(), old_der);
    // A keep-alive connection made before the swap, used again after it: a reload drops nothing.
    let tcp = TcpStream::connect(addr).await.unwrap();
    let kept = tls_client_trusting(&trust, &[b"h2"])
        .connect(ServerName::try_from("chat.sandbox.test").unwrap(), tcp)
        .await
        .unwrap();
    let (mut kept, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(kept),
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    let kept_request = || page_request("chat.sandbox.test", true, "/");
    assert_eq!(
        kept.send_request(kept_request()).await.unwrap().status(),
        StatusCode::OK
    );

    // A request loop runs through the swap; every request must succeed.
    let loop_trust = trust.clone();
    let requests = tokio::spawn(async move {
        let start = Instant::now();
        let mut failures = Vec::new();
        let mut count = 0;
        while start.elapsed() < Duration::from_secs(30) {
            match served_leaf(addr, &loop_trust).await {
                Ok(leaf) if leaf == loop_trust[1] => {
                    return (count, failures, Some(start.elapsed()));
                }
                Ok(_) => {}
                Err(e) => failures.push(e),
            }
            count += 1;
        }
        (count, failures, None)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    k8s_secret_dir(secret.path(), "2026_11_29", (&new_cert, &new_key));
    let (count, failures, seen_after) = requests.await.unwrap();
    assert!(
        failures.is_empty(),
        "failed requests during the swap: {failures:?}"
    );
    assert!(
        seen_after.is_some(),
        "the new certificate was not served within 30 s ({count} requests)"
    );
    let after = kept
        .send_request(kept_request())
        .await
        .expect("the old connection still serves");
    assert_eq!(after.status(), StatusCode::OK);

    // A broken replacement (a key that is not a key) is refused; the new certificate stays.
    let broken = made.path().join("broken.key");
    std::fs::write(
        &broken,
        "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    k8s_secret_dir(secret.path(), "2026_11_30", (&old_cert, &broken));
    let refused = "mcp_sandbox_proxy_reloads_total{outcome=\"failure\"}";
    let start = Instant::now();
    while metric_value(&get(admin, "x", "/metrics").await, refused) < 1.0 {
        assert!(start.elapsed() < BOUND, "the broken key was never refused");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for _ in 0..5 {
        assert_eq!(
            served_leaf(addr, &trust).await.unwrap(),
            new_der,
            "the last good certificate keeps serving"
        );
    }
    running.stop().await;
}

#[tokio::test]
async fn an_oversized_request_head_is_refused_with_431() {
    let running = Running::start(&config(&format!(
        "{TWO_HOSTS}[limits]\nmax_header_bytes = 1024\n"
    )))
    .await;
    let mut conn = TcpStream::connect(running.addr).await.unwrap();
    let big = "a".repeat(2_000);
    let request = format!("GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nX-Big: {big}\r\n\r\n");
    let _ = conn.write_all(request.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(BOUND, conn.read_to_end(&mut answer)).await;
    let head = String::from_utf8_lossy(&answer[..answer.len().min(60)]).to_string();
    assert!(head.starts_with("HTTP/1.1 431"), "{head:?}");
    running.stop().await;
}

#[tokio::test]
async fn http2_advertises_the_stream_limit() {
    let running = Running::start(&config(&format!(
        "{TWO_HOSTS}[limits]\nh2_max_concurrent_streams = 7\n"
    )))
    .await;
    let mut conn = TcpStream::connect(running.addr).await.unwrap();
    conn.write_all(H2_PREFACE).await.unwrap();
    conn.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await.unwrap();
    // The server's first frame is its SETTINGS: 9-byte header, then 6-byte (id, value) pairs.
    let mut header = [0u8; 9];
    tokio::time::timeout(BOUND, conn.read_exact(&mut header))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(header[3], 4, "a SETTINGS frame");
    let length = usize::from(header[1]) << 8 | usize::from(header[2]);
    let mut payload = vec![0u8; length];
    conn.read_exact(&mut payload).await.unwrap();
    let settings: Vec<(u16, u32)> = payload
        .chunks(6)
        .map(|c| {
            (
                u16::from_be_bytes([c[0], c[1]]),
                u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
            )
        })
        .collect();
    assert!(
        settings.contains(&(3, 7)),
        "SETTINGS_MAX_CONCURRENT_STREAMS = 7 in {settings:?}"
    );
    // Closed by us: a client that never answers the drain's PING would hold it to a deadline.
    drop(conn);
    running.stop().await;
}

#[tokio::test]
async fn an_idle_http2_connection_is_closed_even_while_it_answers_pings() {
    // hyper pings every idle_timeout / 2 and the client's h2 stack answers each one: those
    // frames must not count as activity. The head deadline is not what this test probes.
    let running = Running::start(&config(&deadlines("", "10s", "3s", "1500ms"))).await;
    let tcp = TcpStream::connect(running.addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tcp),
    )
    .await
    .unwrap();
    let connection = tokio::spawn(conn);
    let response = sender
        .send_request(page_request("chat.sandbox.test", true, "/"))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let ended = tokio::time::timeout(BOUND, connection).await;
    assert!(
        ended.is_ok(),
        "the idle HTTP/2 connection was still open after {BOUND:?}"
    );
    running.stop().await;
}

#[tokio::test]
async fn a_client_that_never_reads_its_answers_is_cut_loose() {
    let text = two_hosts_with(
        "admin_listen = \"127.0.0.1:0\"",
        "[limits]\nidle_timeout = \"1s\"\nheader_read_timeout = \"1s\"",
    );
    let running = Running::start(&config(&text)).await;
    let admin = running.admin.unwrap();
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut conn = socket.connect(running.addr).await.unwrap();
    // Many pipelined requests, answers never read: the server's writes stall.
    let request = b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n".repeat(2000);
    let _ = tokio::time::timeout(Duration::from_secs(5), conn.write_all(&request)).await;
    let gauge = "mcp_sandbox_proxy_open_connections ";
    let start = Instant::now();
    loop {
        let metrics = get(admin, "admin", "/metrics").await;
        let open: f64 = metrics
            .lines()
            .find_map(|l| l.strip_prefix(gauge))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        if open == 0.0 {
            break;
        }
        assert!(
            start.elapsed() < BOUND,
            "the stalled connection is still held: {open} open"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(conn);
    running.stop().await;
}

/// The HTTP/1 connections at rest, as `/metrics` counts them.
async fn resting(admin: SocketAddr) -> f64 {
    let metrics = get(admin, "admin", "/metrics").await;
    metric_value(&metrics, "mcp_sandbox_proxy_resting_connections ")
}

/// Waits until `/metrics` counts `count` HTTP/1 connections at rest.
async fn until_resting(admin: SocketAddr, count: f64) {
    let start = Instant::now();
    while resting(admin).await != count {
        assert!(start.elapsed() < BOUND, "never {count} at rest");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// What a kept connection does across rests: answers after one, answers pipelined requests
/// that wake it, and is closed at once by a drain while at rest.
async fn rest_and_wake<S>(conn: &mut S, running: Running)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let admin = running.admin.expect("admin listener bound");
    let request = b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n";
    let body_of = |answer: &str| answer.split_once("\r\n\r\n").unwrap().1.to_owned();
    conn.write_all(request).await.unwrap();
    let first = read_response(conn).await;
    assert!(first.starts_with("HTTP/1.1 200"), "{first}");
    until_resting(admin, 1.0).await;
    // Two requests in one write: the first wakes the connection, the second waits its turn.
    conn.write_all(&request.repeat(2)).await.unwrap();
    for answer in read_responses(conn, 2).await {
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert_eq!(
            body_of(&answer),
            body_of(&first),
            "the same page after a rest"
        );
    }
    until_resting(admin, 1.0).await;
    // A drain closes a connection at rest at once, not at its idle deadline (60 s).
    let stopped = tokio::spawn(running.stop());
    let closed = closed_after(conn).await;
    assert!(
        closed.is_some(),
        "a connection at rest is closed by a drain"
    );
    tokio::time::timeout(BOUND, stopped).await.unwrap().unwrap();
}

#[tokio::test]
async fn an_idle_http1_connection_rests_and_wakes_for_its_next_request() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, der) = write_cert(dir.path(), "all", common::TWO_HOSTS_NAMES);
    let limits = "[limits]\nidle_timeout = \"60s\"";
    let top = "admin_listen = \"127.0.0.1:0\"";
    let running = Running::start(&config(&two_hosts_with(top, limits))).await;
    let mut plain = TcpStream::connect(running.addr).await.unwrap();
    rest_and_wake(&mut plain, running).await;

    let tls = format!("[tls]\ncert = {cert:?}\nkey = {key:?}\n{limits}");
    let running = Running::start(&config(&two_hosts_with(top, &tls))).await;
    let tcp = TcpStream::connect(running.addr).await.unwrap();
    let connector = tls_client_trusting(std::slice::from_ref(&der), &[b"http/1.1"]);
    let mut tls = connector
        .connect(ServerName::try_from("chat.sandbox.test").unwrap(), tcp)
        .await
        .unwrap();
    rest_and_wake(&mut tls, running).await;
}
