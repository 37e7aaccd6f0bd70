//! Listeners and connections: accept, TLS handshake, HTTP/1 or HTTP/2, deadlines, drain.
//!
//! Each connection runs in its own task, handshake included, holding one permit of the
//! connection cap. The HTTP version is chosen explicitly (ALPN over TLS, the h2 preface over
//! plain TCP) so that every phase has a deadline; hyper's auto-detecting builder reads the
//! first bytes without one.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use http::{Request, Response};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio_rustls::TlsAcceptor;

use crate::config::{Config, Limits};
use crate::service::{Body, Service};
use crate::tls;

/// Answers one request; the proxy service and the demo host page are both one of these.
pub type Handler = Arc<dyn Fn(&Request<Incoming>) -> Response<Body> + Send + Sync>;

/// Why the server could not start. Nothing is listening when this is returned.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: io::Error },
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
}

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// First back-off after an accept error such as EMFILE; doubles up to `MAX_ACCEPT_BACKOFF`.
const MIN_ACCEPT_BACKOFF: Duration = Duration::from_millis(5);
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);

/// Everything a connection task needs, shared by all of them.
struct Shared {
    handler: Handler,
    tls: Option<TlsAcceptor>,
    limits: Limits,
}

/// One bound listener and what it serves.
struct Listener {
    name: &'static str,
    socket: TcpListener,
    shared: Arc<Shared>,
}

/// Bound listeners, ready to run. Binding is separate from running so that callers (tests,
/// `serve`) learn the real addresses (port 0) before the first request.
pub struct Server {
    listeners: Vec<Listener>,
    connections: Arc<Semaphore>,
    shutdown_grace: Duration,
}

impl Server {
    /// Loads certificates and binds every listener of `config`. Fails as a whole.
    pub async fn bind(config: &Config) -> Result<Server, ServeError> {
        let service = Arc::new(Service::new(config));
        let handler: Handler = Arc::new(move |req| service.handle(req));
        let acceptor = match &config.tls {
            Some(files) => {
                let provider = tls::provider();
                let resolver = Arc::new(tls::load_all(files, &provider)?);
                let server_config = tls::server_config(resolver, provider)?;
                Some(TlsAcceptor::from(Arc::new(server_config)))
            }
            None => None,
        };
        let mut listeners = vec![Listener {
            name: "public",
            socket: bind(config.listen).await?,
            shared: Arc::new(Shared {
                handler,
                tls: acceptor,
                limits: config.limits.clone(),
            }),
        }];
        if let Some(addr) = config.demo_listen {
            let proxy_url = format!("http://{}", config.hosts[0].sandbox);
            let demo = Arc::new(crate::demo::DemoHost::new(&proxy_url));
            listeners.push(Listener {
                name: "demo",
                socket: bind(addr).await?,
                shared: Arc::new(Shared {
                    handler: Arc::new(move |req| demo.handle(req)),
                    tls: None,
                    limits: config.limits.clone(),
                }),
            });
        }
        Ok(Server {
            listeners,
            connections: Arc::new(Semaphore::new(config.limits.max_connections)),
            shutdown_grace: config.limits.shutdown_grace,
        })
    }

    /// The address of the public listener (the real port when bound to port 0).
    pub fn public_addr(&self) -> SocketAddr {
        self.addr_of("public")
            .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// The address of the demo host page, when the embedded default serves it.
    pub fn demo_addr(&self) -> Option<SocketAddr> {
        self.addr_of("demo")
    }

    fn addr_of(&self, name: &str) -> Option<SocketAddr> {
        self.listeners
            .iter()
            .find(|l| l.name == name)
            .and_then(|l| l.socket.local_addr().ok())
    }

    /// Serves until `shutdown` resolves, then stops accepting, lets in-flight requests finish
    /// and closes idle connections, waiting at most `shutdown_grace`.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        let graceful = Arc::new(GracefulShutdown::new());
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut accept_loops = Vec::new();
        for listener in self.listeners {
            let stop = stop_rx.clone();
            let connections = self.connections.clone();
            let graceful = graceful.clone();
            accept_loops.push(tokio::spawn(accept_loop(
                listener,
                connections,
                graceful,
                stop,
            )));
        }
        shutdown.await;
        tracing::info!(grace = ?self.shutdown_grace, "shutting down: no new connections");
        let _ = stop_tx.send(true);
        for accept_loop in accept_loops {
            let _ = accept_loop.await;
        }
        // The accept loops held the only other references, and they have ended.
        let Ok(graceful) = Arc::try_unwrap(graceful) else {
            tracing::warn!("connections could not be drained; closing them");
            return;
        };
        match tokio::time::timeout(self.shutdown_grace, graceful.shutdown()).await {
            Ok(()) => tracing::info!("all connections closed"),
            Err(_) => tracing::warn!("shutdown grace ran out; closing the remaining connections"),
        }
    }
}

