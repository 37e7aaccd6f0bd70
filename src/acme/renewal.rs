//! When to order: a name without a certificate at once; a certificate at a random moment of
//! the window its CA suggests (ACME Renewal Information, RFC 9773) where the CA offers one,
//! otherwise at two thirds of its lifetime, a little earlier by a random share so that many
//! services started together do not all order at the same moment; after a failure, again
//! after a back-off that doubles.

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

/// The soonest and the latest the CA's renewal information is asked for again, whatever its
/// `Retry-After` says.
const ARI_RECHECK: (Duration, Duration) = (
    Duration::from_secs(60 * 60),
    Duration::from_secs(24 * 60 * 60),
);

/// A moment in the CA's suggested window, `start` to `end` (seconds since the epoch); `jitter`
/// in [0, 1) picks it, as RFC 9773 asks, so that the CA's clients spread over the window.
pub(crate) fn in_window(start: i64, end: i64, jitter: f64) -> i64 {
    let width = (end - start).max(0);
    start + (width as f64 * jitter.clamp(0.0, 1.0)) as i64
}

/// When to ask the CA's renewal information again, after it said `retry_after`.
pub(crate) fn ari_recheck(retry_after: Duration) -> Duration {
    retry_after.clamp(ARI_RECHECK.0, ARI_RECHECK.1)
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
    fn a_suggested_window_is_followed_and_its_recheck_bounded() {
        assert_eq!(in_window(1_000, 2_000, 0.0), 1_000);
        assert_eq!(in_window(1_000, 2_000, 0.5), 1_500);
        assert!(in_window(1_000, 2_000, 0.999_999) < 2_000);
        assert_eq!(
            in_window(2_000, 1_000, 0.5),
            2_000,
            "a window backwards: its start"
        );
        assert_eq!(ari_recheck(Duration::ZERO), Duration::from_secs(3_600));
        assert_eq!(
            ari_recheck(Duration::from_secs(7_200)),
            Duration::from_secs(7_200)
        );
        assert_eq!(
            ari_recheck(Duration::from_secs(10 * 86_400)),
            Duration::from_secs(86_400)
        );
    }

    #[test]
    fn the_renewal_identifier_is_encoded_as_rfc_9773_shows() {
        // RFC 9773, 4.1: keyIdentifier 69:88:5B:6B:87:46:40:41:E1:B3:7B:84:7B:A0:AE:2C:DE:01:C8:D4
        // and serial 00:87:65:43:21.
        let key_id = [
            0x69, 0x88, 0x5b, 0x6b, 0x87, 0x46, 0x40, 0x41, 0xe1, 0xb3, 0x7b, 0x84, 0x7b, 0xa0,
            0xae, 0x2c, 0xde, 0x01, 0xc8, 0xd4,
        ];
        let serial = [0x00, 0x87, 0x65, 0x43, 0x21];
        let id = instant_acme::CertificateIdentifier::new(
            rustls_pki_types::Der::from_slice(&key_id),
            rustls_pki_types::Der::from_slice(&serial),
        );
        assert_eq!(id.to_string(), "aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE");
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
