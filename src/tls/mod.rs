//! TLS: certificates and keys from PEM files, chosen by SNI, in a rustls config (ring only).
//!
//! A certificate is chosen by the names it carries itself (its subject alternative names,
//! wildcards included), so config never repeats them.

mod der;
mod report;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{ServerConfig, version};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use crate::config::{CertFiles, TlsFiles, TlsVersion};
use crate::metrics::CertExpiry;
use der::not_after;

pub(crate) use der::{ari_identifier, validity};

/// Why TLS material cannot be used; names the file and what is wrong with it.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: no PEM certificate in the file")]
    NoCertificate { path: String },
    #[error("{path}: not a PEM certificate chain: {reason}")]
    BadCertificate { path: String, reason: String },
    #[error("{path}: no usable PEM private key (PKCS#8, PKCS#1 or SEC1): {reason}")]
    BadKey { path: String, reason: String },
    #[error("{key}: the key does not match the certificate {cert}")]
    KeyMismatch { cert: String, key: String },
    #[error("TLS setup: {0}")]
    Rustls(#[from] rustls::Error),
}

/// The ALPN protocol of TLS-ALPN-01 validation connections (RFC 8737).
pub(crate) const ACME_TLS_ALPN: &[u8] = b"acme-tls/1";

/// The certificates that answer TLS-ALPN-01 validation connections, by name, while their
/// challenges are open (kept by `acme`).
pub(crate) trait ValidationCertificates: Send + Sync + fmt::Debug {
    fn for_name(&self, name: &str) -> Option<Arc<CertifiedKey>>;
}

/// The one crypto provider of the service.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// One certificate chain and its key, checked to belong together.
#[derive(Clone)]
struct LoadedCert {
    files: CertFiles,
    key: Arc<CertifiedKey>,
    /// The DNS names of its subject alternative names, lower case; `*.` names included.
    names: Vec<String>,
}

impl fmt::Debug for LoadedCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedCert")
            .field("files", &self.files)
            .field("names", &self.names)
            .finish()
    }
}

impl LoadedCert {
    /// Reads and checks one pair of PEM files, and reads the names the certificate covers.
    fn load(files: &CertFiles, provider: &CryptoProvider) -> Result<Self, TlsError> {
        let cert_pem = read(&files.cert)?;
        let key_pem = read(&files.key)?;
        Self::from_pem(files, &cert_pem, &key_pem, provider)
    }

    /// Checks one pair given as PEM text, named by the files it comes (or will come) from.
    fn from_pem(
        files: &CertFiles,
        cert_pem: &[u8],
        key_pem: &[u8],
        provider: &CryptoProvider,
    ) -> Result<Self, TlsError> {
        let cert_name = files.cert.display().to_string();
        let key_name = files.key.display().to_string();
        let chain = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TlsError::BadCertificate {
                path: cert_name.clone(),
                reason: e.to_string(),
            })?;
        let Some(leaf) = chain.first() else {
            return Err(TlsError::NoCertificate { path: cert_name });
        };
        let names = covered_names(leaf).map_err(|reason| TlsError::BadCertificate {
            path: cert_name.clone(),
            reason,
        })?;
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| TlsError::BadKey {
            path: key_name.clone(),
            reason: e.to_string(),
        })?;
        let signing_key =
            provider
                .key_provider
                .load_private_key(key)
                .map_err(|e| TlsError::BadKey {
                    path: key_name.clone(),
                    reason: e.to_string(),
                })?;
        let certified = CertifiedKey::new(chain, signing_key);
        certified.keys_match().map_err(|_| TlsError::KeyMismatch {
            cert: cert_name,
            key: key_name,
        })?;
        Ok(LoadedCert {
            files: files.clone(),
            key: Arc::new(certified),
            names,
        })
    }

    /// webpki's own check of the leaf for one name; parses the certificate, so not for handshakes.
    fn valid_for(&self, name: &ServerName<'_>) -> bool {
        self.key.cert.first().is_some_and(|leaf| {
            webpki::EndEntityCert::try_from(leaf)
                .is_ok_and(|cert| cert.verify_is_valid_for_subject_name(name).is_ok())
        })
    }
}

