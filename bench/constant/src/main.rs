//! The benchmark's reference server: the service's stack (tokio, hyper, rustls with the ring
//! provider) answering every request with the same bytes and headers, read from files at start.
//! Per request it clones a prepared response and nothing else, so its numbers are the ceiling of
//! that stack for the service's page; `bench/run` sets the service and nginx beside it.
//!
//! ```text
//! constant --body FILE [--plain ADDR --plain-headers FILE]
//!          [--tls ADDR --tls-headers FILE --cert PEM --key PEM]
//!          [--br-body FILE [--plain-br-headers FILE] [--tls-br-headers FILE]]
//!          [--runtime multi-thread|current-thread]
//! ```
//!
//! A header file holds one `name: value` a line. With `--br-body`, a request whose
//! `Accept-Encoding` names `br` gets that body and its listener's br headers, as the service
//! answers a browser. The TLS listener offers h2 and http/1.1 by ALPN (as the service does); the
//! plain one speaks HTTP/1.1. The runtime is by default the service's: tokio's multi-thread
//! runtime with its default worker count, one per CPU the process may run on, so pinned to one
//! core (`taskset -c 0`) it has one worker; `current-thread` runs everything on the main thread,
//! as one nginx worker process does.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::error::Error;
use std::future::{Ready, ready};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::service::Service;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;

type BoxError = Box<dyn Error + Send + Sync>;

const USAGE: &str = "usage: constant --body FILE [--plain ADDR --plain-headers FILE] \
                     [--tls ADDR --tls-headers FILE --cert PEM --key PEM] \
                     [--br-body FILE [--plain-br-headers FILE] [--tls-br-headers FILE]] \
                     [--runtime multi-thread|current-thread]";

fn main() -> Result<(), BoxError> {
    let mut options = parse_options(std::env::args().skip(1))?;
    let body = Bytes::from(std::fs::read(take(&mut options, "body")?)?);
    let br_body = match options.remove("br-body") {
        Some(path) => Some(Bytes::from(std::fs::read(path)?)),
        None => None,
    };
    let answers = |options: &mut BTreeMap<String, String>, listener: &str| {
        let headers = read_headers(&take(options, &format!("{listener}-headers"))?)?;
        let br = match &br_body {
            Some(br_body) => {
                let headers = read_headers(&take(options, &format!("{listener}-br-headers"))?)?;
                Some((br_body.clone(), headers))
            }
            None => None,
        };
        Ok::<_, BoxError>(answer(&body, headers, br))
    };
    let plain = match options.remove("plain") {
        Some(addr) => Some((addr.parse::<SocketAddr>()?, answers(&mut options, "plain")?)),
        None => None,
    };
    let tls = match options.remove("tls") {
        Some(addr) => {
            let answer = answers(&mut options, "tls")?;
            let config = tls_config(&take(&mut options, "cert")?, &take(&mut options, "key")?)?;
            Some((addr.parse::<SocketAddr>()?, answer, config))
        }
        None => None,
    };
    let mut runtime = match options.remove("runtime").as_deref() {
        None | Some("multi-thread") => tokio::runtime::Builder::new_multi_thread(),
        Some("current-thread") => tokio::runtime::Builder::new_current_thread(),
        Some(other) => {
            return Err(
                format!("--runtime is multi-thread or current-thread, not {other:?}").into(),
            );
        }
    };
    if let Some(unused) = options.keys().next() {
        return Err(format!("--{unused} is not used with these options\n{USAGE}").into());
    }
    if plain.is_none() && tls.is_none() {
        return Err(format!("nothing to serve: give --plain, --tls or both\n{USAGE}").into());
    }

    let runtime = runtime.enable_all().build()?;
    runtime.block_on(async {
        let mut listeners = tokio::task::JoinSet::new();
        if let Some((addr, answer)) = plain {
            let listener = TcpListener::bind(addr).await?;
            eprintln!("constant: plain HTTP/1.1 on {addr}");
            listeners.spawn(accept_loop(listener, move |tcp| {
                serve_plain(tcp, answer.clone())
            }));
        }
        if let Some((addr, answer, config)) = tls {
            let listener = TcpListener::bind(addr).await?;
            let acceptor = TlsAcceptor::from(Arc::new(config));
            eprintln!("constant: TLS (h2, http/1.1) on {addr}");
            listeners.spawn(accept_loop(listener, move |tcp| {
                serve_tls(tcp, acceptor.clone(), answer.clone())
            }));
        }
        // The accept loops never end: this waits until the process is killed.
        while listeners.join_next().await.is_some() {}
        Ok(())
    })
}

