//! HTTP/1 request heads, read before hyper reads them: cookie values are discarded unread,
//! and a head that breaks a limit or that hyper would refuse is replaced by a request that the
//! service answers with its own error, so that every answer carries the security headers.
//!
//! hyper answers a head it refuses itself (`400`, `431`) with a bare status line, and counts a
//! `Cookie` header against the same limit as every other field. Views on a sandbox name can set
//! cookies for it (views are cross-site, so browsers partition them, but partitioned cookies
//! are still sent), and a few hundred of them would cost every later view its page. So each
//! head is framed here first (`scanner`):
//! - a `Cookie` field keeps its name and loses its value (`cookie: -`), however long it was;
//!   the service never reads cookies, it only learns that some were sent, and clears them;
//! - the request line (the query has its own limit, checked by the service with a precise
//!   `400`) and the other fields are charged to their own budgets before a byte is kept;
//! - a complete head is checked by every rule hyper applies (`check`); one hyper would refuse,
//!   one over a limit, and one that announces a body (the page takes none) is replaced by a
//!   plain request (with `connection: close`, see `limits`), and the connection's [`Activity`]
//!   learns which request that is and why (`Activity::head_refused`).
//!
//! A head over a limit is read to its end, unkept, before the refusal is handed on, and what
//! the client sends after it is read and dropped: closing a socket with unread bytes resets
//! it, and the reset can destroy the answer on its way to the client. Both are bounded by
//! `MAX_DISCARD` (and, like every read, by the connection's deadlines).
//!
//! Where each checked head starts in what hyper reads is noted (`starts`): a connection hyper
//! hands back between stretches is resumed only at one of them, never inside a body hyper left
//! unread, so that the head reader and hyper always agree where a request begins.
//!
//! The reader also tells the connection's [`Activity`] when the first byte of each head
//! arrives: the header deadline and the eviction of idle connections follow heads, not reads
//! (one read can hold the end of one head and the start of the next).

mod check;
mod scanner;
mod starts;

use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

use super::activity::Activity;
use crate::limits::HeadLimits;

pub use scanner::HeadScanner;
pub(crate) use scanner::InsideARequest;

/// Wraps a connection's byte stream on the way to hyper's HTTP/1 reader.
pub(crate) struct HeadFilter<S> {
    inner: S,
    scanner: HeadScanner,
    activity: Arc<Activity>,
    /// The scanner's `heads_begun` as last told to `activity`.
    heads_told: u64,
}

impl<S> HeadFilter<S> {
    pub(crate) fn new(inner: S, limits: HeadLimits, activity: Arc<Activity>) -> Self {
        HeadFilter {
            inner,
            scanner: HeadScanner::new(limits),
            activity,
            heads_told: 0,
        }
    }

    /// Puts back bytes hyper read from here and did not use, where hyper stopped at the
    /// start of a request; see [`HeadScanner::resume`].
    pub(crate) fn resume(&mut self, bytes: &[u8]) -> Result<(), InsideARequest> {
        self.scanner.resume(bytes)
    }

    /// Whether the client may have sent more than hyper took: a head or a body under way,
    /// checked bytes not yet read, or a refused head's aftermath.
    pub(crate) fn may_have_more(&self) -> bool {
        !self.scanner.is_between_requests()
    }

    fn scan(&mut self, bytes: &[u8]) {
        self.scanner.scan(bytes);
        let begun = self.scanner.heads_begun();
        if begun != self.heads_told {
            self.activity.heads_begun(begun);
            self.heads_told = begun;
        }
        if let Some(refusal) = self.scanner.refusal() {
            self.activity
                .head_refused(self.scanner.heads_handed(), refusal);
        }
    }
}

impl<S: AsyncRead + Unpin> HeadFilter<S> {
    /// Once the last answer is sent, reads and drops what the client still sends: see
    /// `io::linger`.
    pub(crate) async fn linger(&mut self) {
        super::linger::discard_until_closed(&mut self.inner).await;
    }

    /// Reads until there is something for hyper: a checked head (or a refusal), or the end of
    /// the stream. Resolves to whether there is, without handing anything over, so that a
    /// connection at rest can wait for its next request before it builds a reader for it.
    pub(crate) fn poll_next_head(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<bool>> {
        loop {
            if !self.scanner.pending().is_empty() {
                return Poll::Ready(Ok(true));
            }
            // Uninitialised: a plain socket writes before anything is read (TLS initialises
            // what it is given itself), and zeroing it cost more than the scan.
            let mut chunk = [MaybeUninit::<u8>::uninit(); 4096];
            let mut read = ReadBuf::uninit(&mut chunk);
            ready!(Pin::new(&mut self.inner).poll_read(cx, &mut read))?;
            let filled = read.filled().len();
            if filled == 0 {
                // End of file: a partial head has no answer (hyper would give none either).
                return Poll::Ready(Ok(false));
            }
            if self.scanner.refusal().is_some() {
                if !self.scanner.drop_after_refusal(filled) {
                    return Poll::Ready(Ok(false));
                }
                continue;
            }
            self.scan(read.filled());
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for HeadFilter<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !ready!(this.poll_next_head(cx))? {
            return Poll::Ready(Ok(()));
        }
        let pending = this.scanner.pending();
        let n = pending.len().min(buf.remaining());
        buf.put_slice(&pending[..n]);
        this.scanner.consume(n);
        Poll::Ready(Ok(()))
    }
}

write_through!(HeadFilter);
