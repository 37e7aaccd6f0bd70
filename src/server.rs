//! Listeners and connections: accept, TLS handshake, HTTP/1 or HTTP/2, deadlines, drain.
//!
//! Each connection runs in its own task, handshake included. Public connections hold one
//! permit of the connection cap, taken before the accept; the connections a drain takes from
//! the kernel's accept backlog hold none, since nothing is admitted after them. The HTTP
//! version is chosen explicitly (ALPN over TLS, the h2 preface over plain TCP) so that every
//! phase has a deadline; hyper's auto-detecting builder reads the first bytes without one. A
//! connection keeps the endpoint (config generation) it was accepted under, so a reload never
//! drops one.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::BytesMut;
use http::Request;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulConnection;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};

use crate::body::Unsent;
use crate::config::{Config, Limits};
use crate::generation::{Endpoint, Generation, Handler};
use crate::idle::OpenConnections;
use crate::io::activity::Activity;
use crate::io::deadline::{Deadlined, Deadlines, is_deadline};
use crate::io::head::HeadFilter;
use crate::io::prefixed::Prefixed;
use crate::limits::{HeadLimits, MAX_FIELDS, REQUEST_LINE_SLACK};
use crate::metrics::Metrics;
use crate::service::Transport;
use crate::{admin, demo, http1, memory, reload, tls};

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
/// Encrypted bytes rustls may queue for a client that is not reading (its default is 64 KiB).
/// More than a socket buffer's worth gains no throughput: writes wait for the socket anyway;
/// less memory per stalled connection lets more connections fit the same memory.
const TLS_BUFFER_BYTES: usize = 16 * 1024;
/// At the cap with no idle connection to close, how often to look again: a busy connection may
/// have become idle since.
const IDLE_RECHECK: Duration = Duration::from_millis(50);

/// What a listener is for: it decides the cap, the drain and the metrics its connections get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ListenerKind {
    /// The proxy pages: counted, capped, drained, reloaded.
    Public,
    /// The embedded default's demo host page: drained with the public listener.
    Demo,
    /// `/livez`, `/readyz`, `/metrics`: answers through the drain, so probes see "not ready".
    Admin,
}

impl ListenerKind {
    fn name(self) -> &'static str {
        match self {
            ListenerKind::Public => "public",
            ListenerKind::Demo => "demo",
            ListenerKind::Admin => "admin",
        }
    }
}

/// One bound listener and what it serves.
struct Listener {
    kind: ListenerKind,
    socket: TcpListener,
    endpoint: watch::Receiver<Arc<Endpoint>>,
    /// Only the public listener counts connections and handshakes.
    metrics: Option<Arc<Metrics>>,
}

impl Listener {
    /// A listener whose endpoint never changes with a reload.
    async fn fixed(
        kind: ListenerKind,
        addr: SocketAddr,
        handler: Handler,
        config: &Config,
    ) -> Result<Listener, ServeError> {
        Ok(Listener {
            kind,
            socket: bind(addr).await?,
            endpoint: watch::channel(Endpoint::fixed(handler, &config.limits)).1,
            metrics: None,
        })
    }
}

/// Bound listeners, ready to run. Binding is separate from running so that callers (tests,
/// `serve`) learn the real addresses (port 0) before the first request.
pub struct Server {
    listeners: Vec<Listener>,
    cap: Cap,
    shutdown_grace: Duration,
    ready: Arc<AtomicBool>,
    reloader: reload::Reloader,
    metrics: Arc<Metrics>,
}

impl Server {
    /// Loads certificates and binds every listener of `config`. Fails as a whole.
    /// `config_path` is the file to reload on SIGHUP and when it changes; `None` for the
    /// embedded default.
    pub async fn bind(config: Config, config_path: Option<PathBuf>) -> Result<Server, ServeError> {
        Self::bind_watched(config, config_path, None).await
    }

