//! The HTTP client the ACME protocol runs over: HTTP/1.1 on a new rustls connection per
//! request, checked against the configured roots only. ACME is a few requests a day; keeping
//! no connection open keeps nothing to go stale.
//!
//! The CA is trusted for what it signs, not for how it talks: an exchange must end within one
//! deadline from the connect to the answer's last byte, and an answer must fit a small cap, so
//! that a stalled or oversized answer fails the order (counted and retried) instead of holding
//! the ACME task or the process's memory.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, header};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use instant_acme::{BodyWrapper, BytesResponse, Error, HttpClient};
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use super::error::AcmeError;
use crate::config::SYSTEM_CA_BUNDLES;
use crate::tls;

/// How long one exchange with the CA may take, from the connect to the answer's last byte.
const EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);

/// The most read of one answer: a directory, an order or a certificate chain is a few
/// kilobytes, so an answer larger than this is no answer of a CA's.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// Why an exchange ended without its answer when the CA stalled ([`EXCHANGE_TIMEOUT`]).
const STALLED: &str = "the ACME server did not answer in full within 30 s";

/// Why an answer was refused for its size ([`MAX_ANSWER_BYTES`]).
const TOO_LARGE: &str = "the ACME server's answer is larger than 256 KiB";

/// The roots file in use: the configured one, or the first system bundle that exists.
pub(crate) fn roots_file(configured: Option<&Path>) -> Result<PathBuf, AcmeError> {
    if let Some(path) = configured {
        return Ok(path.to_owned());
    }
    SYSTEM_CA_BUNDLES
        .iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
        .ok_or(AcmeError::NoCaBundle {
            searched: SYSTEM_CA_BUNDLES,
        })
}

/// The roots in a PEM file; every certificate in it is trusted.
pub(crate) fn load_roots(path: &Path) -> Result<RootCertStore, AcmeError> {
    let pem = std::fs::read(path).map_err(|source| AcmeError::Read {
        path: path.to_owned(),
        source,
    })?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|source| AcmeError::RootsNotPem {
            path: path.to_owned(),
            source,
        })?;
        roots.add(cert).map_err(|source| AcmeError::UnusableRoot {
            path: path.to_owned(),
            source,
        })?;
    }
    if roots.is_empty() {
        return Err(AcmeError::NoRoots {
            path: path.to_owned(),
        });
    }
    Ok(roots)
}

/// Talks to the CA over https, trusting `roots` only.
pub(crate) struct Client {
    connector: TlsConnector,
    /// [`EXCHANGE_TIMEOUT`], shorter in tests.
    deadline: Duration,
}

impl Client {
    pub(crate) fn new(roots: RootCertStore) -> Result<Self, AcmeError> {
        let mut config = rustls::ClientConfig::builder_with_provider(tls::provider())
            .with_safe_default_protocol_versions()
            .map_err(AcmeError::TlsConfig)?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Client {
            connector: TlsConnector::from(Arc::new(config)),
            deadline: EXCHANGE_TIMEOUT,
        })
    }
}

