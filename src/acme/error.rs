//! Why the ACME client could not do its part: read the CA's roots, keep the account, or carry an
//! order through to a certificate that can be served. Each variant says which step failed and
//! carries what the CA or the file said; its text is the log's `error` field and `check`'s.

use std::fmt;
use std::path::PathBuf;

use instant_acme::{AuthorizationStatus, OrderStatus, Problem};

/// A failure of the ACME client. Whatever the variant, the ACME task counts a failed order and
/// retries it after a back-off, the current certificate serving meanwhile; `check` fails.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AcmeError {
    /// No `acme.ca_roots`, and none of the system's bundles exists.
    #[error(
        "no CA bundle found ({}): set acme.ca_roots to the PEM roots the directory's certificate chains to",
        .searched.join(", ")
    )]
    NoCaBundle { searched: &'static [&'static str] },
    /// The roots file holds something that is not a PEM certificate.
    #[error("{}: not PEM certificates: {source}", .path.display())]
    RootsNotPem {
        path: PathBuf,
        source: rustls_pki_types::pem::Error,
    },
    /// The roots file holds a certificate rustls refuses as a trust anchor.
    #[error("{}: a certificate rustls cannot use as a root: {source}", .path.display())]
    UnusableRoot {
        path: PathBuf,
        source: rustls::Error,
    },
    /// The roots file holds no certificate at all.
    #[error("{}: no PEM certificate in the file", .path.display())]
    NoRoots { path: PathBuf },
    /// The client's TLS configuration cannot be built with the service's crypto provider.
    #[error(transparent)]
    TlsConfig(rustls::Error),
    /// A file the client reads (the roots, the account's credentials) is there but unreadable.
    #[error("{}: cannot read: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file of the state directory (the credentials, a chain or a key) cannot be written.
    #[error("{}: cannot write: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The account file is not the credentials this client saved.
    #[error("{}: not ACME account credentials: {source}", .path.display())]
    NotCredentials {
        path: PathBuf,
        source: serde_json::Error,
    },
    /// A new account's credentials cannot be put in JSON.
    #[error(transparent)]
    EncodeCredentials(serde_json::Error),
    /// The CA did not take the saved account back.
    #[error("restoring the ACME account: {0}")]
    RestoreAccount(#[source] instant_acme::Error),
    /// The CA at `directory` did not create an account.
    #[error("creating an ACME account at {directory}: {source}")]
    CreateAccount {
        directory: String,
        source: instant_acme::Error,
    },
    /// A step of an order failed at the CA or on the way to it; `source` says how (the CA's
    /// problem document, the transport, a malformed answer, or the wait running out).
    #[error("{step}: {source}")]
    Order {
        step: OrderStep,
        source: instant_acme::Error,
    },
    /// An authorization the CA will not validate (invalid, expired, revoked, ...).
    #[error("the CA's authorization is {0:?}")]
    Authorization(AuthorizationStatus),
    /// The authorization offers no challenge of the configured kind.
    #[error("the CA offers no {challenge} challenge")]
    NoChallenge { challenge: &'static str },
    /// The TLS-ALPN-01 validation certificate cannot be made.
    #[error("making the validation certificate: {0}")]
    ValidationCertificate(#[source] rcgen::Error),
    /// The TLS-ALPN-01 validation key cannot be loaded by the crypto provider.
    #[error("loading the validation key: {0}")]
    ValidationKey(#[source] rustls::Error),
    /// The CA checked the challenge and the order did not become ready.
    #[error(
        "the CA's check of the {challenge} challenge failed (order {status:?}){}",
        ProblemSuffix(.problem.as_deref())
    )]
    CheckFailed {
        challenge: &'static str,
        status: OrderStatus,
        /// The order's problem document, when the CA gave one.
        problem: Option<Box<Problem>>,
    },
    /// What the CA issued would not load as a certificate for the name; nothing is written.
    #[error("the CA's certificate cannot be served: {reason}")]
    Unservable { reason: String },
    /// What the CA issued has no validity this service can read; nothing is written.
    #[error("the CA's certificate has no readable validity")]
    NoValidity,
}

/// The step of an order that failed, as the log names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OrderStep {
    NewOrder,
    ReadAuthorization,
    SetReady,
    AwaitCheck,
    Finalize,
    FetchCertificate,
}

impl fmt::Display for OrderStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OrderStep::NewOrder => "the CA refused a new order",
            OrderStep::ReadAuthorization => "cannot read the order's authorization",
            OrderStep::SetReady => "the CA did not take the challenge",
            OrderStep::AwaitCheck => "waiting for the CA's check",
            OrderStep::Finalize => "finalizing the order",
            OrderStep::FetchCertificate => "fetching the certificate",
        })
    }
}

impl OrderStep {
    /// `map_err` for this step.
    pub(crate) fn failed(self) -> impl FnOnce(instant_acme::Error) -> AcmeError {
        move |source| AcmeError::Order { step: self, source }
    }
}

/// `: <problem>` after a failed check's status, when the CA said why.
struct ProblemSuffix<'a>(Option<&'a Problem>);

impl fmt::Display for ProblemSuffix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(problem) => write!(f, ": {problem}"),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn problem() -> Problem {
        serde_json::from_str(
            r#"{"type":"urn:ietf:params:acme:error:connection","detail":"no answer","status":400}"#,
        )
        .expect("a problem document")
    }

    #[test]
    fn the_text_names_the_step_and_what_the_ca_said() {
        let io = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let path = Path::new("/state/account.json").to_owned();
        let cases: [(AcmeError, &str); 6] = [
            (
                OrderStep::NewOrder.failed()(instant_acme::Error::Api(problem())),
                "the CA refused a new order: API error: no answer (urn:ietf:params:acme:error:connection)",
            ),
            (
                OrderStep::AwaitCheck.failed()(instant_acme::Error::Timeout(None)),
                "waiting for the CA's check: timed out waiting for an order update",
            ),
            (
                AcmeError::CheckFailed {
                    challenge: "tls-alpn-01",
                    status: OrderStatus::Invalid,
                    problem: Some(Box::new(problem())),
                },
                "the CA's check of the tls-alpn-01 challenge failed (order Invalid): API error: no answer (urn:ietf:params:acme:error:connection)",
            ),
            (
                AcmeError::CheckFailed {
                    challenge: "http-01",
                    status: OrderStatus::Pending,
                    problem: None,
                },
                "the CA's check of the http-01 challenge failed (order Pending)",
            ),
            (
                AcmeError::Write {
                    path: path.clone(),
                    source: io(),
                },
                "/state/account.json: cannot write: permission denied",
            ),
            (
                AcmeError::NoCaBundle {
                    searched: &["/a.pem", "/b.pem"],
                },
                "no CA bundle found (/a.pem, /b.pem): set acme.ca_roots to the PEM roots the directory's certificate chains to",
            ),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}
