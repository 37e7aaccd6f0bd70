//! What `check` says about the loaded certificates: names no certificate covers, expired and
//! expiring certificates.

use rustls_pki_types::ServerName;

use super::SniResolver;
use crate::config::HostEntry;

/// Certificates expiring sooner than this get a warning from `check`.
const EXPIRY_WARNING: std::time::Duration = std::time::Duration::from_secs(21 * 24 * 60 * 60);

/// What `check` says about loaded certificates: names no certificate covers are errors, a
/// certificate that has expired is an error, one that expires within 21 days is a warning.
#[derive(Debug, Default)]
pub(crate) struct CertificateReport {
    pub(crate) errors: Vec<String>,
    pub(crate) warnings: Vec<String>,
}

impl SniResolver {
    /// Whether a browser asking for `name` gets a certificate valid for it. An IP address
    /// sends no SNI, so it gets the first certificate, which must list that address itself.
    fn serves(&self, name: &str) -> bool {
        match ServerName::try_from(name) {
            Ok(ip @ ServerName::IpAddress(_)) => {
                self.certs.first().is_some_and(|first| first.valid_for(&ip))
            }
            _ => self.for_name(Some(name)).is_some(),
        }
    }

    /// `ordered`: the names `[acme]` orders certificates for, which need none on disk yet.
    pub(crate) fn report(
        &self,
        hosts: &[HostEntry],
        ordered: &[&str],
        now_seconds: i64,
    ) -> CertificateReport {
        let mut report = CertificateReport::default();
        for (i, host) in hosts.iter().enumerate() {
            let name = host.sandbox.hostname().to_owned();
            let mut needed = vec![name.clone()];
            if host.per_server_subdomains {
                // Any one label stands for all of them: only a wildcard covers them all.
                needed.push(format!("label-{}.{name}", i));
            }
            for needed in needed {
                if !self.serves(&needed) && !ordered.contains(&needed.as_str()) {
                    let shown = needed.replacen(&format!("label-{i}"), "*", 1);
                    report.errors.push(format!(
                        "hosts[{i}].sandbox: no certificate covers \"{shown}\"{}",
                        if shown.starts_with('*') {
                            " (per_server_subdomains needs a wildcard certificate)"
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
        for expiry in self.expiries() {
            let left = expiry.not_after_seconds - now_seconds;
            // Whole days, truncated both ways: "expired 3 days ago" for 3 days and some hours.
            let days = left / 86_400;
            if left <= 0 {
                report.errors.push(format!(
                    "{}: the certificate expired {} day(s) ago",
                    expiry.file, -days
                ));
            } else if left < EXPIRY_WARNING.as_secs() as i64 {
                report.warnings.push(format!(
                    "{}: the certificate expires in {days} day(s)",
                    expiry.file
                ));
            }
        }
        report
    }
}
