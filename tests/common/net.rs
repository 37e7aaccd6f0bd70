//! Socket helpers: a server running in-process on port 0, and hyper/rustls clients.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, Version, header};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use mcp_sandbox_proxy::{Config, Server};
use rustls::pki_types::CertificateDer;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// A running server and the means to stop it.
pub struct Running {
    pub addr: SocketAddr,
    pub admin: Option<SocketAddr>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl Running {
    pub async fn start(config: &Config) -> Running {
        let server = Server::bind(config.clone(), None).await.expect("binds");
        let addr = server.public_addr();
        let admin = server.admin_addr();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.run(async {
            let _ = stopped.await;
        }));
        Running {
            addr,
            admin,
            stop: Some(stop),
            task,
        }
    }

    /// Drains and waits for the end; bounded by the longest grace a test sets plus a margin
    /// (tests leave no connection open past their own deadlines).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        tokio::time::timeout(std::time::Duration::from_secs(40), self.task)
            .await
            .expect("the server stops within its grace")
            .unwrap();
    }
}

pub async fn send<I>(io: I, h2: bool, req: Request<Empty<Bytes>>) -> (http::response::Parts, Bytes)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let io = TokioIo::new(io);
    let response: Response<Incoming> = if h2 {
        let (mut sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .unwrap();
        tokio::spawn(conn);
        sender.send_request(req).await.unwrap()
    } else {
        let (mut sender, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
        tokio::spawn(conn);
        sender.send_request(req).await.unwrap()
    };
    let (parts, body) = response.into_parts();
    (parts, body.collect().await.unwrap().to_bytes())
}

/// A request as a browser would send it for `authority`: Host over HTTP/1, :authority over h2.
pub fn page_request(authority: &str, h2: bool, path_and_query: &str) -> Request<Empty<Bytes>> {
    let builder = if h2 {
        Request::get(format!("https://{authority}{path_and_query}")).version(Version::HTTP_2)
    } else {
        Request::get(path_and_query).header(header::HOST, authority)
    };
    builder.body(Empty::new()).unwrap()
}

pub fn tls_client(cert_der: Vec<u8>, alpn: &[&[u8]]) -> tokio_rustls::TlsConnector {
    tls_client_trusting(&[cert_der], alpn)
}

/// A client that trusts exactly `certs` and offers `alpn`.
pub fn tls_client_trusting(certs: &[Vec<u8>], alpn: &[&[u8]]) -> tokio_rustls::TlsConnector {
    let mut roots = rustls::RootCertStore::empty();
    for der in certs {
        roots.add(CertificateDer::from(der.clone())).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    tokio_rustls::TlsConnector::from(Arc::new(config))
}
