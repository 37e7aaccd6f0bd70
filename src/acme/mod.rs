//! Built-in ACME (RFC 8555): certificates for the sandbox names, ordered from the configured CA
//! and renewed before they expire, answered on the listeners the service already has.
//!
//! Never worse than certificate files:
//! - an issued certificate is checked as a load would check it, written to the state directory
//!   whole (see `store`), then loaded by a reload like any other certificate: what would not
//!   load is never written, so the files on disk always start the service;
//! - a failed order changes nothing that serves: it is logged, counted
//!   (`acme_orders_total{outcome="failure"}`) and retried after a back-off;
//! - a name with no certificate yet gets none at all (its handshakes fail, which the log says
//!   once), never another name's certificate;
//! - a restart with the state directory in place orders nothing until renewal is due.

mod challenges;
mod client;
mod error;
mod http01;
mod order;
mod renewal;
mod store;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use instant_acme::{Account, AccountCredentials, CertificateIdentifier, NewAccount};
use tokio::sync::{Notify, watch};

use crate::config::{AcmeName, AcmeSettings};
use crate::metrics::Metrics;
use crate::tls;
use client::roots_file;
use store::Readers;

pub(crate) use challenges::Challenges;
pub(crate) use error::AcmeError;
pub(crate) use http01::answer as http01_answer;

/// The task that keeps every name's certificate current.
pub(crate) struct Acme {
    pub(crate) settings: AcmeSettings,
    pub(crate) challenges: Arc<Challenges>,
    /// Asks the reloader to load the state directory's new files now.
    pub(crate) reload: Arc<Notify>,
    pub(crate) metrics: Arc<Metrics>,
}

/// Where one name stands.
struct Due {
    /// Seconds since the epoch when the next order starts.
    at: i64,
    failures: u32,
    /// The CA's renewal information for the certificate serving now, when to ask for it next;
    /// `None` when there is no certificate yet, or the CA offers no such information.
    ari: Option<(CertificateIdentifier<'static>, i64)>,
}

impl Acme {
    /// Orders what is due, sleeps until the next is, until `stop` changes.
    pub(crate) async fn run(self, mut stop: watch::Receiver<bool>) {
        let mut due = self.schedule_from_disk();
        let mut account: Option<Account> = None;
        loop {
            for name in &self.settings.names {
                let Some(entry) = due.get_mut(name) else {
                    continue;
                };
                if entry.ari.as_ref().is_some_and(|(_, at)| *at <= now()) {
                    self.ask_renewal_window(&mut account, name, entry).await;
                }
                if entry.at <= now() {
                    let outcome = match self.account(&mut account).await {
                        Ok(ready) => self.order(ready, name).await,
                        Err(e) => Err(e),
                    };
                    *entry = self.after_order(name, outcome, entry.failures);
                }
            }
            let next = due
                .values()
                .flat_map(|d| [Some(d.at), d.ari.as_ref().map(|(_, at)| *at)])
                .flatten()
                .min()
                .unwrap_or(i64::MAX);
            let wait = Duration::from_secs(u64::try_from(next - now()).unwrap_or(0).max(1));
            tokio::select! {
                _ = stop.changed() => return,
                () = tokio::time::sleep(wait.min(Duration::from_secs(3600))) => {}
            }
        }
    }

    /// What is due next for `name` after an order: its renewal, or a retry.
    fn after_order(
        &self,
        name: &AcmeName,
        outcome: Result<order::Issued, AcmeError>,
        failures: u32,
    ) -> Due {
        match outcome {
            Ok(issued) => {
                self.metrics.acme_ordered(true);
                self.reload.notify_one();
                let at = renewal::renew_at(issued.not_before, issued.not_after, renewal::jitter());
                tracing::info!(name = %name, not_after = issued.not_after, renew_at = at, "ACME: certificate issued");
                Due {
                    at,
                    failures: 0,
                    ari: issued.identifier.map(|id| (id, now())),
                }
            }
            Err(reason) => {
                self.metrics.acme_ordered(false);
                let failures = failures + 1;
                let wait = renewal::retry_after(failures);
                tracing::warn!(name = %name, error = %reason, retry_in_seconds = wait.as_secs(), "ACME: the order failed; the current certificate, if any, keeps serving");
                Due {
                    at: now() + secs(wait),
                    failures,
                    ari: None,
                }
            }
        }
    }

