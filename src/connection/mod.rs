//! Serving one accepted connection: the TLS handshake or the h2 preface, then HTTP/1
//! (`h1`) or HTTP/2 (`h2`) under the connection's deadlines, until it ends or a drain ends it.
//!
//! The HTTP version is chosen explicitly (ALPN over TLS, the h2 preface over plain TCP) so that
//! every phase has a deadline; hyper's auto-detecting builder reads the first bytes without
//! one. A connection keeps the limits and TLS of the endpoint (config generation) it was
//! accepted under, and answers each request from the endpoint current when it arrives.

mod h1;
mod h2;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use bytes::BytesMut;
use http::Request;
use hyper::body::Incoming;
use hyper::service::service_fn;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::TcpStream;
use tokio::sync::{OwnedSemaphorePermit, mpsc, watch};

use crate::answer::PerConnection;
use crate::body::CHUNK_BYTES;
use crate::generation::Endpoint;
use crate::idle::OpenConnections;
use crate::io::activity::Activity;
use crate::io::deadline::{Deadlined, Deadlines, is_deadline};
use crate::io::prefixed::Prefixed;
use crate::metrics::Metrics;
use crate::service::Transport;

const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Encrypted bytes rustls may queue for a client that is not reading (its default is 64 KiB).
/// More than a socket buffer's worth gains no throughput: writes wait for the socket anyway;
/// less memory per stalled connection lets more connections fit the same memory. rustls takes
/// of each write what fits under the limit, so HTTP/1.1's writes go out one full TLS record
/// (16 KiB) at a time.
const TLS_BUFFER_BYTES: usize = 16 * 1024;

/// The same for HTTP/2, which writes each DATA frame (one body chunk) at once, after its 9-byte
/// head and the small frames queued before it (other streams' HEADERS, WINDOW_UPDATE). At
/// 16 KiB rustls took all but the frame's last bytes, and they left in a write of their own:
/// five writes for a 33 KB page instead of three, and a fifth fewer pages a second.
const TLS_H2_BUFFER_BYTES: usize = CHUNK_BYTES + H2_SMALL_FRAMES_BYTES;

/// Room for a DATA frame's head and the small frames HTTP/2 queues before it.
const H2_SMALL_FRAMES_BYTES: usize = 1024;

/// What a connection needs to take part in a drain.
#[derive(Clone)]
pub(crate) struct Drain {
    /// Turns true when the drain starts.
    draining: watch::Receiver<bool>,
    /// Dropped with the connection; the drain waits until every clone is gone.
    _alive: mpsc::Sender<()>,
}

impl Drain {
    /// A drain that starts when `draining` turns true, and waits for every clone of `alive`.
    pub(crate) fn new(draining: watch::Receiver<bool>, alive: mpsc::Sender<()>) -> Self {
        Drain {
            draining,
            _alive: alive,
        }
    }

    /// Resolves once the drain has started; never for a connection outside any drain.
    pub(crate) async fn started(drain: &mut Option<Drain>) {
        match drain {
            Some(drain) => {
                let _ = drain.draining.wait_for(|draining| *draining).await;
            }
            None => std::future::pending().await,
        }
    }
}

/// A connection admitted under the cap: its permit, and where it is listed while open.
pub(crate) type Admitted = (OwnedSemaphorePermit, Arc<OpenConnections>);

/// Serves one connection: accepted under the current endpoint (its TLS acceptor and limits),
/// each request answered by the endpoint current when it arrives (see `serve_http`).
pub(crate) fn spawn(
    stream: TcpStream,
    peer: SocketAddr,
    current: &watch::Receiver<Arc<Endpoint>>,
    metrics: Option<Arc<Metrics>>,
    admitted: Option<Admitted>,
    drain: Option<Drain>,
) {
    let endpoint = current.borrow().clone();
    let current = current.clone();
    tokio::spawn(async move {
        let open = metrics.as_ref().map(|m| m.connection_opened());
        let (permit, listed) = admitted.unzip();
        let accounting = Accounting {
            drain,
            metrics: metrics.as_ref(),
            listed,
        };
        serve_connection(stream, peer, endpoint, current, accounting).await;
        drop((open, permit));
    });
}

