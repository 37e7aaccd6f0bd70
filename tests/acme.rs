//! `[acme]` against a real ACME server: Debian's `pebble` (RFC 8555's test server) on loopback,
//! validating through a DNS responder of the test's own that sends every name to 127.0.0.1.
//! Ignored by plain `cargo test` (pebble is a Debian package); `scripts/test rust` installs it
//! and runs these.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::net::tls_client_trusting;
use common::ports::free_port;
use common::process::Serving;
use rustls::pki_types::ServerName;
use rustls::pki_types::pem::PemObject;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const NAME: &str = "chat.sandbox.test";

/// Answers every A query with one IPv4 address (127.0.0.1 at first) and every other query
/// with no record, until dropped.
struct Dns {
    addr: SocketAddr,
    answer: Arc<AtomicU32>,
    stop: Arc<AtomicBool>,
}

impl Dns {
    fn start() -> Dns {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        let addr = socket.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let answer = Arc::new(AtomicU32::new(u32::from(std::net::Ipv4Addr::LOCALHOST)));
        let answering = answer.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 512];
            while !stopped.load(Ordering::Relaxed) {
                let Ok((n, from)) = socket.recv_from(&mut buf) else {
                    continue;
                };
                let ip = std::net::Ipv4Addr::from(answering.load(Ordering::Relaxed));
                if let Some(reply) = dns_reply(&buf[..n], ip) {
                    let _ = socket.send_to(&reply, from);
                }
            }
        });
        Dns { addr, answer, stop }
    }
}

impl Drop for Dns {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The reply to one query: its header and question echoed, and for type A one answer, `ip`.
fn dns_reply(query: &[u8], ip: std::net::Ipv4Addr) -> Option<Vec<u8>> {
    if query.len() < 12 {
        return None;
    }
    // The question: labels up to the root, then type and class.
    let mut at = 12;
    while *query.get(at)? != 0 {
        at += usize::from(query[at]) + 1;
    }
    let question_end = at + 5;
    let qtype = u16::from_be_bytes([*query.get(at + 1)?, *query.get(at + 2)?]);
    let mut reply = query.get(..question_end)?.to_vec();
    reply[2] = 0x84 | (query[2] & 0x01); // a response, authoritative, RD copied
    reply[3] = 0x00; // no error
    let answers: u16 = if qtype == 1 { 1 } else { 0 };
    reply[4..6].copy_from_slice(&1u16.to_be_bytes());
    reply[6..8].copy_from_slice(&answers.to_be_bytes());
    reply[8..12].fill(0);
    if qtype == 1 {
        // A pointer to the question's name, type A, class IN, TTL 0, the address.
        reply.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4]);
        reply.extend_from_slice(&ip.octets());
    }
    Some(reply)
}

/// pebble on loopback, validating challenges against `tls_port` and `http_port`.
struct Pebble {
    child: Child,
    directory: String,
    management: SocketAddr,
    /// The PEM certificate of pebble's own listeners (the ACME client's `ca_roots`).
    listener_cert: PathBuf,
    dns: Dns,
}

impl Pebble {
    fn start(dir: &Path, tls_port: u16, http_port: u16, validity_seconds: u64) -> Pebble {
        let key = rcgen::KeyPair::generate().unwrap();
        let params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap();
        let cert = params.self_signed(&key).unwrap();
        let listener_cert = dir.join("pebble-listener.pem");
        let listener_key = dir.join("pebble-listener.key");
        std::fs::write(&listener_cert, cert.pem()).unwrap();
        std::fs::write(&listener_key, key.serialize_pem()).unwrap();
        let (acme_port, management_port) = (free_port(), free_port());
        let config = serde_json::json!({ "pebble": {
            "listenAddress": format!("127.0.0.1:{acme_port}"),
            "managementListenAddress": format!("127.0.0.1:{management_port}"),
            "certificate": listener_cert,
            "privateKey": listener_key,
            "httpPort": http_port,
            "tlsPort": tls_port,
            "certificateValidityPeriod": validity_seconds,
        }});
        let config_path = dir.join("pebble.json");
        std::fs::write(&config_path, config.to_string()).unwrap();
        let dns = Dns::start();
        let log = std::fs::File::create(dir.join("pebble.log")).unwrap();
        let child = Command::new("pebble")
            .args(["-config", &config_path.display().to_string()])
            .args(["-dnsserver", &dns.addr.to_string()])
            .env("PEBBLE_VA_NOSLEEP", "1")
            .env("PEBBLE_WFE_NONCEREJECT", "0")
            .env("PEBBLE_AUTHZREUSE", "0")
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("pebble runs (Debian's pebble package; scripts/test rust installs it)");
        let management: SocketAddr = format!("127.0.0.1:{management_port}").parse().unwrap();
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", acme_port)).is_err() {
            assert!(start.elapsed() < Duration::from_secs(20), "pebble listens");
            std::thread::sleep(Duration::from_millis(50));
        }
        Pebble {
            child,
            directory: format!("https://127.0.0.1:{acme_port}/dir"),
            management,
            listener_cert,
            dns,
        }
    }

    /// The root pebble issues under (it makes a new one at every start).
    async fn root(&self) -> Vec<u8> {
        let pem = std::fs::read(&self.listener_cert).unwrap();
        let der = rustls::pki_types::CertificateDer::from_pem_slice(&pem).unwrap();
        let tcp = TcpStream::connect(self.management).await.unwrap();
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let mut tls = tls_client_trusting(&[der.to_vec()], &[b"http/1.1"])
            .connect(name, tcp)
            .await
            .unwrap();
        tls.write_all(b"GET /roots/0 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut response = Vec::new();
        let _ = tls.read_to_end(&mut response).await;
        let text = String::from_utf8_lossy(&response);
        let body = &text[text.find("-----BEGIN").expect("a PEM root")..];
        rustls::pki_types::CertificateDer::from_pem_slice(body.as_bytes())
            .unwrap()
            .to_vec()
    }
}