async fn bind(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

async fn accept_loop(
    listener: Listener,
    connections: Arc<Semaphore>,
    graceful: Arc<GracefulShutdown>,
    mut stop: watch::Receiver<bool>,
) {
    let mut backoff = MIN_ACCEPT_BACKOFF;
    loop {
        // The permit is taken before accepting: at the cap, new clients wait in the kernel's
        // backlog instead of costing a task each.
        let permit = tokio::select! {
            _ = stop.changed() => return,
            permit = connections.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => return,
            },
        };
        let accepted = tokio::select! {
            _ = stop.changed() => return,
            accepted = listener.socket.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => {
                backoff = MIN_ACCEPT_BACKOFF;
                let shared = listener.shared.clone();
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    serve_connection(stream, peer, shared, watcher).await;
                    drop(permit);
                });
            }
            Err(e) => {
                // EMFILE and friends: the listener is fine, the process is out of something.
                // Retrying at once would spin; wait, and longer each time.
                tracing::warn!(listener = listener.name, error = %e, ?backoff, "accept failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_ACCEPT_BACKOFF);
            }
        }
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    watcher: Watcher,
) {
    let _ = stream.set_nodelay(true);
    let limits = &shared.limits;
    match &shared.tls {
        Some(acceptor) => {
            let handshake = tokio::time::timeout(limits.handshake_timeout, acceptor.accept(stream));
            let tls_stream = match handshake.await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "TLS handshake deadline passed");
                    return;
                }
            };
            let h2 = tls_stream.get_ref().1.alpn_protocol() == Some(b"h2");
            serve_http(tls_stream, h2, &shared, watcher).await;
        }
        None => {
            let sniff = tokio::time::timeout(limits.header_read_timeout, read_preface(stream));
            let (stream, h2) = match sniff.await {
                Ok(Ok(sniffed)) => sniffed,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "connection closed before a request");
                    return;
                }
                Err(_) => {
                    tracing::debug!(%peer, "header read deadline passed before the first byte");
                    return;
                }
            };
            serve_http(stream, h2, &shared, watcher).await;
        }
    }
}

/// Reads until the bytes either are the HTTP/2 preface or cannot become it. An HTTP/1
/// request differs at its first byte, so this is usually one read.
async fn read_preface(mut stream: TcpStream) -> io::Result<(Prefixed<TcpStream>, bool)> {
    let mut buf = BytesMut::with_capacity(H2_PREFACE.len());
    loop {
        if stream.read_buf(&mut buf).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let n = buf.len().min(H2_PREFACE.len());
        if buf[..n] != H2_PREFACE[..n] {
            return Ok((Prefixed::new(buf.freeze(), stream), false));
        }
        if n == H2_PREFACE.len() {
            return Ok((Prefixed::new(buf.freeze(), stream), true));
        }
    }
}

async fn serve_http<I>(io: I, h2: bool, shared: &Arc<Shared>, watcher: Watcher)
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let handler = shared.handler.clone();
    let service = service_fn(move |req: Request<Incoming>| {
        let response = handler(&req);
        async move { Ok::<_, Infallible>(response) }
    });
    let limits = &shared.limits;
    let io = TokioIo::new(io);
    let result = if h2 {
        let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
        builder
            .timer(TokioTimer::new())
            .max_concurrent_streams(limits.h2_max_concurrent_streams)
            .max_header_list_size(u32::try_from(limits.max_header_bytes).unwrap_or(u32::MAX))
            .keep_alive_interval(limits.idle_timeout / 2)
            .keep_alive_timeout(limits.idle_timeout / 2);
        watcher.watch(builder.serve_connection(io, service)).await
    } else {
        let mut builder = hyper::server::conn::http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .max_headers(100)
            .max_buf_size(limits.max_header_bytes.max(8192))
            .keep_alive(true);
        watcher.watch(builder.serve_connection(io, service)).await
    };
    if let Err(e) = result {
        tracing::debug!(error = %e, "connection ended with an error");
    }
}

/// A stream that first yields bytes already read from it.
pub struct Prefixed<S> {
    prefix: Bytes,
    inner: S,
}

impl<S> Prefixed<S> {
    fn new(prefix: Bytes, inner: S) -> Self {
        Prefixed { prefix, inner }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Prefixed<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.prefix.has_remaining() {
            let n = self.prefix.len().min(buf.remaining());
            buf.put_slice(&self.prefix[..n]);
            self.prefix.advance(n);
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Prefixed<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}