/// The DNS names a leaf certificate is valid for, read once at load so that no handshake
/// parses a certificate. Each name the certificate lists is kept only if webpki itself finds
/// the certificate valid for it (for `*.parent`, for a name one label below `parent`), so the
/// index never claims more than webpki's own name check would grant.
fn covered_names(leaf: &CertificateDer<'_>) -> Result<Vec<String>, String> {
    let cert = webpki::EndEntityCert::try_from(leaf).map_err(|e| format!("{e:?}"))?;
    let verified = |name: &str| {
        ServerName::try_from(name)
            .is_ok_and(|name| cert.verify_is_valid_for_subject_name(&name).is_ok())
    };
    let mut names = Vec::new();
    for listed in cert.valid_dns_names() {
        let name = listed.to_ascii_lowercase();
        let probe = match name.strip_prefix("*.") {
            Some(parent) => format!("probe.{parent}"),
            None => name.clone(),
        };
        if verified(&probe) && !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Checks a chain and key before they are written to `files`, as a load of those files would:
/// they parse, belong together, and the certificate is valid for `name`. The chain's leaf.
pub(crate) fn check_pair(
    files: &CertFiles,
    cert_pem: &[u8],
    key_pem: &[u8],
    name: &str,
) -> Result<CertificateDer<'static>, String> {
    let loaded =
        LoadedCert::from_pem(files, cert_pem, key_pem, &provider()).map_err(|e| e.to_string())?;
    let server_name = ServerName::try_from(name).map_err(|e| e.to_string())?;
    if !loaded.valid_for(&server_name) {
        return Err(format!("the certificate is not valid for {name}"));
    }
    loaded
        .key
        .cert
        .first()
        .cloned()
        .ok_or_else(|| "the chain holds no certificate".to_owned())
}

/// The first certificate of a PEM chain: the leaf.
pub(crate) fn leaf_of(pem: &[u8]) -> Option<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem).next()?.ok()
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// Chooses a certificate by SNI, through an index built at load: an exact name first, then a
/// wildcard one label up (as webpki matches wildcards: one whole left-most label). Among
/// certificates with the same name, the first in the config wins. A client that sends no SNI
/// (a bare IP address) gets the first certificate; a name no certificate covers fails the
/// handshake rather than get a wrong one.
#[derive(Debug)]
pub(crate) struct SniResolver {
    certs: Vec<LoadedCert>,
    /// Exact DNS name → certificate index.
    exact: HashMap<String, usize>,
    /// `parent` of a `*.parent` name → certificate index.
    wildcard: HashMap<String, usize>,
    /// Open TLS-ALPN-01 challenges, answered to the CA's validation connections only.
    challenges: Option<Arc<dyn ValidationCertificates>>,
}

impl SniResolver {
    fn new(certs: Vec<LoadedCert>) -> Self {
        let mut exact = HashMap::new();
        let mut wildcard = HashMap::new();
        for (index, cert) in certs.iter().enumerate() {
            for name in &cert.names {
                match name.strip_prefix("*.") {
                    Some(parent) => wildcard.entry(parent.to_owned()).or_insert(index),
                    None => exact.entry(name.clone()).or_insert(index),
                };
            }
        }
        SniResolver {
            certs,
            exact,
            wildcard,
            challenges: None,
        }
    }

    /// The same, also answering TLS-ALPN-01 validation connections from `challenges`.
    pub(crate) fn answering_tls_alpn(
        mut self,
        challenges: Arc<dyn ValidationCertificates>,
    ) -> Self {
        self.challenges = Some(challenges);
        self
    }

    /// Each certificate's file and `notAfter`, for metrics and `check`.
    pub(crate) fn expiries(&self) -> Vec<CertExpiry> {
        self.certs
            .iter()
            .filter_map(|c| {
                let leaf = c.key.cert.first()?;
                Some(CertExpiry {
                    file: c.files.cert.display().to_string(),
                    not_after_seconds: not_after(leaf)?,
                })
            })
            .collect()
    }

