//! What one connection tells the parts that watch it: requests answered, when it went idle,
//! whether a request head is arriving, and whether it has been asked to close.
//!
//! The request handler answers synchronously, within hyper's poll of the connection, so a
//! request is never in flight while the stream is read: its answer is the only event, and it
//! restarts the idle clock. The one exception is a report, answered once its body is read:
//! until then its exchange is open ([`Activity::answer_pending`]), and the connection is not
//! idle, though the head deadline no longer runs (the body has a deadline of its own).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::limits::Refusal;

#[derive(Debug)]
pub(crate) struct Activity {
    started_at: Instant,
    requests: AtomicU64,
    /// Milliseconds after `started_at` when the last request was answered (or the connection
    /// began).
    idle_since_ms: AtomicU64,
    /// HTTP/1: heads whose first byte has arrived. More of them than `requests`: a head is
    /// in progress (or read and not yet answered).
    heads_begun: AtomicU64,
    /// Milliseconds after `started_at` when the newest head's first byte arrived.
    head_started_ms: AtomicU64,
    first_request: Notify,
    /// Answers handed to hyper that wait for their request's body.
    pending_answers: AtomicU64,
    /// Set once, when the connection is asked to close to make room for another.
    evicted: AtomicBool,
    eviction: Notify,
    /// Requests handed to the handler so far (`request_arrived`).
    arrived: AtomicU64,
    /// HTTP/1: which request (counted from 1) the head reader put in a refused head's place,
    /// and why. Set once: nothing is read after a refused head.
    refused: OnceLock<(u64, Refusal)>,
}

impl Activity {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Activity {
            started_at: Instant::now(),
            requests: AtomicU64::new(0),
            idle_since_ms: AtomicU64::new(0),
            heads_begun: AtomicU64::new(0),
            head_started_ms: AtomicU64::new(0),
            first_request: Notify::new(),
            pending_answers: AtomicU64::new(0),
            evicted: AtomicBool::new(false),
            eviction: Notify::new(),
            arrived: AtomicU64::new(0),
            refused: OnceLock::new(),
        })
    }

    pub(crate) fn started_at(&self) -> Instant {
        self.started_at
    }

    /// Requests seen so far on this connection.
    pub(crate) fn requests(&self) -> u64 {
        self.requests.load(Relaxed)
    }

    /// Resolves once the connection has had a request.
    pub(crate) async fn first_request(&self) {
        let notified = self.first_request.notified();
        if self.requests() > 0 {
            return;
        }
        notified.await;
    }

    /// Counts an answered request and restarts the idle clock from now.
    pub(crate) fn answered(&self) {
        // The idle clock first: a reader that sees the new count must see its time too.
        self.idle_since_ms.store(self.elapsed_ms(), Relaxed);
        if self.requests.fetch_add(1, Relaxed) == 0 {
            self.first_request.notify_waiters();
        }
    }

    /// An answer that is not ready until its request's body is read: the connection is not
    /// idle until the returned guard is dropped (with the answer, once it resolved).
    pub(crate) fn answer_pending(self: &Arc<Self>) -> PendingAnswer {
        self.pending_answers.fetch_add(1, Relaxed);
        PendingAnswer(self.clone())
    }

    /// HTTP/1: the head reader refused a head and put request number `ordinal` (counted from
    /// 1, as hyper reads them) in its place.
    pub(crate) fn head_refused(&self, ordinal: u64, refusal: Refusal) {
        let _ = self.refused.set((ordinal, refusal));
    }

    /// Counts a request handed to the handler; if the head reader put it in a refused head's
    /// place, why. hyper hands HTTP/1 requests on in the order it reads them, one at a time,
    /// so the count names the request; an HTTP/2 connection has no head reader, so none.
    pub(crate) fn request_arrived(&self) -> Option<Refusal> {
        let ordinal = self.arrived.fetch_add(1, Relaxed) + 1;
        self.refused
            .get()
            .filter(|(refused, _)| *refused == ordinal)
            .map(|(_, refusal)| *refusal)
    }

    /// HTTP/1: the first byte of a request head arrived, the `count`th of the connection.
    pub(crate) fn heads_begun(&self, count: u64) {
        self.head_started_ms.store(self.elapsed_ms(), Relaxed);
        self.heads_begun.store(count, Relaxed);
    }

    /// HTTP/1: when the head being read began, while one is (one that is read and waits for
    /// its answer counts too: its answer comes before anything else is read).
    pub(crate) fn head_started(&self) -> Option<Instant> {
        (self.heads_begun.load(Relaxed) > self.requests())
            .then(|| self.started_at + Duration::from_millis(self.head_started_ms.load(Relaxed)))
    }

    /// Since when the connection has been waiting for a head to complete: before its first
    /// request, the connection itself (a silent client, or a slow first head); after it, the
    /// HTTP/1 head in progress. `None` between requests and while a request is answered. The
    /// header deadline runs from it, and the cap closes the connection waiting the longest.
    pub(crate) fn waiting_for_head_since(&self) -> Option<Instant> {
        if self.requests() == 0 {
            return Some(self.started_at);
        }
        self.head_started()
    }

    fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.started_at.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    pub(crate) fn idle_since(&self) -> Instant {
        self.started_at + Duration::from_millis(self.idle_since_ms.load(Relaxed))
    }

    /// A keep-alive connection between requests: it has had one, nothing of the next has
    /// arrived, and it was not asked to close already. Closing it loses nothing but the
    /// connection (browsers retry a request on a new one when a kept connection closes).
    pub(crate) fn is_idle_keep_alive(&self) -> bool {
        self.requests() > 0
            && self.head_started().is_none()
            && self.pending_answers.load(Relaxed) == 0
            && !self.is_evicted()
    }

    pub(crate) fn is_evicted(&self) -> bool {
        self.evicted.load(Relaxed)
    }

    /// Asks the connection to close gracefully (see [`Activity::evicted`]).
    pub(crate) fn evict(&self) {
        self.evicted.store(true, Relaxed);
        // One stored permit: the connection sees it even if it is not waiting yet.
        self.eviction.notify_one();
    }

    /// Resolves once [`Activity::evict`] was called.
    pub(crate) async fn evicted(&self) {
        self.eviction.notified().await;
    }
}

/// Holds its connection out of idleness while an answer waits for its request's body.
#[derive(Debug)]
pub(crate) struct PendingAnswer(Arc<Activity>);

impl Drop for PendingAnswer {
    fn drop(&mut self) {
        self.0.pending_answers.fetch_sub(1, Relaxed);
    }
}
