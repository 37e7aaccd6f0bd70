//! What the benchmark's clients share: a TLS connector for the benchmark's throwaway certificate
//! and a reader for one HTTP/1.1 answer.
//!
//! Both clients talk to loopback addresses only (each refuses any other), which is why they may
//! accept any certificate.

use std::error::Error;
use std::net::SocketAddr;
use std::sync::Arc;

use rustls::client::Resumption;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{
    CryptoProvider, WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature,
};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_rustls::TlsConnector;

pub type BoxError = Box<dyn Error + Send + Sync>;

/// How much the client checks of the server's handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checks {
    /// The handshake signature, with the provider's algorithms (not the certificate).
    Signature,
    /// Nothing: the client's share of each handshake is then its key exchange alone, well below
    /// the server's (which also signs), so one client core can keep one server core busy.
    Nothing,
}

/// `addr` as given, if it is a loopback address.
pub fn loopback(addr: &str) -> Result<SocketAddr, BoxError> {
    let addr: SocketAddr = addr.parse()?;
    if !addr.ip().is_loopback() {
        return Err(format!("{addr} is not a loopback address").into());
    }
    Ok(addr)
}

/// A TLS connector offering HTTP/1.1 by ALPN; without session resumption, every handshake is
/// a full one.
pub fn connector(checks: Checks, resumption: bool) -> Result<TlsConnector, BoxError> {
    connector_for(checks, resumption, b"http/1.1")
}

/// As `connector`, offering `protocol` alone by ALPN (`h2` for HTTP/2).
pub fn connector_for(
    checks: Checks,
    resumption: bool,
    protocol: &[u8],
) -> Result<TlsConnector, BoxError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate { provider, checks }))
        .with_no_client_auth();
    config.alpn_protocols = vec![protocol.to_vec()];
    if !resumption {
        config.resumption = Resumption::disabled();
    }
    Ok(TlsConnector::from(Arc::new(config)))
}

/// `name` as the server name a client sends.
pub fn server_name(name: &str) -> Result<ServerName<'static>, BoxError> {
    Ok(ServerName::try_from(name.to_owned())?)
}

/// Reads one answer with a `Content-Length` body, which must be a `200`.
pub async fn read_answer<S: AsyncRead + Unpin>(stream: &mut S) -> Result<(), BoxError> {
    let mut received = Vec::with_capacity(16 * 1024);
    let head_end = loop {
        if let Some(at) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if stream.read_buf(&mut received).await? == 0 {
            return Err("the server closed before the end of the head".into());
        }
    };
    let head = std::str::from_utf8(&received[..head_end])?;
    let status = head.lines().next().unwrap_or_default();
    if !status.starts_with("HTTP/1.1 200 ") {
        return Err(format!("expected a 200, got {status:?}").into());
    }
    let length: usize = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse().ok())?
        })
        .ok_or("the answer has no content-length")?;
    while received.len() < head_end + length {
        if stream.read_buf(&mut received).await? == 0 {
            return Err("the server closed before the end of the body".into());
        }
    }
    Ok(())
}

/// Accepts any certificate; checks the handshake signature only if asked to.
#[derive(Debug)]
struct AnyCertificate {
    provider: Arc<CryptoProvider>,
    checks: Checks,
}

impl AnyCertificate {
    /// Runs `verify` with the provider's algorithms, if signatures are checked at all.
    fn check(
        &self,
        verify: impl FnOnce(
            &WebPkiSupportedAlgorithms,
        ) -> Result<HandshakeSignatureValid, rustls::Error>,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        match self.checks {
            Checks::Nothing => Ok(HandshakeSignatureValid::assertion()),
            Checks::Signature => verify(&self.provider.signature_verification_algorithms),
        }
    }
}

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.check(|algorithms| verify_tls12_signature(message, cert, dss, algorithms))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.check(|algorithms| verify_tls13_signature(message, cert, dss, algorithms))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