    fn for_name(&self, name: Option<&str>) -> Option<&LoadedCert> {
        let Some(name) = name else {
            return self.certs.first();
        };
        // rustls hands SNI over as sent; names are compared in lower case.
        let name = if name.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(name.to_ascii_lowercase())
        } else {
            Cow::Borrowed(name)
        };
        let index = self.exact.get(name.as_ref()).or_else(|| {
            let (label, parent) = name.split_once('.')?;
            // An empty label is no label: `.example.com` is not under `*.example.com`.
            (!label.is_empty()).then(|| self.wildcard.get(parent))?
        })?;
        self.certs.get(*index)
    }
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        if let Some(challenges) = &self.challenges {
            // RFC 8737: a validation connection offers `acme-tls/1` and nothing else, and gets
            // the validation certificate; no other connection ever does.
            let mut offered = hello.alpn().into_iter().flatten();
            let validation = offered.next() == Some(ACME_TLS_ALPN) && offered.next().is_none();
            if validation {
                return hello
                    .server_name()
                    .and_then(|name| challenges.for_name(name));
            }
        }
        let chosen = self.for_name(hello.server_name());
        if chosen.is_none() {
            tracing::debug!(sni = ?hello.server_name(), "no certificate for the requested name");
        }
        chosen.map(|c| c.key.clone())
    }
}

/// Loads every certificate of the `[tls]` table.
pub(crate) fn load_all(
    files: &TlsFiles,
    provider: &CryptoProvider,
) -> Result<SniResolver, TlsError> {
    let certs = files
        .certificates
        .iter()
        .map(|pair| LoadedCert::load(pair, provider))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SniResolver::new(certs))
}