    /// As `bind`, with the watched files as they were before `config` was loaded from them.
    pub(crate) async fn bind_watched(
        config: Config,
        config_path: Option<PathBuf>,
        watched: Option<(reload::Watched, u64)>,
    ) -> Result<Server, ServeError> {
        let metrics = Metrics::new();
        let generation = Generation::build(config, &metrics)?;
        metrics.set_certificates(generation.certificates.clone());
        let config = generation.config.clone();
        let (endpoint_tx, endpoint_rx) = watch::channel(generation.endpoint.clone());
        let ready = Arc::new(AtomicBool::new(false));
        let mut listeners = vec![Listener {
            kind: ListenerKind::Public,
            socket: bind(config.listen).await?,
            endpoint: endpoint_rx,
            metrics: Some(metrics.clone()),
        }];
        // The demo embeds the first host's sandbox (the embedded default has exactly one).
        if let (Some(addr), Some(host)) = (config.demo_listen, config.hosts.first()) {
            let demo = Arc::new(demo::DemoHost::new(&format!("http://{}", host.sandbox)));
            let handler: Handler = Arc::new(move |req, _, _| demo.handle(req));
            listeners.push(Listener::fixed(ListenerKind::Demo, addr, handler, &config).await?);
        }
        if let Some(addr) = config.admin_listen {
            let admin = Arc::new(admin::Admin::new(metrics.clone(), ready.clone()));
            let handler: Handler = Arc::new(move |req, _, _| admin.handle(req));
            listeners.push(Listener::fixed(ListenerKind::Admin, addr, handler, &config).await?);
        }
        // Without a fingerprint taken before the config was loaded, the files as they are now.
        let watched = watched.unwrap_or_else(|| reload::Watched::before_loading(config_path));
        let reloader = reload::Reloader::new(watched, generation, endpoint_tx, metrics.clone());
        Ok(Server {
            listeners,
            cap: Cap {
                permits: Arc::new(Semaphore::new(config.limits.max_connections)),
                open: OpenConnections::new(),
            },
            shutdown_grace: config.limits.shutdown_grace,
            ready,
            reloader,
            metrics,
        })
    }

    /// The address of the public listener (the real port when bound to port 0).
    pub fn public_addr(&self) -> SocketAddr {
        self.addr_of(ListenerKind::Public)
            .unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 0)))
    }

    /// The address of the demo host page, when the embedded default serves it.
    pub(crate) fn demo_addr(&self) -> Option<SocketAddr> {
        self.addr_of(ListenerKind::Demo)
    }

    /// The address of the admin listener, when configured.
    pub fn admin_addr(&self) -> Option<SocketAddr> {
        self.addr_of(ListenerKind::Admin)
    }

    fn addr_of(&self, kind: ListenerKind) -> Option<SocketAddr> {
        self.listeners
            .iter()
            .find(|l| l.kind == kind)
            .and_then(|l| l.socket.local_addr().ok())
    }

    /// Serves until `shutdown` resolves, then stops accepting, reports not ready, lets
    /// in-flight requests finish and closes idle connections, waiting at most `shutdown_grace`.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        // Config and certificates loaded, listeners bound: ready from the first probe answered.
        self.ready.store(true, Ordering::SeqCst);
        let (stop_tx, stop_rx) = watch::channel(false);
        // Every public connection holds a sender; the drain is over when the last one is gone.
        let (alive_tx, mut alive_rx) = mpsc::channel::<()>(1);
        let drain = Drain {
            draining: stop_rx.clone(),
            _alive: alive_tx,
        };
        // The admin listener answers through the drain, so probes see "not ready"; it stops
        // only when the drain is over.
        let (admin_stop_tx, admin_stop_rx) = watch::channel(false);
        let mut public_loops = Vec::new();
        let mut admin_loop = None;
        for listener in self.listeners {
            match listener.kind {
                ListenerKind::Admin => {
                    let task = accept_connections(listener, None, None, admin_stop_rx.clone());
                    admin_loop = Some(tokio::spawn(task));
                }
                ListenerKind::Public | ListenerKind::Demo => {
                    let cap = Some(self.cap.clone());
                    let task =
                        accept_connections(listener, cap, Some(drain.clone()), stop_rx.clone());
                    public_loops.push(tokio::spawn(task));
                }
            }
        }
        drop(drain);
        let trimmer = tokio::spawn(memory::give_back_freed_memory(
            self.metrics.clone(),
            stop_rx.clone(),
        ));
        let reloader = tokio::spawn(self.reloader.run(stop_rx));
        shutdown.await;
        self.ready.store(false, Ordering::SeqCst);
        tracing::info!(grace = ?self.shutdown_grace, "draining: no new connections, not ready");
        let _ = stop_tx.send(true);
        for task in public_loops {
            let _ = task.await;
        }
        let _ = reloader.await;
        let _ = trimmer.await;
        match tokio::time::timeout(self.shutdown_grace, alive_rx.recv()).await {
            Ok(_) => tracing::info!("drained: all connections closed"),
            Err(_) => tracing::warn!("shutdown grace ran out; closing the remaining connections"),
        }
        let _ = admin_stop_tx.send(true);
        if let Some(admin_loop) = admin_loop {
            let _ = admin_loop.await;
        }
    }
}

