//! Deadlines of one connection's byte stream: how long a client may take to send a request
//! head, how long a connection may sit idle between requests, and how long writes may stall
//! on a client that does not read.
//!
//! hyper's own `header_read_timeout` covers HTTP/1 heads only, and restarts between requests
//! so that an idle keep-alive connection is cut as if it were slow; HTTP/2 has no head deadline
//! at all. This wrapper enforces both phases on the byte stream itself, for both versions.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::activity::Activity;

/// The deadlines, from `[limits]`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadlines {
    pub(crate) header_read: Duration,
    pub(crate) idle: Duration,
}

/// A stream whose reads fail with `TimedOut` once the current phase's deadline passes:
/// - before the first request: `header_read` from the connection's start (a silent client);
/// - HTTP/1, a head begun and not yet answered: `header_read` from its first byte (a slow
///   client), as the head reader tells `Activity`, which knows where one head ends and the
///   next begins even within one read;
/// - otherwise: `idle` from the answer to the last request. HTTP/2 frames are not activity:
///   browsers answer the server's keep-alive pings, so only an answered request restarts it.
pub(crate) struct Deadlined<S> {
    inner: S,
    activity: Arc<Activity>,
    deadlines: Deadlines,
    sleep: Pin<Box<Sleep>>,
    expired: bool,
    /// When writes stopped making progress (the client stopped reading).
    write_stuck_since: Option<Instant>,
    write_sleep: Pin<Box<Sleep>>,
}

impl<S> Deadlined<S> {
    pub(crate) fn new(inner: S, activity: Arc<Activity>, deadlines: Deadlines) -> Self {
        let first = activity.started_at() + deadlines.header_read;
        Deadlined {
            inner,
            activity,
            deadlines,
            sleep: Box::pin(tokio::time::sleep_until(first)),
            expired: false,
            write_stuck_since: None,
            write_sleep: Box::pin(tokio::time::sleep_until(first)),
        }
    }

    fn deadline(&self) -> Instant {
        match self.activity.waiting_for_head_since() {
            Some(since) => since + self.deadlines.header_read,
            None => self.activity.idle_since() + self.deadlines.idle,
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Deadlined<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.expired {
            return Poll::Ready(Err(io::ErrorKind::TimedOut.into()));
        }
        match Pin::new(&mut self.inner).poll_read(cx, buf) {
            Poll::Ready(result) => Poll::Ready(result),
            Poll::Pending => {
                let deadline = self.deadline();
                if self.sleep.deadline() != deadline {
                    self.sleep.as_mut().reset(deadline);
                }
                match self.sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => {
                        self.expired = true;
                        Poll::Ready(Err(io::ErrorKind::TimedOut.into()))
                    }
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

/// Writes that make no progress for the idle deadline fail: a client that never reads what it
/// asked for must not hold a connection (and its permit) forever.
impl<S: AsyncWrite + Unpin> AsyncWrite for Deadlined<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.write_progress(cx, result)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let result = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.write_progress(cx, result)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let result = Pin::new(&mut self.inner).poll_flush(cx);
        self.write_progress(cx, result)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl<S> Deadlined<S> {
    /// Passes a write's result on, failing it once writes have been stuck for `idle`.
    fn write_progress<T>(
        &mut self,
        cx: &mut Context<'_>,
        result: Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        if result.is_ready() {
            self.write_stuck_since = None;
            return result;
        }
        let since = *self.write_stuck_since.get_or_insert_with(Instant::now);
        let deadline = since + self.deadlines.idle;
        if self.write_sleep.deadline() != deadline {
            self.write_sleep.as_mut().reset(deadline);
        }
        match self.write_sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(io::ErrorKind::TimedOut.into())),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// Whether an error (anywhere in a connection's error chain) is a passed deadline.
pub(crate) fn is_deadline(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(e) = current {
        if e.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::TimedOut)
        {
            return true;
        }
        current = e.source();
    }
    false
}
