//! `[limits]`: every bound the service holds connections and requests to, each a timer or a
//! count with its own ceiling.

use std::time::Duration;

use crate::limits::MAX_QUERY_BYTES;

use super::walk::{Value, Walker, join};
use super::{Limits, MAX_TIMER};

/// What one key of `[limits]` sets.
enum Limit {
    /// A deadline, from 1 ms to [`MAX_TIMER`].
    Timer(fn(&mut Limits, Duration)),
    /// A whole number from 1 to the ceiling given.
    Count(fn(&mut Limits, usize), usize),
}

/// Each key of `[limits]` and what it sets: the one list it is read from and named by.
const LIMITS: [(&str, Limit); 11] = [
    (
        "handshake_timeout",
        Limit::Timer(|l, d| l.handshake_timeout = d),
    ),
    (
        "header_read_timeout",
        Limit::Timer(|l, d| l.header_read_timeout = d),
    ),
    ("idle_timeout", Limit::Timer(|l, d| l.idle_timeout = d)),
    ("shutdown_grace", Limit::Timer(|l, d| l.shutdown_grace = d)),
    (
        "max_connections",
        Limit::Count(|l, n| l.max_connections = n, 1 << 24),
    ),
    (
        "max_header_bytes",
        Limit::Count(|l, n| l.max_header_bytes = n, 1 << 20),
    ),
    (
        "max_query_bytes",
        Limit::Count(|l, n| l.max_query_bytes = n, MAX_QUERY_BYTES),
    ),
    (
        "h2_max_concurrent_streams",
        // At most 10 000, so always a u32.
        Limit::Count(
            |l, n| l.h2_max_concurrent_streams = u32::try_from(n).unwrap_or(u32::MAX),
            10_000,
        ),
    ),
    (
        "max_unsent_bytes",
        Limit::Count(|l, n| l.max_unsent_bytes = n, 1 << 30),
    ),
    (
        "page_cache_bytes",
        Limit::Count(|l, n| l.page_cache_bytes = n, 1 << 34),
    ),
    (
        "h2_cookie_bytes",
        Limit::Count(|l, n| l.h2_cookie_bytes = n, 1 << 24),
    ),
];

/// The keys of `[limits]`.
pub(super) const KEYS: [&str; LIMITS.len()] = {
    let mut keys = [""; LIMITS.len()];
    let mut i = 0;
    while i < LIMITS.len() {
        keys[i] = LIMITS[i].0;
        i += 1;
    }
    keys
};

/// `[limits]`: each key given replaces its default; one that cannot be read keeps it, with
/// the problem reported.
pub(super) fn limits(w: &mut Walker<'_>, value: &Value<'_>) -> Limits {
    let mut limits = Limits::default();
    let Some(table) = w.table(value, "limits") else {
        return limits;
    };
    w.reject_unknown_keys(table, "limits", &KEYS);
    for (name, limit) in &LIMITS {
        let Some(v) = table.get(*name) else {
            continue;
        };
        let key = join("limits", name);
        match limit {
            Limit::Timer(set) => {
                if let Some(d) = w.duration(v, &key, false, MAX_TIMER) {
                    set(&mut limits, d);
                }
            }
            Limit::Count(set, max) => {
                if let Some(n) = w.count(v, &key, *max) {
                    set(&mut limits, n);
                }
            }
        }
    }
    limits
}
