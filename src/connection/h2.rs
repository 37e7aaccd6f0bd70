//! HTTP/2 connections: hyper's builder with the service's limits, streams run inline first,
//! and a graceful shutdown on a drain or an eviction.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper::service::HttpService;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulConnection;
use tokio::io::{AsyncRead, AsyncWrite};

use super::{ConnectionError, Drain, Serving};
use crate::body::Body;
use crate::config::Limits;
use crate::io::activity::Activity;
use crate::limits::{MAX_FIELDS, REQUEST_LINE_SLACK};

/// Serves HTTP/2 on `io`, boxed (see `serve_http`).
pub(super) fn serve<I, S>(
    io: I,
    limits: &Limits,
    service: S,
    drain: Option<Drain>,
    activity: Arc<Activity>,
) -> Serving
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: HttpService<Incoming, ResBody = Body> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<ConnectionError>,
{
    let mut builder = hyper::server::conn::http2::Builder::new(InlineFirst);
    builder
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.h2_max_concurrent_streams)
        .max_header_list_size(h2_header_list_limit(limits))
        .keep_alive_interval(limits.idle_timeout / 2)
        .keep_alive_timeout(limits.idle_timeout / 2);
    let conn = Box::pin(builder.serve_connection(TokioIo::new(io), service));
    Box::pin(drive(conn, drain, activity))
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
/// is evicted (idle at the connection cap, see `idle`). HTTP/1 has its own, in `h1`.
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
    let evicted = tokio::select! {
        result = conn.as_mut() => return result.map_err(Into::into),
        () = Drain::started(&mut drain) => false,
        () = activity.evicted() => true,
    };
    // SECURITY (the cap): an evicted connection must leave within `EVICTED_GRACE`. hyper's
    // graceful shutdown waits for the client to answer a PING, and one evicted connection
    // still open stops every other eviction (see `idle`): a client that sent only the preface,
    // or that stops answering after a request, held the slot and the cap's only way to make
    // room until its keep-alive ran out. Before its first request it has nothing to lose.
    if evicted && activity.requests() == 0 {
        return Ok(());
    }
    conn.as_mut().graceful_shutdown();
    if !evicted {
        return conn.await.map_err(Into::into);
    }
    match tokio::time::timeout(EVICTED_GRACE, conn).await {
        Ok(result) => result.map_err(Into::into),
        Err(_) => Ok(()),
    }
}

/// How long an evicted HTTP/2 connection may take to end its streams and close: long enough
/// for a client that answers its GOAWAY's PING and reads its last answer, short enough that
/// the next client at the cap is admitted at once.
const EVICTED_GRACE: std::time::Duration = std::time::Duration::from_secs(1);