    /// Asks the CA when to renew `name`'s certificate (RFC 9773) and follows its window. A CA
    /// without renewal information is not asked again; one that fails to answer, in an hour.
    async fn ask_renewal_window(
        &self,
        account: &mut Option<Account>,
        name: &AcmeName,
        due: &mut Due,
    ) {
        let Some((id, _)) = due.ari.take() else {
            return;
        };
        let asked = match self.account(account).await {
            Ok(account) => account.renewal_info(&id).await,
            Err(e) => {
                tracing::debug!(name = %name, error = %e, "ACME: no renewal information this time");
                due.ari = Some((id, now() + 3600));
                return;
            }
        };
        match asked {
            Ok((info, retry_after)) => {
                let window = &info.suggested_window;
                // A moment already past (a CA asking for early renewal) orders at once.
                due.at = renewal::in_window(
                    window.start.unix_timestamp(),
                    window.end.unix_timestamp(),
                    renewal::jitter(),
                );
                tracing::info!(name = %name, renew_at = due.at, "ACME: renewal window from the CA");
                due.ari = Some((id, now() + secs(renewal::ari_recheck(retry_after))));
            }
            Err(instant_acme::Error::Unsupported(_)) => {
                tracing::debug!(name = %name, "ACME: the CA offers no renewal information; renewing at two thirds of the lifetime");
            }
            Err(e) => {
                tracing::debug!(name = %name, error = %e, "ACME: no renewal information this time");
                due.ari = Some((id, now() + 3600));
            }
        }
    }

    /// Each name's next order: now for a name without a certificate on disk, otherwise at its
    /// renewal point.
    fn schedule_from_disk(&self) -> HashMap<AcmeName, Due> {
        let mut due = HashMap::new();
        for name in &self.settings.names {
            let leaf = leaf_on_disk(&self.settings.cert_files(name));
            let entry = match leaf.as_deref().and_then(tls::validity) {
                Some((not_before, not_after)) => {
                    let at = renewal::renew_at(not_before, not_after, renewal::jitter());
                    tracing::info!(name = %name, not_after, renew_at = at, "ACME: certificate on disk");
                    let ari = leaf
                        .as_deref()
                        .and_then(identifier_of)
                        .map(|id| (id, now()));
                    Due {
                        at,
                        failures: 0,
                        ari,
                    }
                }
                _ => {
                    tracing::warn!(name = %name, "ACME: no certificate yet; handshakes for this name fail until an order succeeds");
                    Due {
                        at: 0,
                        failures: 0,
                        ari: None,
                    }
                }
            };
            due.insert(name.clone(), entry);
        }
        due
    }

    async fn order(&self, account: &Account, name: &AcmeName) -> Result<order::Issued, AcmeError> {
        tracing::info!(name = %name, challenge = self.settings.challenge.name(), "ACME: ordering a certificate");
        order::issue(account, &self.settings, name, &self.challenges).await
    }

    /// The account, made ready the first time it is needed (see [`Acme::load_account`]).
    async fn account<'a>(
        &self,
        account: &'a mut Option<Account>,
    ) -> Result<&'a Account, AcmeError> {
        let ready = match account.take() {
            Some(ready) => ready,
            None => self.load_account().await?,
        };
        Ok(account.insert(ready))
    }

    /// The account from its credentials file, or a new one whose credentials are saved there.
    async fn load_account(&self) -> Result<Account, AcmeError> {
        let roots_path = roots_file(self.settings.ca_roots.as_deref())?;
        let roots = client::load_roots(&roots_path)?;
        let http: Box<dyn instant_acme::HttpClient> = Box::new(client::Client::new(roots)?);
        let path = &self.settings.account_key;
        match credentials(path)? {
            Some(credentials) => Account::builder_with_http(http)
                .from_credentials(credentials)
                .await
                .map_err(AcmeError::RestoreAccount),
            None => {
                let contact: Vec<&str> = self.settings.contact.iter().map(|c| c.as_str()).collect();
                let new = NewAccount {
                    contact: &contact,
                    terms_of_service_agreed: true,
                    only_return_existing: false,
                };
                let (account, credentials) = Account::builder_with_http(http)
                    .create(&new, self.settings.directory.clone(), None)
                    .await
                    .map_err(|source| AcmeError::CreateAccount {
                        directory: self.settings.directory.clone(),
                        source,
                    })?;
                let json = serde_json::to_vec_pretty(&credentials)
                    .map_err(AcmeError::EncodeCredentials)?;
                store::write_atomically(path, &json, Readers::Owner).map_err(|source| {
                    AcmeError::Write {
                        path: path.clone(),
                        source,
                    }
                })?;
                tracing::info!(account = account.id(), file = %path.display(), "ACME: account created");
                Ok(account)
            }
        }
    }
}

