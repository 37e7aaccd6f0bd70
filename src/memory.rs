//! Giving freed memory back to the system after connections close.
//!
//! glibc's allocator keeps memory freed by other threads' arenas for reuse instead of returning
//! it, so after a flood of connections (or an attack on them) the process would stay at its
//! peak resident size long after the connections are gone. Every `TRIM_INTERVAL`, if any
//! connection closed since the last look, `malloc_trim` hands the free pages back. Elsewhere
//! (other C libraries) this does nothing.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::metrics::Metrics;

/// How often to look; a trim walks the allocator's arenas, a few milliseconds at most.
const TRIM_INTERVAL: Duration = Duration::from_secs(2);

/// Trims after connections close, until `stop` changes.
pub(crate) async fn give_back_freed_memory(metrics: Arc<Metrics>, mut stop: watch::Receiver<bool>) {
    let mut closed_before = metrics.connections_closed();
    let mut ticks = tokio::time::interval(TRIM_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.changed() => return,
            _ = ticks.tick() => {}
        }
        let closed = metrics.connections_closed();
        if closed != closed_before {
            closed_before = closed;
            trim();
        }
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
// The crate denies unsafe code; this is its one exception: glibc's malloc_trim has no safe
// binding in the standard library.
#[allow(unsafe_code)]
fn trim() {
    unsafe extern "C" {
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: malloc_trim takes no pointers and has no preconditions; glibc locks each arena
    // while it trims, so calling it while other threads allocate is fine.
    unsafe {
        malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
