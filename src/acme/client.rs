//! The HTTP client the ACME protocol runs over: HTTP/1.1 on a new rustls connection per
//! request, checked against the configured roots only. ACME is a few requests a day; keeping
//! no connection open keeps nothing to go stale.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, header};
use hyper_util::rt::TokioIo;
use instant_acme::{BodyWrapper, BytesResponse, Error, HttpClient};
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::config::SYSTEM_CA_BUNDLES;
use crate::tls;

/// How long one request to the CA may take, connection and TLS included.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The roots file in use: the configured one, or the first system bundle that exists.
pub(crate) fn roots_file(configured: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = configured {
        return Ok(path.to_owned());
    }
    SYSTEM_CA_BUNDLES
        .iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
        .ok_or_else(|| {
            format!(
                "no CA bundle found ({}): set acme.ca_roots to the PEM roots the directory's certificate chains to",
                SYSTEM_CA_BUNDLES.join(", ")
            )
        })
}

/// The roots in a PEM file; every certificate in it is trusted.
pub(crate) fn load_roots(path: &Path) -> Result<RootCertStore, String> {
    let name = path.display();
    let pem = std::fs::read(path).map_err(|e| format!("{name}: cannot read: {e}"))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| format!("{name}: not PEM certificates: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("{name}: a certificate rustls cannot use as a root: {e}"))?;
    }
    if roots.is_empty() {
        return Err(format!("{name}: no PEM certificate in the file"));
    }
    Ok(roots)
}

/// Talks to the CA over https, trusting `roots` only.
pub(crate) struct Client {
    connector: TlsConnector,
}

impl Client {
    pub(crate) fn new(roots: RootCertStore) -> Result<Self, String> {
        let mut config = rustls::ClientConfig::builder_with_provider(tls::provider())
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Client {
            connector: TlsConnector::from(Arc::new(config)),
        })
    }
}

impl HttpClient for Client {
    fn request(
        &self,
        req: Request<BodyWrapper<Bytes>>,
    ) -> Pin<Box<dyn Future<Output = Result<BytesResponse, Error>> + Send>> {
        let connector = self.connector.clone();
        Box::pin(async move {
            match tokio::time::timeout(REQUEST_TIMEOUT, send(connector, req)).await {
                Ok(result) => result,
                Err(_) => Err(Error::Str("the ACME request took longer than 30 s")),
            }
        })
    }
}

async fn send(
    connector: TlsConnector,
    mut req: Request<BodyWrapper<Bytes>>,
) -> Result<BytesResponse, Error> {
    let uri = req.uri().clone();
    if uri.scheme_str() != Some("https") {
        return Err(Error::Str("the ACME server named a URL that is not https"));
    }
    let host = uri.host().ok_or(Error::Str("an ACME URL without a host"))?;
    let port = uri.port_u16().unwrap_or(443);
    // Brackets of an IPv6 literal are not part of the address.
    let bare = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_owned();
    let name = ServerName::try_from(bare.clone())
        .map_err(|_| Error::Str("an ACME URL whose host is not a DNS name or IP address"))?;
    let tcp = TcpStream::connect((bare.as_str(), port))
        .await
        .map_err(|e| Error::Other(Box::new(e)))?;
    let tls = connector
        .connect(name, tcp)
        .await
        .map_err(|e| Error::Other(Box::new(e)))?;
    let authority = match uri.port_u16() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    };
    let path = uri.path_and_query().map_or("/", |p| p.as_str()).to_owned();
    *req.uri_mut() = path.parse().map_err(|e| Error::Other(Box::new(e)))?;
    let authority =
        header::HeaderValue::from_str(&authority).map_err(|e| Error::Other(Box::new(e)))?;
    req.headers_mut().insert(header::HOST, authority);
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .map_err(|e| Error::Other(Box::new(e)))?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!(error = %e, "ACME connection ended with an error");
        }
    });
    let response = sender
        .send_request(req)
        .await
        .map_err(|e| Error::Other(Box::new(e)))?;
    Ok(BytesResponse::from(response))
}