/// The account's credentials from `path`; `None` when there is no such file yet.
fn credentials(path: &std::path::Path) -> Result<Option<AccountCredentials>, AcmeError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|source| AcmeError::NotCredentials {
                    path: path.to_owned(),
                    source,
                })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(AcmeError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

fn now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, secs)
}

fn secs(d: Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

/// What `check` says `[acme]` will do: the CA and its roots, the account, and for each name
/// its certificate and renewal, or the order the first start makes. An error if the roots
/// cannot be read, or the account's credentials are not credentials.
pub(crate) fn plan(settings: &AcmeSettings) -> Result<Vec<String>, AcmeError> {
    let roots = roots_file(settings.ca_roots.as_deref())?;
    client::load_roots(&roots)?;
    let mut lines = vec![format!(
        "acme: certificates from {} (its TLS checked against {}), {} challenge{}",
        settings.directory,
        roots.display(),
        settings.challenge.name(),
        match settings.challenge {
            crate::config::Challenge::TlsAlpn01 =>
                " on the public listener (the CA connects to port 443)".to_owned(),
            crate::config::Challenge::Http01 { listen } =>
                format!(" on {listen} (the CA connects to port 80)"),
        }
    )];
    let account = &settings.account_key;
    lines.push(match credentials(account)? {
        Some(_) => format!("acme: account from {}", account.display()),
        None => format!(
            "acme: no account yet: the first start creates one and keeps it in {}",
            account.display()
        ),
    });
    for name in &settings.names {
        let files = settings.cert_files(name);
        lines.push(match leaf_on_disk(&files).as_deref().and_then(tls::validity) {
            Some((not_before, not_after)) => format!(
                "acme: {name}: certificate in {} until {}, renewed from about {}",
                files.cert.display(),
                utc(not_after),
                utc(renewal::renew_at(not_before, not_after, 0.0)),
            ),
            None => format!(
                "acme: {name}: no certificate yet: the first start orders one; until it is issued, handshakes for {name} fail"
            ),
        });
    }
    Ok(lines)
}

/// The renewal information's name for a DER leaf.
pub(crate) fn identifier_of(leaf: &[u8]) -> Option<CertificateIdentifier<'static>> {
    let (key_id, serial) = tls::ari_identifier(leaf)?;
    let der = rustls_pki_types::Der::from_slice;
    Some(CertificateIdentifier::new(der(key_id), der(serial)).into_owned())
}

/// The leaf of the certificate in `files`, when both its files are there.
fn leaf_on_disk(
    files: &crate::config::CertFiles,
) -> Option<rustls_pki_types::CertificateDer<'static>> {
    if !files.key.is_file() {
        return None;
    }
    tls::leaf_of(&std::fs::read(&files.cert).ok()?)
}

/// Seconds since the epoch as `YYYY-MM-DD HH:MM UTC`.
fn utc(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    let minutes = seconds.rem_euclid(86_400) / 60;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        minutes / 60,
        minutes % 60
    )
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn dates_read_as_utc() {
        assert_eq!(utc(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc(1_769_385_600), "2026-01-26 00:00 UTC");
        assert_eq!(utc(951_782_400 + 3_660), "2000-02-29 01:01 UTC");
    }
}
