//! When to order: a name without a certificate at once; a certificate at two thirds of its
//! lifetime, a little earlier by a random share so that many services started together do
//! not all order at the same moment; after a failure, again after a back-off that doubles.

use std::time::Duration;

/// The first wait after a failed order; it doubles up to [`LONGEST_RETRY`].
pub(crate) const FIRST_RETRY: Duration = Duration::from_secs(60);

/// The longest wait between two failed orders for one name.
pub(crate) const LONGEST_RETRY: Duration = Duration::from_secs(6 * 60 * 60);

/// How much of a lifetime the jitter may take from the two-thirds point: up to a tenth.
const JITTER_SHARE: f64 = 0.1;

/// Seconds since the epoch at which a certificate valid from `not_before` to `not_after`
/// should be renewed; `jitter` is a random number in [0, 1).
pub(crate) fn renew_at(not_before: i64, not_after: i64, jitter: f64) -> i64 {
    let lifetime = (not_after - not_before).max(0);
    let two_thirds = not_before + lifetime * 2 / 3;
    // Truncated: the jitter only ever moves the renewal earlier.
    let early = (lifetime as f64 * JITTER_SHARE * jitter.clamp(0.0, 1.0)) as i64;
    two_thirds - early
}

/// The wait before the next order for a name whose last `failures` orders failed.
pub(crate) fn retry_after(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_RETRY
        .saturating_mul(1 << doublings)
        .min(LONGEST_RETRY)
}

/// A number in [0, 1) from the system's random source.
pub(crate) fn jitter() -> f64 {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; 4];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        return 0.0;
    }
    f64::from(u32::from_le_bytes(bytes)) / (f64::from(u32::MAX) + 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renewal_comes_at_two_thirds_moved_earlier_by_at_most_a_tenth() {
        let ninety_days = 90 * 86_400;
        assert_eq!(renew_at(0, ninety_days, 0.0), 60 * 86_400);
        let earliest = renew_at(0, ninety_days, 0.999_999);
        assert!(
            earliest > 51 * 86_400 && earliest <= 60 * 86_400,
            "{earliest}"
        );
        for jitter in [0.0, 0.3, 0.7, 0.99] {
            let at = renew_at(1_000, 1_000 + ninety_days, jitter);
            assert!(
                at > 1_000 && at < 1_000 + ninety_days,
                "within the lifetime"
            );
        }
        assert_eq!(
            renew_at(50, 10, 0.5),
            50,
            "a lifetime backwards renews at once"
        );
    }

    #[test]
    fn retries_back_off_to_six_hours() {
        assert_eq!(retry_after(1), FIRST_RETRY);
        assert_eq!(retry_after(2), FIRST_RETRY * 2);
        assert_eq!(retry_after(4), FIRST_RETRY * 8);
        assert_eq!(retry_after(30), LONGEST_RETRY);
        assert_eq!(retry_after(u32::MAX), LONGEST_RETRY);
        let j = jitter();
        assert!((0.0..1.0).contains(&j));
    }
}