impl HttpClient for Client {
    fn request(
        &self,
        req: Request<BodyWrapper<Bytes>>,
    ) -> Pin<Box<dyn Future<Output = Result<BytesResponse, Error>> + Send>> {
        let connector = self.connector.clone();
        let deadline = self.deadline;
        Box::pin(async move {
            match tokio::time::timeout(deadline, send(connector, req)).await {
                Ok(result) => result,
                Err(_) => Err(Error::Str(STALLED)),
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
    read_whole(response).await
}

/// The answer with its whole body, read now (within the exchange's deadline) and at most
/// [`MAX_ANSWER_BYTES`] of it.
async fn read_whole(response: http::Response<Incoming>) -> Result<BytesResponse, Error> {
    let (parts, body) = response.into_parts();
    let announced = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if announced.is_some_and(|length| length > MAX_ANSWER_BYTES as u64) {
        return Err(Error::Str(TOO_LARGE));
    }
    let body = Limited::new(body, MAX_ANSWER_BYTES)
        .collect()
        .await
        .map_err(|e| {
            if e.is::<LengthLimitError>() {
                Error::Str(TOO_LARGE)
            } else {
                Error::Other(e)
            }
        })?
        .to_bytes();
    Ok(BytesResponse {
        parts,
        body: Box::new(body),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// What a scripted CA sends after the request head.
    enum Answer {
        /// A head announcing a small body, then nothing, the connection kept open.
        HeadThenSilence,
        /// A head announcing 8 GiB.
        Announced8GiB,
        /// A chunked body that goes on for 4 MiB, more than the cap.
        EndlessChunks,
        /// A whole small answer.
        Whole,
    }

    /// A TLS server on loopback that answers one request as `answer` says; its certificate.
    async fn scripted_ca(answer: Answer) -> (u16, RootCertStore) {
        let key = rcgen::KeyPair::generate().expect("rcgen makes a key");
        let params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).expect("a name");
        let cert = params.self_signed(&key).expect("rcgen signs");
        let mut roots = RootCertStore::empty();
        roots.add(cert.der().clone()).expect("a root");
        let key_der = rustls_pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(tls::provider())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert.der().clone()], key_der)
            .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            let mut tls = acceptor.accept(tcp).await.unwrap();
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && tls.read(&mut byte).await.unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let _ = match answer {
                Answer::HeadThenSilence => {
                    tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{")
                        .await
                }
                Answer::Announced8GiB => {
                    tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 8589934592\r\n\r\n")
                        .await
                }
                Answer::EndlessChunks => {
                    let chunk = format!("4000\r\n{}\r\n", "x".repeat(0x4000));
                    let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
                    let mut sent = tls.write_all(head).await;
                    for _ in 0..256 {
                        sent = sent.and(tls.write_all(chunk.as_bytes()).await);
                    }
                    sent
                }
                Answer::Whole => {
                    tls.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
                        .await
                }
            };
            // Held open until the client goes, as a stalled CA would.
            let _ = tls.read(&mut byte).await;
        });
        (port, roots)
    }

    /// One exchange with a scripted CA, its body read as the ACME code reads it.
    async fn exchange(answer: Answer) -> Result<Bytes, Error> {
        let (port, roots) = scripted_ca(answer).await;
        let mut client = Client::new(roots).unwrap();
        client.deadline = Duration::from_secs(1);
        let request = Request::get(format!("https://localhost:{port}/directory"))
            .body(BodyWrapper::from(Vec::new()))
            .unwrap();
        let bound = Duration::from_secs(10);
        let exchange = async {
            let mut response = client.request(request).await?;
            response.body.into_bytes().await.map_err(Error::Other)
        };
        tokio::time::timeout(bound, exchange)
            .await
            .expect("the exchange ends within its deadline, body included")
    }

    #[tokio::test]
    async fn a_ca_that_stalls_after_the_head_fails_the_exchange_at_the_deadline() {
        let error = exchange(Answer::HeadThenSilence).await.unwrap_err();
        assert!(matches!(error, Error::Str(STALLED)), "{error}");
    }

    #[tokio::test]
    async fn an_answer_announced_over_the_cap_is_refused_unread() {
        let error = exchange(Answer::Announced8GiB).await.unwrap_err();
        assert!(matches!(error, Error::Str(TOO_LARGE)), "{error}");
    }

    #[tokio::test]
    async fn an_answer_that_runs_over_the_cap_is_refused() {
        let error = exchange(Answer::EndlessChunks).await.unwrap_err();
        assert!(matches!(error, Error::Str(TOO_LARGE)), "{error}");
    }

    #[tokio::test]
    async fn a_whole_small_answer_is_read() {
        assert_eq!(exchange(Answer::Whole).await.unwrap(), Bytes::from("{}"));
    }
}
