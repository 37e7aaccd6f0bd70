//! sslyze (PyPI) against the TLS listener: Mozilla "intermediate" by default and "modern" with
//! `min_version = "1.3"`. A private test certificate can never pass public path validation,
//! so that one item, and only that one, may fail. scripts/test installs sslyze.

mod common;

use std::process::Command;

use common::net::Running;
use common::{config, two_hosts_with, write_cert_valid_for};

/// Runs sslyze's Mozilla check; returns the names of the items that failed.
fn mozilla_failures(port: u16, profile: &str) -> Vec<String> {
    let output = Command::new("python3")
        .args([
            "-m",
            "sslyze",
            &format!("--mozilla_config={profile}"),
            &format!("chat.sandbox.test:{port}{{127.0.0.1}}"),
        ])
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(&format!(
            "Checking results against Mozilla's \"{profile}\" configuration"
        )),
        "sslyze did not check (pip install sslyze; scripts/test does):\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let verdict = stdout
        .split("COMPLIANCE AGAINST TLS CONFIGURATION")
        .nth(1)
        .unwrap_or_default();
    if verdict.contains("OK - Compliant") {
        return Vec::new();
    }
    verdict
        .lines()
        .filter_map(|line| line.trim().strip_prefix("* "))
        .map(|item| item.split(':').next().unwrap_or_default().to_owned())
        .collect()
}

async fn scan(min_version: Option<&str>, profile: &'static str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, _) = write_cert_valid_for(dir.path(), "tls", common::TWO_HOSTS_NAMES, 60);
    let min = min_version
        .map(|v| format!("min_version = \"{v}\""))
        .unwrap_or_default();
    let running = Running::start(&config(&two_hosts_with(
        "",
        &format!("[tls]\ncert = {cert:?}\nkey = {key:?}\n{min}"),
    )))
    .await;
    let port = running.addr.port();
    let failures = tokio::task::spawn_blocking(move || mozilla_failures(port, profile))
        .await
        .unwrap();
    running.stop().await;
    failures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs sslyze; scripts/test runs it"]
async fn default_tls_meets_mozilla_intermediate() {
    assert_eq!(
        scan(None, "intermediate").await,
        ["certificate_path_validation"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs sslyze; scripts/test runs it"]
async fn min_version_1_3_meets_mozilla_modern() {
    assert_eq!(
        scan(Some("1.3"), "modern").await,
        ["certificate_path_validation"]
    );
    // And the default does not: modern allows no TLS 1.2.
    let default = scan(None, "modern").await;
    assert!(
        default
            .iter()
            .any(|item| item != "certificate_path_validation"),
        "{default:?}"
    );
}