/// The connection cap of the public (and demo) listener: a permit per open connection, and the
/// open connections, so that an idle one can be closed to admit a new one.
#[derive(Clone)]
struct Cap {
    permits: Arc<Semaphore>,
    open: Arc<OpenConnections>,
}

impl Cap {
    /// A permit for a client already accepted at the cap: after asking the keep-alive
    /// connection idle the longest to close, and asking again every `IDLE_RECHECK` while none
    /// is idle. `None` once `stop` changes.
    async fn admit(
        &self,
        stop: &mut watch::Receiver<bool>,
        metrics: Option<&Metrics>,
    ) -> Option<OwnedSemaphorePermit> {
        loop {
            // Room may have freed while the client was accepted.
            if let Ok(permit) = self.permits.clone().try_acquire_owned() {
                return Some(permit);
            }
            if let Some(closed) = self.open.close_idlest() {
                metrics.inspect(|m| m.connection_closed_for_room(closed));
            }
            tokio::select! {
                _ = stop.changed() => return None,
                permit = self.permits.clone().acquire_owned() => return permit.ok(),
                _ = tokio::time::sleep(IDLE_RECHECK) => {}
            }
        }
    }
}

/// What a connection needs to take part in a drain.
#[derive(Clone)]
pub(crate) struct Drain {
    /// Turns true when the drain starts.
    draining: watch::Receiver<bool>,
    /// Dropped with the connection; the drain waits until every clone is gone.
    _alive: mpsc::Sender<()>,
}

impl Drain {
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

async fn bind(addr: SocketAddr) -> Result<TcpListener, ServeError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ServeError::Bind { addr, source })
}

/// Accepts until `stop` changes. `cap` bounds open connections (a permit per connection);
/// `drain` lets a shutdown wait for them.
async fn accept_connections(
    listener: Listener,
    cap: Option<Cap>,
    drain: Option<Drain>,
    mut stop: watch::Receiver<bool>,
) {
    let mut backoff = MIN_ACCEPT_BACKOFF;
    loop {
        // The permit is taken before accepting: at the cap, new clients wait in the kernel's
        // backlog instead of costing a task each. The one exception is the next client, who
        // is accepted first so that an idle connection is closed only for a client that is
        // really there (see `Cap::admit`).
        let permit = cap
            .as_ref()
            .and_then(|cap| cap.permits.clone().try_acquire_owned().ok());
        let accepted = tokio::select! {
            _ = stop.changed() => break,
            accepted = listener.socket.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // EMFILE and friends: the listener is fine, the process is out of something.
                // Retrying at once would spin; wait, and longer each time.
                if let Some(metrics) = &listener.metrics {
                    metrics.accept_failed();
                }
                tracing::warn!(listener = listener.kind.name(), error = %e, ?backoff, "accept failed");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_ACCEPT_BACKOFF);
                continue;
            }
        };
        backoff = MIN_ACCEPT_BACKOFF;
        let permit = match (&cap, permit) {
            (Some(cap), None) => match cap.admit(&mut stop, listener.metrics.as_deref()).await {
                Some(permit) => Some(permit),
                None => {
                    // The drain began while this client waited: served like the backlog.
                    spawn_connection(&listener, stream, peer, None, drain.clone());
                    break;
                }
            },
            (_, permit) => permit,
        };
        let admitted = permit.zip(cap.as_ref().map(|c| c.open.clone()));
        spawn_connection(&listener, stream, peer, admitted, drain.clone());
    }
    accept_backlog(listener, drain).await;
}

