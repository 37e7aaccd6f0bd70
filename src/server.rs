//! Listeners: bind, the connection cap, accept loops, and the drain of the accept backlog.
//!
//! Each connection runs in its own task (`connection`), handshake included. Public connections
//! hold one permit of the connection cap, taken before the accept; the connections a drain
//! takes from the kernel's accept backlog hold none, since nothing is admitted after them.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, mpsc, watch};

use crate::acme::{self, Acme, Challenges};
use crate::answer::Answer;
use crate::config::Config;
use crate::connection::{self, Admitted, Drain};
use crate::generation::{Endpoint, Generation, Handler};
use crate::idle::OpenConnections;
use crate::metrics::Metrics;
use crate::{admin, demo, memory, reload, tls};

/// Why the server could not start. Nothing is listening when this is returned.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A listener's address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address in the config.
        addr: SocketAddr,
        /// What the system said.
        source: io::Error,
    },
    /// The certificates cannot be loaded.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
}

/// First back-off after an accept error such as EMFILE; doubles up to `MAX_ACCEPT_BACKOFF`.
const MIN_ACCEPT_BACKOFF: Duration = Duration::from_millis(5);
const MAX_ACCEPT_BACKOFF: Duration = Duration::from_secs(1);
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
    /// `[acme]`'s HTTP-01 answers, on a plain listener of their own: drained with the public one.
    AcmeHttp,
}

impl ListenerKind {
    fn name(self) -> &'static str {
        match self {
            ListenerKind::Public => "public",
            ListenerKind::Demo => "demo",
            ListenerKind::Admin => "admin",
            ListenerKind::AcmeHttp => "acme-http-01",
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
            // SECURITY: the HTTP-01 listener is the CA's, which speaks HTTP/1.1 (RFC 8555
            // §8.3): nothing else is answered there, HTTP/2 with prior knowledge included.
            endpoint: watch::channel(Endpoint::fixed(
                handler,
                &config.limits,
                kind != ListenerKind::AcmeHttp,
            ))
            .1,
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
    /// Keeps `[acme]`'s certificates current, while the server runs.
    acme: Option<Acme>,
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
        let challenges = Challenges::new();
        let generation = Generation::build(config, &metrics, &challenges)?;
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
            let handler: Handler = Arc::new(move |req, _, _| Answer::ready(demo.handle(&req)));
            listeners.push(Listener::fixed(ListenerKind::Demo, addr, handler, &config).await?);
        }
        if let Some(addr) = config.admin_listen {
            let admin = Arc::new(admin::Admin::new(metrics.clone(), ready.clone()));
            let handler: Handler = Arc::new(move |req, _, _| Answer::ready(admin.handle(&req)));
            listeners.push(Listener::fixed(ListenerKind::Admin, addr, handler, &config).await?);
        }
        if let Some(crate::config::Challenge::Http01 { listen }) =
            config.acme.as_ref().map(|acme| acme.challenge)
        {
            let open = challenges.clone();
            let handler: Handler =
                Arc::new(move |req, _, _| Answer::ready(acme::http01_answer(&open, &req)));
            listeners
                .push(Listener::fixed(ListenerKind::AcmeHttp, listen, handler, &config).await?);
        }
        // Without a fingerprint taken before the config was loaded, the files as they are now.
        let watched = watched.unwrap_or_else(|| reload::Watched::before_loading(config_path));
        let acme_reload = Arc::new(Notify::new());
        let acme = config.acme.clone().map(|settings| Acme {
            settings,
            challenges: challenges.clone(),
            reload: acme_reload.clone(),
            metrics: metrics.clone(),
        });
        let reloader = reload::Reloader::new(
            watched,
            generation,
            endpoint_tx,
            metrics.clone(),
            (challenges, acme_reload),
        );
        metrics.set_max_connections(config.limits.max_connections);
        Ok(Server {
            listeners,
            cap: Cap {
                permits: Arc::new(Semaphore::new(config.limits.max_connections)),
                open: OpenConnections::new(),
            },
            shutdown_grace: config.limits.shutdown_grace,
            ready,
            reloader,
            acme,
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
        let drain = Drain::new(stop_rx.clone(), alive_tx);
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
                ListenerKind::Public | ListenerKind::Demo | ListenerKind::AcmeHttp => {
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
        let acme = self
            .acme
            .map(|acme| tokio::spawn(acme.run(stop_rx.clone())));
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
        if let Some(acme) = acme {
            // An order in flight is dropped: its challenge answers go with it, and the next
            // start orders again.
            acme.abort();
        }
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
        connection::spawn(
            stream,
            peer,
            &endpoint,
            metrics.clone(),
            None,
            drain.clone(),
        );
    }
}

fn spawn_connection(
    listener: &Listener,
    stream: TcpStream,
    peer: SocketAddr,
    admitted: Option<Admitted>,
    drain: Option<Drain>,
) {
    let metrics = listener.metrics.clone();
    connection::spawn(stream, peer, &listener.endpoint, metrics, admitted, drain);
}