impl Drop for Pebble {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The service's config: TLS on `port` with no certificate file, every certificate from pebble;
/// `acme_more` adds keys to `[acme]`, `top` to the top level.
fn service_config(dir: &Path, pebble: &Pebble, port: u16, top: &str, acme_more: &str) -> String {
    let ca = format!("ca_roots = {:?}", pebble.listener_cert);
    let acme_more = format!("{acme_more}\n{ca}");
    config_for_directory(dir, &pebble.directory, port, top, &acme_more)
}

/// A config for one host whose certificate `[acme]` orders from `directory`.
fn config_for_directory(
    dir: &Path,
    directory: &str,
    port: u16,
    top: &str,
    acme_more: &str,
) -> String {
    let text = format!(
        r#"listen = "127.0.0.1:{port}"
{top}
[tls]
[acme]
{acme_more}
directory = "{directory}"
terms_of_service_agreed = true
contact = ["mailto:ops@sandbox.test"]
state_dir = {:?}
[[hosts]]
origin = "https://chat.example.com"
sandbox = "{NAME}"
"#,
        dir.join("state"),
    );
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// What `check` prints for `config`; it must pass.
fn check(config: &str) -> String {
    let out = Command::new(common::process::BIN)
        .args(["check", "--config", config])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    text
}

fn serve(config: &str, port: u16) -> Serving {
    let listen = format!("127.0.0.1:{port}");
    Serving::start_with(config, None, &[("MCP_SANDBOX_PROXY_LISTEN", &listen)])
}

/// Waits (bounded) for a log line.
fn wait_for(serving: &Serving, message: &str, within: Duration) {
    let start = Instant::now();
    while serving.log_count(message) == 0 && start.elapsed() < within {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Found, or the panic that shows every line the service wrote.
    serving.wait_for_log(message);
}

/// The page over TLS with SNI `NAME`, trusting only `root`: the handshake's leaf and the status.
async fn fetch_page(port: u16, root: &[u8]) -> Result<(Vec<u8>, String), String> {
    let tcp = TcpStream::connect(("127.0.0.1", port))
        .await
        .map_err(|e| e.to_string())?;
    let mut tls = tls_client_trusting(&[root.to_vec()], &[b"http/1.1"])
        .connect(ServerName::try_from(NAME).unwrap(), tcp)
        .await
        .map_err(|e| e.to_string())?;
    let leaf = tls.get_ref().1.peer_certificates().unwrap()[0].to_vec();
    let request = format!("GET / HTTP/1.1\r\nHost: {NAME}\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let _ = tls.read_to_end(&mut response).await;
    let status = String::from_utf8_lossy(&response)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    Ok((leaf, status))
}

/// Waits for the first certificate and its reload; the leaf a client then gets, with the page.
async fn issued_and_served(serving: &Serving, port: u16, root: &[u8]) -> Vec<u8> {
    wait_for(serving, "ACME: certificate issued", Duration::from_secs(60));
    wait_for(
        serving,
        "reloaded: new connections use the new config and certificates",
        Duration::from_secs(10),
    );
    let (leaf, status) = fetch_page(port, root)
        .await
        .expect("a handshake with the issued certificate");
    assert_eq!(status, "HTTP/1.1 200 OK");
    leaf
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs pebble (Debian); scripts/test rust installs it and runs this"]
async fn a_first_start_whose_order_fails_serves_nothing_on_the_name() {
    let dir = tempfile::tempdir().unwrap();
    let (port, admin_port) = (free_port(), free_port());
    let pebble = Pebble::start(dir.path(), port, free_port(), 3600);
    // The CA finds an address where nothing answers: its check fails.
    pebble.dns.answer.store(
        u32::from(std::net::Ipv4Addr::new(127, 0, 0, 2)),
        Ordering::Relaxed,
    );
    let admin = format!("127.0.0.1:{admin_port}");
    let top = format!("admin_listen = \"{admin}\"");
    let config = service_config(dir.path(), &pebble, port, &top, "");
    let serving = serve(&config, port);
    let root = pebble.root().await;
    let failed = "ACME: the order failed; the current certificate, if any, keeps serving";
    wait_for(&serving, failed, Duration::from_secs(60));
    let handshake = fetch_page(port, &root).await;
    assert!(
        handshake.is_err(),
        "no certificate, not another's: {handshake:?}"
    );
    let series = "mcp_sandbox_proxy_acme_orders_total{outcome=\"failure\"}";
    assert_eq!(metric(&admin, series), 1);
    assert!(
        !dir.path().join("state").join("certs").exists(),
        "nothing written"
    );
    assert!(serving.stop().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs pebble (Debian); scripts/test rust installs it and runs this"]
async fn tls_alpn_01_issues_a_certificate_that_sni_serves_and_a_restart_reuses() {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let pebble = Pebble::start(dir.path(), port, free_port(), 3600);
    let config = service_config(dir.path(), &pebble, port, "", "");
    let said = check(&config);
    assert!(
        said.contains(&format!(
            "acme: {NAME}: no certificate yet: the first start orders one"
        )),
        "{said}"
    );
    assert!(
        said.contains("acme: no account yet: the first start creates one"),
        "{said}"
    );
    let serving = serve(&config, port);
    let root = pebble.root().await;
    let leaf = issued_and_served(&serving, port, &root).await;
    let state = dir.path().join("state");
    assert!(state.join("account.json").is_file());
    #[cfg(unix)]
    for private in [
        state.join("account.json"),
        state.join("certs").join(format!("{NAME}.key")),
    ] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&private).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", private.display());
    }
    assert!(serving.stop().success());
    let said = check(&config);
    assert!(
        said.contains(&format!("acme: {NAME}: certificate in ")),
        "{said}"
    );
    assert!(said.contains("acme: account from "), "{said}");

    // A restart with the state in place orders nothing and serves the same certificate.
    let again = serve(&config, port);
    wait_for(&again, "ACME: certificate on disk", Duration::from_secs(10));
    let (served, status) = fetch_page(port, &root)
        .await
        .expect("served from the state directory");
    assert_eq!(served, leaf, "the same certificate");
    assert_eq!(status, "HTTP/1.1 200 OK");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        again.log_count("ACME: ordering a certificate"),
        0,
        "no new order"
    );
    assert!(again.stop().success());
}

/// The value of one series in the admin listener's `/metrics`.
fn metric(admin: &str, series: &str) -> u64 {
    let text = common::process::raw_get(admin, "localhost", "/metrics");
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {series} in {text}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs pebble (Debian); scripts/test rust installs it and runs this"]
async fn http_01_issues_on_its_own_plain_listener() {
    let dir = tempfile::tempdir().unwrap();
    let (port, http_port) = (free_port(), free_port());
    let pebble = Pebble::start(dir.path(), port, http_port, 3600);
    let more = format!("challenge = \"http-01\"\nhttp01_listen = \"127.0.0.1:{http_port}\"");
    let config = service_config(dir.path(), &pebble, port, "", &more);
    let serving = serve(&config, port);
    let root = pebble.root().await;
    issued_and_served(&serving, port, &root).await;
    // The plain listener answers challenges only, and none is open now.
    let plain = common::process::raw_get(&format!("127.0.0.1:{http_port}"), NAME, "/");
    assert!(plain.starts_with("HTTP/1.1 404"), "{plain}");
    assert!(serving.stop().success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs pebble (Debian); scripts/test rust installs it and runs this"]
async fn renewal_replaces_the_certificate_and_a_failed_one_keeps_it_serving() {
    let dir = tempfile::tempdir().unwrap();
    let (port, admin_port) = (free_port(), free_port());
    // 24 s certificates: renewed after 16 s at the latest (two thirds, up to a tenth earlier).
    let pebble = Pebble::start(dir.path(), port, free_port(), 24);
    let admin = format!("127.0.0.1:{admin_port}");
    let config = service_config(
        dir.path(),
        &pebble,
        port,
        &format!("admin_listen = \"{admin}\""),
        "",
    );
    let serving = serve(&config, port);
    let root = pebble.root().await;
    wait_for(
        &serving,
        "ACME: certificate issued",
        Duration::from_secs(60),
    );
    std::thread::sleep(Duration::from_millis(500));
    let (first, _) = fetch_page(port, &root)
        .await
        .expect("the first certificate");

    let start = Instant::now();
    while serving.log_count("ACME: certificate issued") < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "renewed within 40 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    let (renewed, status) = fetch_page(port, &root)
        .await
        .expect("the renewed certificate");
    assert_ne!(
        renewed, first,
        "a new certificate is served after the renewal"
    );
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        metric(
            &admin,
            "mcp_sandbox_proxy_acme_orders_total{outcome=\"issued\"}"
        ),
        2
    );
    // The expiry gauge follows the served certificate, from the state directory's file.
    let file = dir
        .path()
        .join("state")
        .join("certs")
        .join(format!("{NAME}.crt"));
    let series = format!(
        "mcp_sandbox_proxy_certificate_expiry_seconds{{file=\"{}\"}}",
        file.display()
    );
    let pem = std::fs::read(&file).unwrap();
    let on_disk = rustls::pki_types::CertificateDer::from_pem_slice(&pem).unwrap();
    assert_eq!(on_disk.to_vec(), renewed, "the file holds what is served");
    assert!(metric(&admin, &series) > 0, "{series}");

    // The CA now finds another address for the name: the next renewal fails its check, and
    // the certificate that was serving keeps serving.
    pebble.dns.answer.store(
        u32::from(std::net::Ipv4Addr::new(127, 0, 0, 2)),
        Ordering::Relaxed,
    );
    let failed = "ACME: the order failed; the current certificate, if any, keeps serving";
    wait_for(&serving, failed, Duration::from_secs(40));
    let (kept, status) = fetch_page(port, &root).await.expect("still served");
    assert_eq!(kept, renewed, "the old certificate, not none");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(
        metric(
            &admin,
            "mcp_sandbox_proxy_acme_orders_total{outcome=\"failure\"}"
        ) >= 1
    );
    assert!(serving.stop().success());
}

#[test]
fn a_reload_that_changes_acme_says_it_takes_a_restart_and_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, _) = common::write_cert(dir.path(), "files", &["other.sandbox.test"]);
    let config = |contact: &str| {
        format!(
            r#"listen = "127.0.0.1:0"
[tls]
cert = {cert:?}
key = {key:?}
[acme]
directory = "https://127.0.0.1:1/dir"
ca_roots = {cert:?}
terms_of_service_agreed = true
contact = ["{contact}"]
state_dir = {:?}
names = ["{NAME}"]
[[hosts]]
origin = "https://chat.example.com"
sandbox = "{NAME}"
"#,
            dir.path().join("state")
        )
    };
    let path = dir.path().join("config.toml");
    std::fs::write(&path, config("mailto:ops@sandbox.test")).unwrap();
    let serving = Serving::start(&path.display().to_string());
    // No CA answers there: the order fails, and the service serves what its files cover.
    wait_for(
        &serving,
        "ACME: the order failed; the current certificate, if any, keeps serving",
        Duration::from_secs(20),
    );
    std::fs::write(&path, config("mailto:security@sandbox.test")).unwrap();
    serving.signal("HUP");
    let warned = serving.wait_for_event("the restart warning for acme", |e| {
        e["message"] == "changed, but takes effect only after a restart" && e["key"] == "acme"
    });
    assert_eq!(warned["level"], "WARN");
    wait_for(
        &serving,
        "reloaded: new connections use the new config and certificates",
        Duration::from_secs(10),
    );
    assert!(serving.stop().success());
}

#[test]
fn the_http_01_listener_answers_http_1_1_only() {
    // The CA speaks HTTP/1.1 there (RFC 8555 §8.3); HTTP/2 with prior knowledge got an HTTP/2
    // server. No CA is needed to see it: this one refuses every connection, and orders fail.
    let dir = tempfile::tempdir().unwrap();
    let (port, http_port) = (free_port(), free_port());
    let more = format!("challenge = \"http-01\"\nhttp01_listen = \"127.0.0.1:{http_port}\"");
    let directory = "https://127.0.0.1:9/directory";
    let config = config_for_directory(dir.path(), directory, port, "", &more);
    let serving = serve(&config, port);
    let addr = format!("127.0.0.1:{http_port}");
    let mut h2 = std::net::TcpStream::connect(&addr).unwrap();
    h2.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    use std::io::{Read, Write};
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0")
        .unwrap();
    let mut answer = Vec::new();
    let _ = h2.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    // An HTTP/1.1 refusal (of the method `PRI`), never an HTTP/2 SETTINGS frame.
    assert!(answer.starts_with("HTTP/1.1 4"), "{answer:?}");
    assert!(
        answer.contains("default-src 'none'"),
        "with the security headers: {answer}"
    );
    let plain = common::process::raw_get(&addr, NAME, "/");
    assert!(plain.starts_with("HTTP/1.1 404"), "{plain}");
    assert!(serving.stop().success());
}
