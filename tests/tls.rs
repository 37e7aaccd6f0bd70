//! TLS on real sockets: certificates chosen by SNI (wildcards included), unknown names refused,
//! the SNI/authority rule, and old protocols and weak suites refused (checked with openssl).

mod common;

use std::process::Command;

use common::net::{Running, page_request, send, tls_client_trusting};
use common::{TWO_HOSTS, config, write_cert};
use http::StatusCode;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;

/// Two certificates: one for chat, one (with a wildcard) for studio's per-server names.
fn two_certificates(dir: &std::path::Path) -> (String, Vec<u8>, Vec<u8>) {
    let (chat, chat_key, chat_der) = write_cert(dir, "chat", &["chat.sandbox.test"]);
    let (studio, studio_key, studio_der) = write_cert(
        dir,
        "studio",
        &["studio.sandbox.test", "*.studio.sandbox.test"],
    );
    let text = format!(
        "{TWO_HOSTS}[tls]\ncert = {chat:?}\nkey = {chat_key:?}\n[[tls.extra]]\ncert = {studio:?}\nkey = {studio_key:?}\n"
    );
    (text, chat_der, studio_der)
}

async fn served_certificate(
    running: &Running,
    trust: &[Vec<u8>],
    sni: &str,
) -> Result<Vec<u8>, std::io::Error> {
    let tcp = TcpStream::connect(running.addr).await?;
    let connector = tls_client_trusting(trust, &[b"http/1.1"]);
    let tls = connector
        .connect(ServerName::try_from(sni.to_owned()).unwrap(), tcp)
        .await?;
    let certs = tls.get_ref().1.peer_certificates().unwrap_or_default();
    Ok(certs.first().map(|c| c.to_vec()).unwrap_or_default())
}

#[tokio::test]
async fn each_name_gets_its_own_certificate_and_unknown_names_fail() {
    let dir = tempfile::tempdir().unwrap();
    let (text, chat, studio) = two_certificates(dir.path());
    let running = Running::start(&config(&text)).await;
    let trust = [chat.clone(), studio.clone()];
    assert_eq!(
        served_certificate(&running, &trust, "chat.sandbox.test")
            .await
            .unwrap(),
        chat
    );
    assert_eq!(
        served_certificate(&running, &trust, "studio.sandbox.test")
            .await
            .unwrap(),
        studio
    );
    assert_eq!(
        served_certificate(&running, &trust, "a1b2.studio.sandbox.test")
            .await
            .unwrap(),
        studio,
        "wildcard"
    );
    for unknown in [
        "other.test",
        "x.chat.sandbox.test",
        "a.b.studio.sandbox.test",
    ] {
        let result = served_certificate(&running, &trust, unknown).await;
        assert!(result.is_err(), "{unknown} must fail the handshake");
    }
    running.stop().await;
}

#[tokio::test]
async fn a_connection_for_one_host_does_not_serve_another() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, der) = write_cert(dir.path(), "all", common::TWO_HOSTS_NAMES);
    let running = Running::start(&config(&format!(
        "{TWO_HOSTS}[tls]\ncert = {cert:?}\nkey = {key:?}\n"
    )))
    .await;
    for h2 in [false, true] {
        let alpn: &[u8] = if h2 { b"h2" } else { b"http/1.1" };
        let connect = |sni: &'static str| {
            let der = der.clone();
            let addr = running.addr;
            async move {
                let tcp = TcpStream::connect(addr).await.unwrap();
                let connector = tls_client_trusting(&[der], &[alpn]);
                connector
                    .connect(ServerName::try_from(sni).unwrap(), tcp)
                    .await
                    .unwrap()
            }
        };
        // Coalesced onto chat's connection, studio's page is refused with 421...
        let tls = connect("chat.sandbox.test").await;
        let (parts, body) = send(tls, h2, page_request("studio.sandbox.test", h2, "/")).await;
        assert_eq!(parts.status, StatusCode::MISDIRECTED_REQUEST, "h2={h2}");
        assert!(
            String::from_utf8_lossy(&body)
                .contains("this connection was made for \"chat.sandbox.test\"")
        );
        // ...while two per-server names of one host may share a connection.
        let tls = connect("a.studio.sandbox.test").await;
        let (parts, _) = send(tls, h2, page_request("b.studio.sandbox.test", h2, "/")).await;
        assert_eq!(parts.status, StatusCode::OK, "h2={h2}");
    }
    running.stop().await;
}

/// Runs `openssl s_client` against the server; true when the handshake succeeded.
fn openssl_connects(port: u16, args: &[&str]) -> bool {
    let output = Command::new("openssl")
        .args([
            "s_client",
            "-connect",
            &format!("127.0.0.1:{port}"),
            "-servername",
            "chat.sandbox.test",
        ])
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("openssl runs (scripts/test installs it)");
    let stdout = String::from_utf8_lossy(&output.stdout);
    output.status.success()
        && stdout.contains("Verify return code")
        && !stdout.contains("Cipher is (NONE)")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs openssl; scripts/test runs it"]
async fn old_protocols_and_weak_suites_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (text, _, _) = two_certificates(dir.path());
    let running = Running::start(&config(&text)).await;
    let port = running.addr.port();
    let outcomes = tokio::task::spawn_blocking(move || {
        // @SECLEVEL=0 lets the client offer what it would refuse by default, so a refusal is the server's.
        let cases: [(&str, &[&str], bool); 7] = [
            ("TLS 1.3", &["-tls1_3"], true),
            ("TLS 1.2", &["-tls1_2"], true),
            (
                "TLS 1.1",
                &["-tls1_1", "-cipher", "DEFAULT:@SECLEVEL=0"],
                false,
            ),
            (
                "TLS 1.0",
                &["-tls1", "-cipher", "DEFAULT:@SECLEVEL=0"],
                false,
            ),
            (
                "CBC suite",
                &["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA:@SECLEVEL=0"],
                false,
            ),
            (
                "RSA key exchange",
                &["-tls1_2", "-cipher", "AES128-GCM-SHA256:@SECLEVEL=0"],
                false,
            ),
            (
                "3DES",
                &["-tls1_2", "-cipher", "DES-CBC3-SHA:@SECLEVEL=0"],
                false,
            ),
        ];
        cases.map(|(name, args, expected)| (name, openssl_connects(port, args), expected))
    })
    .await
    .unwrap();
    for (name, connected, expected) in outcomes {
        assert_eq!(connected, expected, "{name}");
    }
    running.stop().await;
}
