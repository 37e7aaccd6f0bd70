//! Connections that may be closed to make room: at the connection cap, the keep-alive
//! connection idle the longest is closed so that a new client is admitted at once instead of
//! waiting up to `idle_timeout` in the kernel's backlog (nginx reuses idle keep-alive
//! connections the same way). Only a connection idle for `MIN_IDLE` is closed: one in steady
//! use between two quick requests is a client being served, not a slot going to waste, and
//! closing it would hand its place to whoever connects next.

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

    /// Asks the connection idle the longest to close, unless one asked before is still
    /// closing (its permit is on its way). Returns whether one was asked now. Called only at
    /// the cap, so the scan over open connections is off the common path.
    pub(crate) fn close_idlest(&self) -> bool {
        let open = self.lock();
        if open.values().any(|c| c.is_evicted()) {
            return false;
        }
        let idle_before = Instant::now().checked_sub(MIN_IDLE);
        let idlest = open
            .values()
            .filter(|c| c.is_idle_keep_alive())
            .filter(|c| idle_before.is_some_and(|before| c.idle_since() <= before))
            .min_by_key(|c| c.idle_since());
        match idlest {
            Some(connection) => {
                connection.evict();
                true
            }
            None => false,
        }
    }
}
