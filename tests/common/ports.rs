//! Ports for a child process that must be told where to listen before it starts (pebble).
//!
//! A port bound to 0 and let go is from the range the OS hands out for port 0 and for outgoing
//! connections (`net.ipv4.ip_local_port_range`), so by the time the child listens it may be
//! another test's connection or server. Ports are picked from the 12 000 just below that range
//! instead, never twice in one process (tests/browser/engines.mjs picks the same way).

use std::collections::HashSet;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::net::TcpListener;
use std::sync::{Mutex, OnceLock};

/// A port free on 127.0.0.1 now, below the OS's ephemeral range, not handed out before.
pub fn free_port() -> u16 {
    static HANDED_OUT: OnceLock<Mutex<HashSet<u16>>> = OnceLock::new();
    let handed_out = HANDED_OUT.get_or_init(Default::default);
    let (low, high) = picked_from();
    for _ in 0..100 {
        let port = low + (random() % u64::from(high - low)) as u16;
        let fresh = handed_out
            .lock()
            .expect("no test panics holding it")
            .insert(port);
        if fresh && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free port in {low}-{high} after 100 attempts");
}

/// The 12 000 ports below the ephemeral range (Linux's default starts at 32768).
fn picked_from() -> (u16, u16) {
    let low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|range| range.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    (low.saturating_sub(12_000).max(1024), low)
}

fn random() -> u64 {
    RandomState::new().build_hasher().finish()
}