/// The rustls server config: TLS 1.3 and (unless `min_version` is 1.3) 1.2, with the
/// provider's default suites (AEAD with forward secrecy only), ALPN h2 then http/1.1, and
/// `acme-tls/1` last when the resolver answers TLS-ALPN-01 challenges.
pub(crate) fn server_config(
    resolver: Arc<SniResolver>,
    provider: Arc<CryptoProvider>,
    min_version: TlsVersion,
) -> Result<ServerConfig, TlsError> {
    let tls_alpn = resolver.challenges.is_some();
    let versions: &[&rustls::SupportedProtocolVersion] = match min_version {
        TlsVersion::Tls12 => &[&version::TLS13, &version::TLS12],
        TlsVersion::Tls13 => &[&version::TLS13],
    };
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    if tls_alpn {
        config.alpn_protocols.push(ACME_TLS_ALPN.to_vec());
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn certificate(dir: &Path, stem: &str, names: &[&str]) -> LoadedCert {
        let key = rcgen::KeyPair::generate().expect("rcgen makes a key");
        let names = names.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let params = rcgen::CertificateParams::new(names).expect("valid names");
        let cert = params.self_signed(&key).expect("rcgen signs");
        let files = CertFiles {
            cert: dir.join(format!("{stem}.crt")),
            key: dir.join(format!("{stem}.key")),
        };
        std::fs::write(&files.cert, cert.pem()).unwrap();
        std::fs::write(&files.key, key.serialize_pem()).unwrap();
        LoadedCert::load(&files, &provider()).unwrap()
    }

    #[test]
    fn the_sni_index_grants_what_webpki_grants_and_prefers_exact_names() {
        let dir = tempfile::tempdir().unwrap();
        let wildcard = certificate(dir.path(), "wildcard", &["*.studio.test", "chat.test"]);
        let exact = certificate(dir.path(), "exact", &["exact.studio.test", "chat.test"]);
        let resolver = SniResolver::new(vec![wildcard, exact]);
        let chosen = |name: &str| resolver.for_name(Some(name)).map(|c| c.files.cert.clone());
        let stem = |stem: &str| Some(dir.path().join(format!("{stem}.crt")));
        assert_eq!(
            chosen("exact.studio.test"),
            stem("exact"),
            "exact before wildcard"
        );
        assert_eq!(
            chosen("EXACT.Studio.test"),
            stem("exact"),
            "compared in lower case"
        );
        assert_eq!(chosen("a1.studio.test"), stem("wildcard"));
        assert_eq!(
            chosen("chat.test"),
            stem("wildcard"),
            "the first of equals wins"
        );
        assert_eq!(
            resolver.for_name(None).map(|c| c.files.cert.clone()),
            stem("wildcard"),
            "no SNI: the first certificate"
        );
        let names = [
            "exact.studio.test",
            "a1.studio.test",
            "studio.test",
            "a.b.studio.test",
            ".studio.test",
            "chat.test",
            "x.chat.test",
            "other.test",
        ];
        for name in names {
            let webpki_grants = ServerName::try_from(name)
                .is_ok_and(|sn| resolver.certs.iter().any(|c| c.valid_for(&sn)));
            let chosen = resolver.for_name(Some(name));
            assert_eq!(chosen.is_some(), webpki_grants, "{name}");
            if let (Some(cert), Ok(sn)) = (chosen, ServerName::try_from(name)) {
                assert!(
                    cert.valid_for(&sn),
                    "{name}: the chosen certificate is valid for it"
                );
            }
        }
    }

    /// Answers every name with one validation certificate (a marker: its own subject name).
    #[derive(Debug)]
    struct Open(Arc<CertifiedKey>);

    impl ValidationCertificates for Open {
        fn for_name(&self, _: &str) -> Option<Arc<CertifiedKey>> {
            Some(self.0.clone())
        }
    }

    /// Accepts any server certificate: the test reads which one it was given.
    #[derive(Debug)]
    struct AnyCertificate(Arc<CryptoProvider>);

    impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
        fn verify_server_cert(
            &self,
            _: &CertificateDer<'_>,
            _: &[CertificateDer<'_>],
            _: &ServerName<'_>,
            _: &[u8],
            _: rustls_pki_types::UnixTime,
        ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
            Ok(rustls::client::danger::ServerCertVerified::assertion())
        }
        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls12_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }
        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }
        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            self.0.signature_verification_algorithms.supported_schemes()
        }
    }

    /// The certificate a client offering `alpn` gets for `name`, if the handshake succeeds.
    async fn served(config: Arc<ServerConfig>, name: &str, alpn: &[&[u8]]) -> Option<Vec<u8>> {
        let mut client = rustls::ClientConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider())))
            .with_no_client_auth();
        client.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(async move {
            tokio_rustls::TlsAcceptor::from(config)
                .accept(theirs)
                .await
                .ok()
        });
        let name = ServerName::try_from(name.to_owned()).unwrap();
        let connected = tokio_rustls::TlsConnector::from(Arc::new(client))
            .connect(name, ours)
            .await
            .ok();
        drop(server.await);
        let leaf = connected?
            .get_ref()
            .1
            .peer_certificates()?
            .first()?
            .to_vec();
        Some(leaf)
    }

    #[tokio::test]
    async fn only_a_connection_offering_acme_tls_alone_gets_the_validation_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let page = certificate(dir.path(), "page", &["chat.test"]);
        let page_leaf = page.key.cert[0].to_vec();
        let validation = certificate(dir.path(), "validation", &["chat.test"]).key;
        let validation_leaf = validation.cert[0].to_vec();
        let resolver = SniResolver::new(vec![page]).answering_tls_alpn(Arc::new(Open(validation)));
        let config =
            Arc::new(server_config(Arc::new(resolver), provider(), TlsVersion::Tls12).unwrap());
        let acme: &[u8] = ACME_TLS_ALPN;
        assert_eq!(
            served(config.clone(), "chat.test", &[acme]).await,
            Some(validation_leaf.clone()),
            "the CA's check"
        );
        for browser in [
            &[b"h2".as_slice(), b"http/1.1"][..],
            &[b"h2", acme],
            &[acme, b"h2"],
            &[],
        ] {
            assert_eq!(
                served(config.clone(), "chat.test", browser).await,
                Some(page_leaf.clone()),
                "{browser:?}: the page's certificate"
            );
        }
        // Without TLS-ALPN-01 answered, acme-tls/1 is not even negotiated.
        let plain = SniResolver::new(vec![certificate(dir.path(), "p2", &["chat.test"])]);
        let config =
            Arc::new(server_config(Arc::new(plain), provider(), TlsVersion::Tls12).unwrap());
        assert_eq!(served(config, "chat.test", &[acme]).await, None);
    }
}