/// The same response to every request: a clone of the body (a reference count) and the headers;
/// with a br form, that one for a request that accepts br.
#[derive(Clone)]
struct Constant(Arc<Answers>);

struct Answers {
    identity: (Bytes, HeaderMap),
    br: Option<(Bytes, HeaderMap)>,
}

fn answer(body: &Bytes, headers: HeaderMap, br: Option<(Bytes, HeaderMap)>) -> Constant {
    Constant(Arc::new(Answers {
        identity: (body.clone(), headers),
        br,
    }))
}

/// Whether `Accept-Encoding` names br (the service weighs q-values too; browsers send none).
fn accepts_br(request: &Request<Incoming>) -> bool {
    request
        .headers()
        .get_all(http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|coding| coding.trim().split(';').next() == Some("br"))
}

impl Service<Request<Incoming>> for Constant {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Ready<Result<Self::Response, Infallible>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let answers = &*self.0;
        let (body, headers) = match &answers.br {
            Some(br) if accepts_br(&request) => br,
            _ => &answers.identity,
        };
        // hyper adds `content-length` (the body's exact size) and `date`.
        let mut response = Response::new(Full::new(body.clone()));
        *response.headers_mut() = headers.clone();
        ready(Ok(response))
    }
}

/// Accepts connections for ever, each served by `serve` in its own task. An accept error (such
/// as too many open files) is reported and retried after a pause rather than ending the server.
async fn accept_loop<F, Fut>(listener: TcpListener, serve: F)
where
    F: Fn(TcpStream) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    loop {
        match listener.accept().await {
            Ok((tcp, _)) => {
                let _ = tcp.set_nodelay(true);
                tokio::spawn(serve(tcp));
            }
            Err(e) => {
                eprintln!("constant: accept: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

async fn serve_plain(tcp: TcpStream, answer: Constant) {
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(tcp), answer)
        .await;
}

async fn serve_tls(tcp: TcpStream, acceptor: TlsAcceptor, answer: Constant) {
    let Ok(tls) = acceptor.accept(tcp).await else {
        return;
    };
    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    let io = TokioIo::new(tls);
    if h2 {
        let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .serve_connection(io, answer)
            .await;
    } else {
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(io, answer)
            .await;
    }
}

/// TLS 1.3 and 1.2 with the ring provider's default suites, ALPN h2 then http/1.1: the service's
/// choices.
fn tls_config(cert: &str, key: &str) -> Result<ServerConfig, BoxError> {
    let chain = CertificateDer::pem_file_iter(cert)?.collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_file(key)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(config)
}

/// `name: value` lines; blank lines are skipped.
fn read_headers(path: &str) -> Result<HeaderMap, BoxError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let mut headers = HeaderMap::new();
    for line in text.lines().filter(|line| !line.trim().is_empty()) {
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| format!("{path}: not a `name: value` line: {line:?}"))?;
        headers.append(
            HeaderName::from_bytes(name.trim().as_bytes())?,
            HeaderValue::from_str(value.trim())?,
        );
    }
    Ok(headers)
}

/// `--name value` pairs, each name at most once.
fn parse_options(
    mut args: impl Iterator<Item = String>,
) -> Result<BTreeMap<String, String>, BoxError> {
    let mut options = BTreeMap::new();
    while let Some(flag) = args.next() {
        let name = flag
            .strip_prefix("--")
            .ok_or_else(|| format!("unexpected argument {flag:?}\n{USAGE}"))?;
        let value = args
            .next()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        if options.insert(name.to_owned(), value).is_some() {
            return Err(format!("{flag} is given twice").into());
        }
    }
    Ok(options)
}

fn take(options: &mut BTreeMap<String, String>, name: &str) -> Result<String, BoxError> {
    options
        .remove(name)
        .ok_or_else(|| format!("--{name} is required here\n{USAGE}").into())
}
