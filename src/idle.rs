//! Connections that may be closed to make room: at the connection cap, the keep-alive
//! connection idle the longest is closed so that a new client is admitted at once instead of
//! waiting up to `idle_timeout` in the kernel's backlog (nginx reuses idle keep-alive
//! connections the same way). Only a connection idle for `MIN_IDLE` is closed: one in steady
//! use between two quick requests is a client being served, not a slot going to waste, and
//! closing it would hand its place to whoever connects next.
//!
//! With none idle, the connection that has waited longest for a head is closed, once it has
//! waited `MIN_IDLE`: a head begun and not finished, or a first request not sent (every
//! connection is listed from accept on, so this covers one that sends nothing, part of a TLS
//! handshake or part of the HTTP/2 preface; for TLS the wait starts over after the handshake,
//! whose first bytes do not count as a head). Otherwise a
//! client could hold a slot for `header_read_timeout` with one byte of its next head, and the
//! whole cap with one such connection per slot at a few bytes a second. A browser sends a
//! head in one write; a head that takes a second is a slow client, and at the cap it gives
//! way to one that is ready.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, PoisonError};

use std::time::Duration;

use tokio::time::Instant;

use crate::io::activity::Activity;

/// How long a keep-alive connection must have been idle to be closed for another client.
const MIN_IDLE: Duration = Duration::from_secs(1);

/// The open connections of the capped listeners, by id.
#[derive(Debug, Default)]
pub(crate) struct OpenConnections {
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    next_id: AtomicU64,
}

/// Keeps one connection in [`OpenConnections`] until dropped.
#[derive(Debug)]
pub(crate) struct Tracked {
    connections: Arc<OpenConnections>,
    id: u64,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.connections.lock().remove(&self.id);
    }
}

impl OpenConnections {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(OpenConnections::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Activity>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn track(self: &Arc<Self>, activity: Arc<Activity>) -> Tracked {
        let id = self.next_id.fetch_add(1, Relaxed);
        self.lock().insert(id, activity);
        Tracked {
            connections: self.clone(),
            id,
        }
    }

    /// Asks the connection idle the longest to close, or with none idle the one waiting the
    /// longest for a head, unless one asked before is still closing (its permit is on its
    /// way). Returns which kind was asked now, if any. Called only at the cap, so the scan over
    /// open connections is off the common path.
    pub(crate) fn close_idlest(&self) -> Option<Closed> {
        let open = self.lock();
        if open.values().any(|c| c.is_evicted()) {
            return None;
        }
        let idle_before = Instant::now().checked_sub(MIN_IDLE);
        let idlest = open
            .values()
            .filter(|c| c.is_idle_keep_alive())
            .filter(|c| idle_before.is_some_and(|before| c.idle_since() <= before))
            .min_by_key(|c| c.idle_since());
        let slowest_head = || {
            open.values()
                .filter_map(|c| Some((c.waiting_for_head_since()?, c)))
                .filter(|(since, _)| idle_before.is_some_and(|before| *since <= before))
                .min_by_key(|(since, _)| *since)
                .map(|(_, c)| c)
        };
        let (connection, closed) = match idlest {
            Some(connection) => (connection, Closed::Idle),
            None => (slowest_head()?, Closed::SlowHead),
        };
        connection.evict();
        Some(closed)
    }
}

/// Which kind of connection was closed to make room.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Closed {
    /// A keep-alive connection between requests.
    Idle,
    /// One that had waited `MIN_IDLE` or longer for a head.
    SlowHead,
}