/// Serves the connections the kernel already completed before the listener closes: their
/// clients sent requests before the drain began, and closing would reset them. The accept
/// syscall is made directly, since tokio's readiness may not have seen them yet.
async fn accept_backlog(listener: Listener, drain: Option<Drain>) {
    let Listener {
        kind,
        socket,
        endpoint,
        metrics,
    } = listener;
    let socket = match socket.into_std() {
        Ok(socket) => socket,
        Err(e) => {
            tracing::warn!(listener = kind.name(), error = %e, "cannot read the accept backlog");
            return;
        }
    };
    while let Ok((stream, peer)) = socket.accept() {
        let Ok(stream) = stream
            .set_nonblocking(true)
            .and_then(|()| TcpStream::from_std(stream))
        else {
            continue;
        };
        spawn_served(
            stream,
            peer,
            &endpoint,
            metrics.clone(),
            None,
            drain.clone(),
        );
    }
}

/// A connection admitted under the cap: its permit, and where it is listed while open.
type Admitted = (OwnedSemaphorePermit, Arc<OpenConnections>);

fn spawn_connection(
    listener: &Listener,
    stream: TcpStream,
    peer: SocketAddr,
    admitted: Option<Admitted>,
    drain: Option<Drain>,
) {
    let metrics = listener.metrics.clone();
    spawn_served(stream, peer, &listener.endpoint, metrics, admitted, drain);
}

/// Serves one connection: accepted under the current endpoint (its TLS acceptor and limits),
/// each request answered by the endpoint current when it arrives (see `serve_http`).
fn spawn_served(
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
    let mut activity = Activity::new();
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
            let mut tls_stream = match handshake.await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => {
                    metrics.inspect(|m| m.handshake_failed());
                    tracing::debug!(%peer, error = %e, "TLS handshake failed");
                    return;
                }
                Err(_) => {
                    metrics.inspect(|m| m.handshake_failed());
                    tracing::debug!(%peer, "TLS handshake deadline passed");
                    return;
                }
            };
            // What rustls may hold of answers the client has not read; see `TLS_BUFFER_BYTES`.
            tls_stream
                .get_mut()
                .1
                .set_buffer_limit(Some(TLS_BUFFER_BYTES));
            let (_, session) = tls_stream.get_ref();
            let h2 = session.alpn_protocol() == Some(b"h2");
            let sni = session.server_name().map(str::to_owned);
            activity = Activity::new();
            let tracked = listed.map(|open| open.track(activity.clone()));
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
            let (stream, h2) = match sniff.await {
                Ok(Ok(sniffed)) => sniffed,
                Ok(Err(e)) => {
                    tracing::debug!(%peer, error = %e, "connection closed before a request");
                    return;
                }
                Err(_) => {
                    metrics.inspect(|m| m.connection_deadline_passed());
                    tracing::debug!(%peer, "header read deadline passed before the first byte");
                    return;
                }
            };
            let tracked = listed.map(|open| open.track(activity.clone()));
            let io = Deadlined::new(stream, activity.clone(), deadlines);
            let endpoints = Endpoints {
                accepted: &endpoint,
                current,
            };
            let serving = serve_http(io, h2, None, endpoints, activity, drain, metrics.cloned());
            (serving, tracked)
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
    let unsent = Unsent::new(accepted.limits.max_unsent_bytes);
    let service = service_fn(move |req: Request<Incoming>| {
        let transport = match &tls {
            None => Transport::Plain,
            Some(sni) => Transport::Tls {
                server_name: sni.as_deref(),
            },
        };
        // The current generation's handler, held only while it answers (see `Endpoints`).
        let handler = current.borrow().handler.clone();
        let response = handler(&req, transport, &unsent);
        counted.answered();
        // A ready future, not an async block: it is `Unpin`, as an HTTP/1 connection that
        // rests (see `http1`) needs its service's futures to be.
        std::future::ready(Ok::<_, Infallible>(response))
    });
    let limits = &accepted.limits;
    if h2 {
        let mut builder = hyper::server::conn::http2::Builder::new(InlineFirst);
        builder
            .timer(TokioTimer::new())
            .max_concurrent_streams(limits.h2_max_concurrent_streams)
            .max_header_list_size(h2_header_list_limit(limits))
            .keep_alive_interval(limits.idle_timeout / 2)
            .keep_alive_timeout(limits.idle_timeout / 2);
        let conn = Box::pin(builder.serve_connection(TokioIo::new(io), service));
        Box::pin(drive(conn, drain, activity))
    } else {
        let head_limits = HeadLimits {
            request_line: limits.max_query_bytes + REQUEST_LINE_SLACK,
            fields: limits.max_header_bytes,
        };
        // hyper only ever sees heads `HeadFilter` checked against these limits: its own are
        // set above them, so it never answers a head itself (its answers carry no headers).
        let hyper_max = (head_limits.filtered_max() + 1024).max(8192);
        let mut builder = hyper::server::conn::http1::Builder::new();
        // Head and idle deadlines are `Deadlined`'s: hyper's header_read_timeout would also cut
        // idle keep-alive connections at the head deadline. The timer stays set regardless.
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(None)
            // A refused head is followed by end of file (see `io::head`); a client may also
            // close its side once it has sent its request. Either still gets its answer.
            .half_close(true)
            // hyper's own field limit is left at its default, 100: `MAX_FIELDS`, which
            // `HeadFilter` enforces first. Set explicitly, even to the same number, it makes
            // hyper build its header arrays on the heap for every head instead of the stack.
            .max_header_size(hyper_max)
            .max_buf_size(hyper_max)
            .keep_alive(true);
        // Boxed apart from the future that serves it: the stream (TLS state included) then
        // takes its own size once, however many places the future keeps for it.
        let io = Box::new(HeadFilter::new(io, head_limits, activity.clone()));
        Box::pin(http1::serve(io, builder, service, drain, activity, metrics))
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

/// hyper's executor for HTTP/2 streams: each stream's future is run once where hyper hands
/// it over, and spawned as a task of its own only if it has to wait. An answer is ready at
/// once (the handler never waits) and a page fits the stream's window, so most streams finish
/// in that first run and cost no task, no scheduling and no wake-up.
#[derive(Clone, Copy, Debug)]
struct InlineFirst;

impl<F> hyper::rt::Executor<F> for InlineFirst
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, future: F) {
        let mut future = Box::pin(future);
        // A waker that does nothing is enough: a future that is not done is spawned at once,
        // and its first poll in its task registers the task's own waker.
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if future.as_mut().poll(&mut cx).is_pending() {
            tokio::spawn(future);
        }
    }
}

