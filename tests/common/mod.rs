//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod heads;
pub mod net;
pub mod page;
pub mod ports;
pub mod process;
pub mod properties;
pub mod reports;
pub mod signing;

use std::path::Path;

use mcp_sandbox_proxy::Config;

/// Two hosts: one plain, one with per-server subdomains.
pub const TWO_HOSTS: &str = r#"
listen = "127.0.0.1:0"

[[hosts]]
origin  = "https://chat.example.com"
sandbox = "chat.sandbox.test"

[[hosts]]
origin  = "https://studio.example.com"
sandbox = "studio.sandbox.test"
per_server_subdomains = true
"#;

pub fn config(text: &str) -> Config {
    match Config::parse("test.toml", text, Path::new(".")) {
        Ok(loaded) => loaded.config,
        Err(e) => panic!("test config is invalid:\n{e}"),
    }
}

/// The page's framing policy for `origin`, with the default `sandbox` policy of its own and
/// reports sent to `served_as` (`https://chat.sandbox.test`: the scheme and the name the page
/// was asked for).
pub fn frame_policy(origin: &str, served_as: &str) -> String {
    format!(
        "frame-ancestors {origin}; sandbox allow-forms allow-modals allow-pointer-lock allow-same-origin allow-scripts; {}",
        report_uri(served_as, "page")
    )
}

/// The `report-uri` directive a policy of a page served as `served_as` ends with; `from` is
/// `view` or `page`.
pub fn report_uri(served_as: &str, from: &str) -> String {
    format!("report-uri {served_as}/csp-report?from={from}")
}

/// `?csp=` for a JSON text, encoded as a host would.
pub fn csp_query(json: &str) -> String {
    let encoded: String = url::form_urlencoded::byte_serialize(json.as_bytes()).collect();
    format!("csp={encoded}")
}

/// A self-signed certificate for `names`, written as PEM files into `dir`.
pub fn write_cert(
    dir: &Path,
    stem: &str,
    names: &[&str],
) -> (std::path::PathBuf, std::path::PathBuf, Vec<u8>) {
    write_cert_valid_for(dir, stem, names, 60)
}

/// Like [`write_cert`], expiring `days` from now (negative: already expired).
pub fn write_cert_valid_for(
    dir: &Path,
    stem: &str,
    names: &[&str],
    days: i64,
) -> (std::path::PathBuf, std::path::PathBuf, Vec<u8>) {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = rcgen::CertificateParams::new(names).expect("valid names");
    let now = time::OffsetDateTime::now_utc();
    // A short lifespan, as public CAs issue (sslyze checks it), ending `days` from now.
    params.not_before = now + time::Duration::days(days.min(1) - 30);
    params.not_after = now + time::Duration::days(days);
    let key = rcgen::KeyPair::generate().expect("rcgen makes a key");
    let cert = params.self_signed(&key).expect("rcgen signs");
    let cert_path = dir.join(format!("{stem}.crt"));
    let key_path = dir.join(format!("{stem}.key"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    (cert_path, key_path, cert.der().to_vec())
}

/// The names that cover both hosts of [`TWO_HOSTS`].
pub const TWO_HOSTS_NAMES: &[&str] = &[
    "chat.sandbox.test",
    "studio.sandbox.test",
    "*.studio.sandbox.test",
];

/// A host entry whose pages ask for no reports (`csp_reports = false`), to add to a config.
pub const QUIET_HOST: &str = r#"
[[hosts]]
origin  = "https://quiet.example.com"
sandbox = "quiet.sandbox.test"
csp_reports = false
"#;

/// [`TWO_HOSTS`] with `top` added to its top-level keys and `tables` (such as `[tls]`) after it.
pub fn two_hosts_with(top: &str, tables: &str) -> String {
    let listen = "listen = \"127.0.0.1:0\"\n";
    let rest = TWO_HOSTS
        .trim_start()
        .strip_prefix(listen)
        .expect("TWO_HOSTS starts with listen");
    format!("{listen}{top}\n{rest}\n{tables}\n")
}
