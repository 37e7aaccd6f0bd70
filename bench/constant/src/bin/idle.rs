//! Holds idle TLS connections open so that `bench/run` can price one in server memory: opens N
//! connections to a server on loopback, makes one HTTP/1.1 keep-alive request on each (reading
//! the whole answer, which must be a `200`), keeps them all open, prints `ready N` and waits to
//! be killed.
//!
//! ```text
//! idle ADDR SERVER_NAME N PATH
//! ```
//!
//! `SERVER_NAME` is sent as SNI and, with the port, as `Host`. The server's certificate is not
//! verified (the benchmark's throwaway certificate), which is why `ADDR` must be a loopback
//! address; the handshake's signature still is.

use std::error::Error;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::{ClientConfig, DigitallySignedStruct, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

type BoxError = Box<dyn Error + Send + Sync>;

/// Connections opened at once: enough to keep a one-core server busy with handshakes.
const LANES: usize = 16;
/// Each connection's handshake, request and answer.
const PER_CONNECTION: Duration = Duration::from_secs(20);

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, name, count, path] = args.as_slice() else {
        return Err("usage: idle ADDR SERVER_NAME N PATH".into());
    };
    let addr: SocketAddr = addr.parse()?;
    if !addr.ip().is_loopback() {
        return Err(format!("{addr} is not a loopback address").into());
    }
    let count: usize = count.parse()?;
    let server_name = ServerName::try_from(name.clone())?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {name}:{}\r\n\r\n",
        addr.port()
    );

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let connector = TlsConnector::from(Arc::new(config));

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut lanes = tokio::task::JoinSet::new();
        for lane in 0..LANES {
            let share = count / LANES + usize::from(lane < count % LANES);
            let (connector, server_name) = (connector.clone(), server_name.clone());
            let request = request.clone();
            lanes.spawn(async move {
                let mut open = Vec::with_capacity(share);
                for _ in 0..share {
                    let connection = open_and_ask(&connector, addr, &server_name, &request);
                    let stream = tokio::time::timeout(PER_CONNECTION, connection)
                        .await
                        .map_err(|_| format!("a connection took over {PER_CONNECTION:?}"))??;
                    open.push(stream);
                }
                Ok::<_, BoxError>(open)
            });
        }
        let mut open = Vec::with_capacity(count);
        while let Some(lane) = lanes.join_next().await {
            open.extend(lane??);
        }
        println!("ready {}", open.len());
        std::io::stdout().flush()?;
        // Held until the process is killed.
        std::future::pending::<()>().await;
        drop(open);
        Ok(())
    })
}

/// A TLS connection that has had one keep-alive request answered in full.
async fn open_and_ask(
    connector: &TlsConnector,
    addr: SocketAddr,
    server_name: &ServerName<'static>,
    request: &str,
) -> Result<TlsStream<TcpStream>, BoxError> {
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let mut tls = connector.connect(server_name.clone(), tcp).await?;
    tls.write_all(request.as_bytes()).await?;
    let mut received = Vec::with_capacity(16 * 1024);
    let head_end = loop {
        if let Some(at) = received.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if tls.read_buf(&mut received).await? == 0 {
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
        if tls.read_buf(&mut received).await? == 0 {
            return Err("the server closed before the end of the body".into());
        }
    }
    Ok(tls)
}

/// Accepts any certificate; checks the handshake signature with the provider's algorithms.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

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
        verify_tls12_signature(
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
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
