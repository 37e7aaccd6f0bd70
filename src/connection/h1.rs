//! HTTP/1 connections, served one stretch of requests at a time: between stretches a connection
//! is at rest, holding its stream and nothing of hyper's.
//!
//! A hyper connection keeps an 8 KiB read buffer and an 8 KiB buffer for answer heads for as
//! long as it lives, and a browser keeps a sandbox connection open long after the one page it
//! asked for (up to `idle_timeout`): most connections spend most of their lives idle. So a
//! kept-alive connection idle for `REST_AFTER` hands its stream back from hyper and waits for
//! its next request head without it, and a new hyper connection is built once that head has
//! arrived (nginx frees its request buffers between keep-alive requests for the same reason).
//! A connection starts at rest too: one that never sends a head never costs a hyper connection.
//!
//! At rest the head is read by `HeadFilter` through the same `Deadlined` stream as ever, so the
//! header and idle deadlines are those of a connection that never rested. A drain or an
//! eviction closes a connection at rest at once, as hyper closes an idle one.

use std::future::poll_fn;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::Incoming;
use hyper::server::conn::http1::{Builder, Connection, Parts};
use hyper::service::HttpService;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use super::{ConnectionError, Drain, Serving};
use crate::body::Body;
use crate::config::Limits;
use crate::io::activity::Activity;
use crate::io::head::HeadFilter;
use crate::limits::{HeadLimits, REQUEST_LINE_SLACK};
use crate::metrics::Metrics;
use hyper_util::rt::TokioTimer;

/// How long a kept-alive connection stays idle before it rests. Long enough that a client
/// asking again at once (a burst of views, a load test) keeps its hyper connection; short
/// enough that a connection opened for one page gives its buffers back almost at once.
pub(crate) const REST_AFTER: Duration = Duration::from_millis(100);

/// What hyper reads and writes: the checked stream, boxed (see `connection::serve_http`).
type Stream<I> = TokioIo<Box<HeadFilter<I>>>;

/// How one stretch of a connection ended.
enum Stretch<I, S> {
    /// The connection is over: the client closed it, or it was shut down.
    Ended,
    /// The connection went idle and hyper gave its stream back.
    Rested(Parts<Stream<I>, S>),
}

/// Serves HTTP/1 on `io`: every head checked by `HeadFilter` against the service's limits
/// first, then hyper, resting between stretches (see `serve`). Boxed (see `serve_http`).
pub(super) fn serve_checked<I, S>(
    io: I,
    limits: &Limits,
    service: S,
    drain: Option<Drain>,
    activity: Arc<Activity>,
    metrics: Option<Arc<Metrics>>,
) -> Serving
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: HttpService<Incoming, ResBody = Body> + Unpin + Send + 'static,
    S::Future: Unpin + Send,
    S::Error: Into<ConnectionError>,
{
    let head_limits = HeadLimits {
        request_line: limits.max_query_bytes + REQUEST_LINE_SLACK,
        fields: limits.max_header_bytes,
    };
    let hyper_max = head_limits.hyper_buffer();
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
    Box::pin(serve(io, builder, service, drain, activity, metrics))
}

/// Serves HTTP/1 on `io` until the connection ends, resting between stretches of requests.
pub(crate) async fn serve<I, S>(
    mut io: Box<HeadFilter<I>>,
    builder: Builder,
    mut service: S,
    mut drain: Option<Drain>,
    activity: Arc<Activity>,
    metrics: Option<Arc<Metrics>>,
) -> Result<(), ConnectionError>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: HttpService<Incoming, ResBody = Body> + Unpin,
    S::Future: Unpin,
    S::Error: Into<ConnectionError>,
{
    loop {
        // Counted as resting between requests; one waiting for its first is not resting yet.
        let between_requests = activity.requests() > 0;
        let at_rest = metrics
            .as_ref()
            .filter(|_| between_requests)
            .map(Metrics::connection_resting);
        let head = next_head(&mut io, &mut drain, &activity).await;
        drop(at_rest);
        if !head? {
            // Closing at rest: what hyper does when it closes a connection, a clean shutdown
            // (TLS close_notify, then FIN), within the stream's write deadline.
            io.shutdown().await?;
            return Ok(());
        }
        let conn = Box::pin(builder.serve_connection(TokioIo::new(io), service));
        match serve_stretch(conn, &mut drain, &activity).await? {
            Stretch::Ended => return Ok(()),
            Stretch::Rested(parts) => {
                io = parts.io.into_inner();
                if io.resume(&parts.read_buf).is_err() {
                    // hyper stopped inside a request (an answer given before its body was
                    // read): what follows is body, never a head to serve. See `io::head`.
                    io.shutdown().await?;
                    io.linger().await;
                    return Ok(());
                }
                service = parts.service;
            }
        }
    }
}

/// Waits at rest until the next request head has arrived (`true`), or until the connection
/// ends, is drained or evicted (`false`).
async fn next_head<I>(
    io: &mut HeadFilter<I>,
    drain: &mut Option<Drain>,
    activity: &Activity,
) -> Result<bool, ConnectionError>
where
    I: AsyncRead + Unpin,
{
    tokio::select! {
        head = poll_fn(|cx| io.poll_next_head(cx)) => Ok(head?),
        () = drained(drain, activity) => Ok(false),
        () = activity.evicted() => Ok(false),
    }
}

/// Resolves once a drain has started and the connection has had its first request. One that
/// has not had it yet is let run until it does (within its header deadline): its client may
/// have sent it before the drain began, and closing it would lose it.
async fn drained(drain: &mut Option<Drain>, activity: &Activity) {
    Drain::started(drain).await;
    activity.first_request().await;
}

/// Drives one hyper connection until it ends or rests. It rests once it has been idle between
/// requests for `REST_AFTER`; it is shut down gracefully when a drain starts (after its first
/// request) or when it is evicted (idle at the connection cap, see `idle`).
async fn serve_stretch<I, S>(
    mut conn: Pin<Box<Connection<Stream<I>, S>>>,
    drain: &mut Option<Drain>,
    activity: &Activity,
) -> Result<Stretch<I, S>, ConnectionError>
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    S: HttpService<Incoming, ResBody = Body> + Unpin,
    S::Future: Unpin,
    S::Error: Into<ConnectionError>,
{
    let rest = tokio::time::sleep(REST_AFTER);
    tokio::pin!(rest);
    let mut resting = false;
    let mut closing = false;
    loop {
        tokio::select! {
            done = poll_fn(|cx| conn.poll_without_shutdown(cx)) => {
                done?;
                break;
            }
            () = drained(drain, activity), if !closing => closing = true,
            () = activity.evicted(), if !closing => closing = true,
            () = &mut rest, if !closing && !resting => {
                let due = activity.idle_since() + REST_AFTER;
                if activity.is_idle_keep_alive() && Instant::now() >= due {
                    resting = true;
                } else {
                    rest.as_mut().reset(due.max(Instant::now() + REST_AFTER / 4));
                    continue;
                }
            }
        }
        // Idle, hyper closes at once; within an answer, once it is sent.
        conn.as_mut().graceful_shutdown();
    }
    let parts = Pin::into_inner(conn).into_parts();
    if resting && !closing {
        return Ok(Stretch::Rested(parts));
    }
    let mut io = parts.io.into_inner();
    let unread = !parts.read_buf.is_empty() || io.may_have_more();
    io.shutdown().await?;
    if unread {
        io.linger().await;
    }
    Ok(Stretch::Ended)
}

#[cfg(test)]
mod tests;