/// HTTP/2's header list limit: the service's own limits (fields, query) plus the cookies it
/// tolerates (`limits.h2_cookie_bytes`) and h2's per-field overhead, so that a head within the
/// service's limits always reaches the service, which answers a breach with its own error and
/// headers. HTTP/2 has no byte stream to drop cookies from: each is its own field, counted by
/// h2 as its bytes plus 32.
fn h2_header_list_limit(limits: &Limits) -> u32 {
    let per_field_overhead = MAX_FIELDS * 32;
    let total = limits.max_header_bytes
        + limits.max_query_bytes
        + REQUEST_LINE_SLACK
        + limits.h2_cookie_bytes
        + per_field_overhead;
    u32::try_from(total).unwrap_or(u32::MAX)
}

/// Drives an HTTP/2 `conn` to its end; shuts it down gracefully when a drain starts or when it
/// is evicted (idle at the connection cap, see `idle`). HTTP/1 has its own, in `http1`.
async fn drive<C>(
    mut conn: Pin<Box<C>>,
    mut drain: Option<Drain>,
    activity: Arc<Activity>,
) -> Result<(), ConnectionError>
where
    C: GracefulConnection,
    C::Error: Into<ConnectionError>,
{
    // Borrowed, not moved: the drain counts this connection until the function returns.
    tokio::select! {
        result = conn.as_mut() => return result.map_err(Into::into),
        () = Drain::started(&mut drain) => {}
        () = activity.evicted() => {}
    }
    conn.as_mut().graceful_shutdown();
    conn.await.map_err(Into::into)
}
