//! The CSP report endpoint over real sockets: what a page's policies name, what a report
//! request is answered, and what the metrics and the admin table keep of it.

mod common;

use std::net::SocketAddr;

use common::config;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// [`common::TWO_HOSTS`] with an admin listener, and a host entry that takes no reports.
fn reporting() -> String {
    common::two_hosts_with("admin_listen = \"127.0.0.1:0\"", common::QUIET_HOST)
}

/// A Chromium `report-uri` body for a blocked fetch whose URL carries a user's data.
const CHROMIUM_CONNECT: &str = r#"{"csp-report":{"document-uri":"about","referrer":"https://s.example/","violated-directive":"connect-src","effective-directive":"connect-src","original-policy":"default-src 'none'","disposition":"enforce","blocked-uri":"https://api.example.com/v1/users/42?token=secret#frag","status-code":0,"script-sample":""}}"#;

/// One HTTP/1.1 exchange on a new connection: the status, the head and the body, as text.
async fn exchange(addr: SocketAddr, request: &[u8]) -> (u16, String, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_owned())
}

fn post(host: &str, path: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

async fn get(addr: SocketAddr, host: &str, path: &str) -> (u16, String, String) {
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    exchange(addr, request.as_bytes()).await
}

#[tokio::test]
async fn each_policy_of_a_reporting_host_names_the_endpoint_on_the_name_it_was_served_as() {
    let running = common::net::Running::start(&config(&reporting())).await;
    let (status, head, _) = get(running.addr, "abc.studio.sandbox.test", "/").await;
    assert_eq!(status, 200);
    let csp = head
        .lines()
        .find(|l| l.starts_with("content-security-policy:"))
        .unwrap();
    let policies: Vec<&str> = csp.split(", ").collect();
    assert_eq!(policies.len(), 2, "{csp}");
    // https without [tls]: an https host cannot frame an http page, so a front end terminates
    // TLS for this sandbox, and the report goes where the page came from.
    assert!(
        policies[1].ends_with("; report-uri https://abc.studio.sandbox.test/csp-report?from=view"),
        "{csp}"
    );
    assert!(
        policies[0].ends_with("; report-uri https://abc.studio.sandbox.test/csp-report?from=page"),
        "{csp}"
    );
    // A host entry that turned reporting off names no endpoint, and has none.
    let (_, head, _) = get(running.addr, "quiet.sandbox.test", "/").await;
    assert!(!head.contains("report-uri"), "{head}");
    let (status, _, _) = exchange(
        running.addr,
        &post(
            "quiet.sandbox.test",
            "/csp-report",
            "application/csp-report",
            CHROMIUM_CONNECT,
        ),
    )
    .await;
    assert_eq!(status, 404);
    running.stop().await;
}

#[tokio::test]
async fn a_report_is_an_empty_204_and_only_its_origin_is_kept() {
    let running = common::net::Running::start(&config(&reporting())).await;
    let admin = running.admin.unwrap();
    let request = post(
        "abc.studio.sandbox.test",
        "/csp-report?from=view",
        "application/csp-report",
        CHROMIUM_CONNECT,
    );
    let (status, head, body) = exchange(running.addr, &request).await;
    assert_eq!(status, 204);
    assert_eq!(body, "");
    for header in [
        "content-security-policy: default-src 'none'; frame-ancestors 'none'",
        "x-content-type-options: nosniff",
        "cache-control: no-store",
    ] {
        assert!(head.contains(header), "{header} in {head}");
    }
    // The Reporting API's shape, twice over one host entry without a label.
    let batch = r#"[{"type":"csp-violation","body":{"effectiveDirective":"img-src","blockedURL":"https://img.example.com/a.png?u=1"}},{"type":"csp-violation","body":{"effectiveDirective":"script-src","blockedURL":"eval"}}]"#;
    let request = post(
        "chat.sandbox.test",
        "/csp-report?from=view",
        "application/reports+json",
        batch,
    );
    assert_eq!(exchange(running.addr, &request).await.0, 204);
    let frame = r#"{"csp-report":{"effective-directive":"frame-ancestors","blocked-uri":"https://evil.example.net/page?x=1"}}"#;
    let request = post(
        "chat.sandbox.test",
        "/csp-report?from=page",
        "application/csp-report; charset=utf-8",
        frame,
    );
    assert_eq!(exchange(running.addr, &request).await.0, 204);

    let (status, head, table) = get(admin, "admin", "/csp-reports").await;
    assert_eq!(status, 200);
    assert!(head.contains("content-type: application/json"), "{head}");
    assert!(
        !table.contains("token")
            && !table.contains("/v1")
            && !table.contains("u=1")
            && !table.contains("x=1"),
        "{table}"
    );
    let table: serde_json::Value = serde_json::from_str(&table).unwrap();
    let rows: Vec<(String, String, String, String, String, u64)> = table["reports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or("-").to_owned();
            (
                s("host"),
                s("label"),
                s("from"),
                s("directive"),
                s("blocked"),
                r["count"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut rows = rows;
    rows.sort();
    let row = |host: &str, label: &str, from: &str, directive: &str, blocked: &str| {
        (
            host.to_owned(),
            label.to_owned(),
            from.to_owned(),
            directive.to_owned(),
            blocked.to_owned(),
            1,
        )
    };
    assert_eq!(
        rows,
        [
            row(
                "https://chat.example.com",
                "-",
                "page",
                "frame-ancestors",
                "https://evil.example.net"
            ),
            row(
                "https://chat.example.com",
                "-",
                "view",
                "img-src",
                "https://img.example.com"
            ),
            row(
                "https://chat.example.com",
                "-",
                "view",
                "script-src",
                "eval"
            ),
            row(
                "https://studio.example.com",
                "abc",
                "view",
                "connect-src",
                "https://api.example.com"
            ),
        ]
    );
    assert_eq!(table["capacity"], 1000);

    let (_, _, metrics) = get(admin, "admin", "/metrics").await;
    for line in [
        r#"mcp_sandbox_proxy_csp_violations_total{host="https://studio.example.com",directive="connect-src"} 1"#,
        r#"mcp_sandbox_proxy_csp_violations_total{host="https://chat.example.com",directive="img-src"} 1"#,
        r#"mcp_sandbox_proxy_csp_violations_total{host="https://chat.example.com",directive="frame-ancestors"} 1"#,
        r#"mcp_sandbox_proxy_csp_report_table_rows 4"#,
    ] {
        assert!(metrics.lines().any(|l| l == line), "{line} in\n{metrics}");
    }
    running.stop().await;
}

#[tokio::test]
async fn a_request_that_is_no_report_is_refused_with_the_rule_and_counted() {
    let running = common::net::Running::start(&config(&reporting())).await;
    let host = "chat.sandbox.test";
    let too_large = format!(
        "POST /csp-report HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/csp-report\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        mcp_sandbox_proxy::MAX_REPORT_BODY + 1
    );
    let cases: Vec<(Vec<u8>, u16, &str)> = vec![
        (format!("GET /csp-report HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").into_bytes(), 405, "reports are sent with POST"),
        (post(host, "/csp-report", "application/json", CHROMIUM_CONNECT), 415, "application/csp-report or application/reports+json"),
        (post(host, "/csp-report", "application/csp-report", "{\"csp-report\":"), 400, "not a CSP report"),
        (post(host, "/csp-report", "application/csp-report", &"[".repeat(5000)), 400, "not a CSP report"),
        (post(host, "/csp-report", "application/csp-report", "<script>alert(1)</script>"), 400, "not a CSP report"),
        (too_large.into_bytes(), 413, "at most 65536 bytes"),
        (format!("POST /csp-report HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n").into_bytes(), 400, "carries no body"),
    ];
    for (request, status, reason) in cases {
        let (got, head, body) = exchange(running.addr, &request).await;
        assert_eq!(got, status, "{body}");
        assert!(body.contains(reason), "{reason:?} in {body:?}");
        assert!(!body.contains("alert"), "nothing is reflected: {body}");
        assert!(head.contains("x-content-type-options: nosniff"), "{head}");
    }
    let (_, _, metrics) = get(running.admin.unwrap(), "admin", "/metrics").await;
    for reason in ["method", "media_type", "malformed", "too_large"] {
        let counted = metrics
            .lines()
            .find(|l| {
                l.starts_with(&format!(
                    "mcp_sandbox_proxy_csp_reports_refused_total{{reason=\"{reason}\"}}"
                ))
            })
            .unwrap();
        assert!(!counted.ends_with(" 0"), "{counted}");
    }
    running.stop().await;
}

#[tokio::test]
async fn one_connection_flooding_reports_is_cut_off_and_the_page_is_still_served() {
    let running = common::net::Running::start(&config(&reporting())).await;
    // Pipelined on one kept-alive connection: each report a separate request and body.
    let mut stream = TcpStream::connect(running.addr).await.unwrap();
    let one = format!(
        "POST /csp-report HTTP/1.1\r\nHost: chat.sandbox.test\r\nContent-Type: application/csp-report\r\nContent-Length: {}\r\n\r\n{CHROMIUM_CONNECT}",
        CHROMIUM_CONNECT.len()
    );
    let mut all = one.repeat(100);
    all.push_str("GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nConnection: close\r\n\r\n");
    stream.write_all(all.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    drop(stream);
    let answer = String::from_utf8_lossy(&answer);
    let taken = answer.matches("HTTP/1.1 204").count();
    let cut = answer.matches("HTTP/1.1 429").count();
    assert_eq!(
        (taken, cut),
        (64, 1),
        "the burst is taken, the next refused: {answer}"
    );
    // Refused before its body was read, the report ends its connection, and says so.
    let refused = answer
        .split("HTTP/1.1 429")
        .nth(1)
        .unwrap()
        .to_ascii_lowercase();
    assert!(refused.contains("\r\nconnection: close\r\n"), "{refused}");
    assert!(!answer.contains("HTTP/1.1 200"), "nothing after it");
    let (status, _, _) = get(running.addr, "chat.sandbox.test", "/").await;
    assert_eq!(status, 200, "a new connection is served");
    let (_, _, table) = get(running.admin.unwrap(), "admin", "/csp-reports").await;
    let table: serde_json::Value = serde_json::from_str(&table).unwrap();
    assert_eq!(
        table["reports"][0]["count"].as_u64().unwrap() as usize,
        taken
    );
    running.stop().await;
}

#[test]
fn csp_reports_is_a_boolean_and_its_path_no_page_path() {
    let problems = |text: &str| match mcp_sandbox_proxy::Config::parse(
        "c.toml",
        text,
        std::path::Path::new("."),
    ) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    };
    let host =
        "[[hosts]]\norigin = \"https://chat.example.com\"\nsandbox = \"chat.sandbox.test\"\n";
    let text = format!("{host}csp_reports = \"yes\"\n");
    assert!(
        problems(&text).contains("hosts[0].csp_reports must be true or false, not string"),
        "{}",
        problems(&text)
    );
    let text = format!("{host}page_paths = [\"/\", \"/csp-report\"]\n");
    assert!(
        problems(&text).contains("\"/csp-report\" is where browsers send CSP reports"),
        "{}",
        problems(&text)
    );
}

#[tokio::test]
async fn a_sandbox_of_a_plain_http_host_without_tls_names_an_http_endpoint() {
    let text = "listen = \"127.0.0.1:0\"\n[[hosts]]\norigin = \"http://localhost:6274\"\nsandbox = \"localhost:8081\"\n";
    let running = common::net::Running::start(&config(text)).await;
    let (status, head, _) = get(running.addr, "localhost:8081", "/").await;
    assert_eq!(status, 200);
    assert!(
        head.contains("; report-uri http://localhost:8081/csp-report?from=page"),
        "{head}"
    );
    running.stop().await;
}