/// What a connection takes part in besides serving: the drain, the metrics, and the list of
/// open connections of the cap (for eviction when idle).
struct Accounting<'a> {
    drain: Option<Drain>,
    metrics: Option<&'a Arc<Metrics>>,
    listed: Option<Arc<OpenConnections>>,
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    endpoint: Arc<Endpoint>,
    current: watch::Receiver<Arc<Endpoint>>,
    accounting: Accounting<'_>,
) {
    let Accounting {
        drain,
        metrics,
        listed,
    } = accounting;
    let _ = stream.set_nodelay(true);
    // The head deadline starts now for plain TCP (the preface read is part of the head) and
    // after the handshake for TLS, which has a deadline of its own.
    let accepted = Activity::new();
    // SECURITY (the cap): a connection is listed from accept on, so that one which sends
    // nothing, part of a ClientHello or part of the h2 preface gives way at the cap like a slow
    // head; listed only after its first bytes, a cap's worth of silent sockets held every slot
    // for the whole handshake deadline.
    let accepted_listing = listed.as_ref().map(|open| open.track(accepted.clone()));
    let limits = &endpoint.limits;
    let deadlines = Deadlines {
        header_read: limits.header_read_timeout,
        idle: limits.idle_timeout,
    };
    // The match only builds the connection's future; it is awaited after it, so that none of
    // the arms' locals (a TLS stream among them, moved into the future but still in scope)
    // takes room in the task for the connection's whole life.
    let (serving, _tracked) = match &endpoint.tls {
        Some(acceptor) => {
            // Boxed, so that the task keeps no room for a handshake once it is done: see
            // `serve_http`.
            let accept = Box::pin(acceptor.accept(stream));
            let handshake = tokio::time::timeout(limits.handshake_timeout, accept);
            let mut tls_stream = match unless_evicted(&accepted, handshake).await {
                Some(Ok(Ok(s))) => s,
                Some(Ok(Err(e))) => {
                    metrics.inspect(|m| m.handshake_failed());
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
                Some(Err(_)) => {
                    metrics.inspect(|m| m.handshake_failed());
                    tracing::debug!(%peer, "TLS handshake deadline passed");
                    return;
                }
                None => {
                    tracing::debug!(%peer, "closed during its handshake to make room");
                    return;
                }
            };
            let alpn = tls_stream.get_ref().1.alpn_protocol();
            if alpn == Some(crate::tls::ACME_TLS_ALPN) {
                // A CA's TLS-ALPN-01 check: the handshake was the answer (RFC 8737); nothing
                // is served on such a connection.
                tracing::debug!(%peer, "ACME validation handshake answered");
                return;
            }
            let h2 = alpn == Some(b"h2");
            // What rustls may hold of answers the client has not read; see `TLS_BUFFER_BYTES`.
            let buffer_limit = if h2 {
                TLS_H2_BUFFER_BYTES
            } else {
                TLS_BUFFER_BYTES
            };
            tls_stream.get_mut().1.set_buffer_limit(Some(buffer_limit));
            let (_, session) = tls_stream.get_ref();
            let sni = session.server_name().map(str::to_owned);
            // The head's clock starts after the handshake; listed anew before the accept's
            // listing goes, so the connection is never out of the list.
            let activity = Activity::new();
            let tracked = listed.map(|open| open.track(activity.clone()));
            drop(accepted_listing);
            let io = Deadlined::new(tls_stream, activity.clone(), deadlines);
            let tls = Some(sni);
            let endpoints = Endpoints {
                accepted: &endpoint,
                current,
            };
            let serving = serve_http(io, h2, tls, endpoints, activity, drain, metrics.cloned());
            (serving, tracked)
        }
        None => {
            let sniff = tokio::time::timeout(limits.header_read_timeout, read_preface(stream));
            let (stream, h2) = match unless_evicted(&accepted, sniff).await {
                Some(Ok(Ok(sniffed))) => sniffed,
                Some(Ok(Err(e))) => {
                    tracing::debug!(%peer, error = %e, "connection closed before a request");
                    return;
                }
                Some(Err(_)) => {
                    metrics.inspect(|m| m.connection_deadline_passed());
                    tracing::debug!(%peer, "header read deadline passed before the first byte");
                    return;
                }
                None => {
                    tracing::debug!(%peer, "closed before its first request to make room");
                    return;
                }
            };
            // Read as HTTP/1.1 where HTTP/2 is not served: the preface is then a malformed
            // request, refused with the service's own answer.
            let h2 = h2 && endpoint.plain_h2;
            let io = Deadlined::new(stream, accepted.clone(), deadlines);
            let endpoints = Endpoints {
                accepted: &endpoint,
                current,
            };
            let serving = serve_http(io, h2, None, endpoints, accepted, drain, metrics.cloned());
            (serving, accepted_listing)
        }
    };
    // SECURITY (memory): a connection keeps no generation of its own once it serves, so an idle
    // one cannot hold a replaced config, its hosts and its page cache past a reload.
    drop(endpoint);
    let result = serving.await;
    if let Err(e) = result {
        if is_deadline(e.as_ref()) {
            metrics.inspect(|m| m.connection_deadline_passed());
            tracing::debug!(%peer, "connection deadline passed");
        } else {
            tracing::debug!(%peer, error = %e, "connection ended with an error");
        }
    }
}

/// Runs `phase` unless the connection is asked to make room at the cap first (`None`): before
/// its first request it has nothing to lose but the socket.
async fn unless_evicted<F: Future>(activity: &Activity, phase: F) -> Option<F::Output> {
    tokio::select! {
        out = phase => Some(out),
        () = activity.evicted() => None,
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

pub(crate) type ConnectionError = Box<dyn std::error::Error + Send + Sync>;

/// What serving a connection takes, from the handshake to its end.
type Serving = Pin<Box<dyn Future<Output = Result<(), ConnectionError>> + Send>>;

/// The future that serves HTTP on `io`, built at once and boxed.
///
/// A connection's memory is mostly what its task keeps while it waits, and a task keeps room
/// for the largest state it may ever be in, its arguments included. So nothing of one phase
/// or protocol stays in another's way: the handshake is boxed and freed when done, `io` is
/// moved into the connection here rather than kept as an argument of a waiting future, and an
/// HTTP/1 connection's future is its own size, not that of an HTTP/2 one.
fn serve_http<I>(
    io: I,
    h2: bool,
    // `None`: plain TCP; `Some(sni)`: TLS, with the server name the client sent, if any.
    tls: Option<Option<String>>,
    endpoints: Endpoints<'_>,
    activity: Arc<Activity>,
    drain: Option<Drain>,
    // Counts HTTP/1 connections at rest; `None` for listeners without metrics.
    metrics: Option<Arc<Metrics>>,
) -> Serving
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let Endpoints { accepted, current } = endpoints;
    let counted = activity.clone();
    let per_connection = PerConnection::new(accepted.limits.max_unsent_bytes);
    let service = service_fn(move |mut req: Request<Incoming>| {
        if let Some(refusal) = counted.request_arrived() {
            req.extensions_mut().insert(refusal);
        }
        let transport = match &tls {
            None => Transport::Plain,
            Some(sni) => Transport::Tls {
                server_name: sni.as_deref(),
            },
        };
        // The current generation's handler, held only while it answers (see `Endpoints`).
        let handler = current.borrow().handler.clone();
        let answer = handler(req, transport, &per_connection);
        counted.answered();
        answer.keeping_busy(&counted)
    });
    let limits = &accepted.limits;
    if h2 {
        h2::serve(io, limits, service, drain, activity)
    } else {
        h1::serve_checked(io, limits, service, drain, activity, metrics)
    }
}

/// What a connection serves with. Its limits and TLS are those of the endpoint it was accepted
/// under (a reload never changes a connection's deadlines or buffers midway); each request is
/// answered by the endpoint current when it arrives, so that a reload's new hosts and policies
/// reach kept-alive connections, and a connection, idle or not, never keeps a replaced
/// generation alive: memory is at most the current generation and the one a reload replaces,
/// while answers it handed out are still being sent.
struct Endpoints<'a> {
    accepted: &'a Endpoint,
    current: watch::Receiver<Arc<Endpoint>>,
}
