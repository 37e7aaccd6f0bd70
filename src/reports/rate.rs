//! Token buckets: how many reports the endpoint takes per second in all, and per connection.

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

/// Reports the endpoint takes per second across all clients, and the burst above that rate.
pub(crate) const REPORTS_PER_SECOND: f64 = 200.0;
const REPORTS_BURST: f64 = 400.0;
/// Reports one connection may send per second, and its burst: a page with a view that keeps
/// failing sends a few a second; a client that sends more is flooding.
pub(crate) const CONNECTION_REPORTS_PER_SECOND: f64 = 10.0;
const CONNECTION_REPORTS_BURST: f64 = 64.0;

/// A bucket of `burst` tokens refilled at `rate` per second.
#[derive(Debug)]
pub(crate) struct TokenBucket {
    rate: f64,
    burst: f64,
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    pub(crate) fn new(rate: f64, burst: f64) -> Self {
        TokenBucket {
            rate,
            burst,
            state: Mutex::new((burst, Instant::now())),
        }
    }

    /// The endpoint's own bucket, for all clients.
    pub(crate) fn for_all() -> Self {
        TokenBucket::new(REPORTS_PER_SECOND, REPORTS_BURST)
    }

    /// Takes `n` tokens at `now` if there are as many; false (and none taken) otherwise.
    pub(crate) fn take(&self, n: usize, now: Instant) -> bool {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let (tokens, last) = &mut *state;
        let elapsed = now.saturating_duration_since(*last).as_secs_f64();
        *tokens = (*tokens + elapsed * self.rate).min(self.burst);
        *last = (*last).max(now);
        let n = n as f64;
        if *tokens < n {
            return false;
        }
        *tokens -= n;
        true
    }
}

/// One connection's reports: created with the connection, dropped with it.
#[derive(Debug)]
pub(crate) struct ConnectionReports(TokenBucket);

impl Default for ConnectionReports {
    fn default() -> Self {
        ConnectionReports(TokenBucket::new(
            CONNECTION_REPORTS_PER_SECOND,
            CONNECTION_REPORTS_BURST,
        ))
    }
}

impl ConnectionReports {
    pub(crate) fn take(&self, n: usize, now: Instant) -> bool {
        self.0.take(n, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_bucket_gives_its_burst_then_its_rate() {
        let bucket = TokenBucket::new(10.0, 5.0);
        let start = Instant::now();
        assert!((0..5).all(|_| bucket.take(1, start)));
        assert!(!bucket.take(1, start));
        assert!(bucket.take(1, start + Duration::from_millis(150)));
        assert!(!bucket.take(1, start + Duration::from_millis(150)));
        // Never more than the burst, however long it rested.
        let later = start + Duration::from_secs(3600);
        assert!(bucket.take(5, later));
        assert!(!bucket.take(1, later));
    }
}
