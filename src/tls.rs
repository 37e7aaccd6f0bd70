//! TLS: certificates and keys from PEM files, chosen by SNI, in a rustls config (ring only).
//!
//! A certificate is chosen by the names it carries itself (its subject alternative names,
//! wildcards included), so config never repeats them.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{ServerConfig, version};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use crate::config::{CertFiles, TlsFiles};

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

/// The one crypto provider of the service.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// One certificate chain and its key, checked to belong together.
#[derive(Clone)]
pub struct LoadedCert {
    pub files: CertFiles,
    pub key: Arc<CertifiedKey>,
}

impl fmt::Debug for LoadedCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoadedCert")
            .field("files", &self.files)
            .finish()
    }
}

impl LoadedCert {
    /// Reads and checks one pair of PEM files.
    pub fn load(files: &CertFiles, provider: &CryptoProvider) -> Result<Self, TlsError> {
        let cert_name = files.cert.display().to_string();
        let key_name = files.key.display().to_string();
        let cert_pem = read(&files.cert)?;
        let key_pem = read(&files.key)?;
        let chain = CertificateDer::pem_slice_iter(&cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| TlsError::BadCertificate {
                path: cert_name.clone(),
                reason: e.to_string(),
            })?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate { path: cert_name });
        }
        webpki::EndEntityCert::try_from(&chain[0]).map_err(|e| TlsError::BadCertificate {
            path: cert_name.clone(),
            reason: format!("{e:?}"),
        })?;
        let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|e| TlsError::BadKey {
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
        })
    }

    /// Whether this certificate is valid for `name`, by its own subject alternative names.
    pub fn covers(&self, name: &str) -> bool {
        let Ok(server_name) = ServerName::try_from(name) else {
            return false;
        };
        let Some(leaf) = self.key.cert.first() else {
            return false;
        };
        webpki::EndEntityCert::try_from(leaf)
            .is_ok_and(|cert| cert.verify_is_valid_for_subject_name(&server_name).is_ok())
    }
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| TlsError::Read {
        path: path.display().to_string(),
        source,
    })
}

/// Chooses a certificate by SNI. A client that sends no SNI (a bare IP address) gets the
/// first; a name no certificate covers fails the handshake rather than get a wrong one.
#[derive(Debug)]
pub struct SniResolver {
    certs: Vec<LoadedCert>,
}

impl SniResolver {
    pub fn new(certs: Vec<LoadedCert>) -> Self {
        SniResolver { certs }
    }

    pub fn certs(&self) -> &[LoadedCert] {
        &self.certs
    }

    pub fn for_name(&self, name: Option<&str>) -> Option<&LoadedCert> {
        match name {
            None => self.certs.first(),
            Some(name) => self.certs.iter().find(|c| c.covers(name)),
        }
    }
}

impl ResolvesServerCert for SniResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let chosen = self.for_name(hello.server_name());
        if chosen.is_none() {
            tracing::debug!(sni = ?hello.server_name(), "no certificate for the requested name");
        }
        chosen.map(|c| c.key.clone())
    }
}

/// Loads every certificate of the `[tls]` table.
pub fn load_all(files: &TlsFiles, provider: &CryptoProvider) -> Result<SniResolver, TlsError> {
    let certs = files
        .certificates
        .iter()
        .map(|pair| LoadedCert::load(pair, provider))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SniResolver::new(certs))
}

/// The rustls server config: TLS 1.3 and 1.2 with the provider's default suites, ALPN h2
/// then http/1.1.
pub fn server_config(
    resolver: Arc<SniResolver>,
    provider: Arc<CryptoProvider>,
) -> Result<ServerConfig, TlsError> {
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&version::TLS13, &version::TLS12])?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}
