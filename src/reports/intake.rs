//! What the endpoint does with one report request: read its body within the caps, parse it,
//! admit it within the rate limits, and count, keep and log what it names.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};

use super::MAX_REPORT_BODY;
use super::directive::{DIRECTIVES, ViolationCounts};
use super::parse::{MediaType, Violation, parse};
use super::rate::{ConnectionReports, TokenBucket};
use super::table::{Key, ReportTable, Source};
use crate::signing::unix_now;

/// Report bodies read at once, across all clients: at most this many times `MAX_REPORT_BODY`
/// is held for bodies still arriving, however many connections and HTTP/2 streams send them.
pub(crate) const MAX_READING: usize = 64;

/// Log lines per second about reports, and their burst; the rest are counted in the next line.
const LOG_LINES_PER_SECOND: f64 = 5.0;
const LOG_LINES_BURST: f64 = 20.0;

/// Why a report request was not taken. Each is counted under its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Refused {
    #[error("reports are sent with POST")]
    Method,
    #[error("a report is application/csp-report or application/reports+json")]
    MediaType,
    #[error("a report's body is at most {MAX_REPORT_BODY} bytes")]
    TooLarge,
    #[error("the body is not a CSP report")]
    Malformed,
    #[error("the body did not arrive in time")]
    Slow,
    #[error("this connection sent more reports than the endpoint takes from one")]
    Connection,
    #[error("the endpoint takes no more reports this second")]
    Rate,
    #[error("this sandbox takes no reports (csp_reports = false)")]
    Off,
}

impl Refused {
    /// Every reason, in the order the metrics list them.
    pub(crate) const ALL: [Refused; 8] = [
        Refused::Method,
        Refused::MediaType,
        Refused::TooLarge,
        Refused::Malformed,
        Refused::Slow,
        Refused::Connection,
        Refused::Rate,
        Refused::Off,
    ];

    /// The reason's label in `mcp_sandbox_proxy_csp_reports_refused_total`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Refused::Method => "method",
            Refused::MediaType => "media_type",
            Refused::TooLarge => "too_large",
            Refused::Malformed => "malformed",
            Refused::Slow => "slow",
            Refused::Connection => "connection_rate",
            Refused::Rate => "rate",
            Refused::Off => "off",
        }
    }
}

/// Where a report was sent: the host entry the name it was sent to belongs to.
#[derive(Debug)]
pub(crate) struct ReportTarget {
    /// The host entry's name in the metrics (its origin).
    pub(crate) host: Arc<str>,
    /// The host entry's violation counters.
    pub(crate) violations: Arc<ViolationCounts>,
    /// The server label, for a per-server name.
    pub(crate) label: Option<Box<str>>,
    pub(crate) source: Source,
}

/// What every generation of the config shares about reports: the table, the rate for all
/// clients, the refusals by reason and the log's own limit.
#[derive(Debug)]
pub(crate) struct Intake {
    pub(crate) table: ReportTable,
    rate: TokenBucket,
    refused: [AtomicU64; Refused::ALL.len()],
    log_lines: TokenBucket,
    unlogged: AtomicU64,
    reading: Arc<tokio::sync::Semaphore>,
}

impl Default for Intake {
    fn default() -> Self {
        Intake {
            table: ReportTable::default(),
            rate: TokenBucket::for_all(),
            refused: Default::default(),
            log_lines: TokenBucket::new(LOG_LINES_PER_SECOND, LOG_LINES_BURST),
            unlogged: AtomicU64::new(0),
            reading: Arc::new(tokio::sync::Semaphore::new(MAX_READING)),
        }
    }
}

impl Intake {
    /// Counts a refused request under its reason.
    pub(crate) fn count_refused(&self, reason: Refused) {
        if let Some(slot) = Refused::ALL.iter().position(|r| *r == reason) {
            self.refused[slot].fetch_add(1, Relaxed);
        }
    }

    /// Each reason with its count.
    pub(crate) fn refusals(&self) -> impl Iterator<Item = (Refused, u64)> + '_ {
        Refused::ALL
            .iter()
            .zip(&self.refused)
            .map(|(reason, count)| (*reason, count.load(Relaxed)))
    }

    /// Admits `n` reports within this connection's and every client's rate, taking nothing
    /// from either when one of them has no room.
    fn within_rates(&self, n: usize, connection: &ConnectionReports) -> Result<(), Refused> {
        let now = Instant::now();
        if !connection.take(n, now) {
            return Err(Refused::Connection);
        }
        if !self.rate.take(n, now) {
            return Err(Refused::Rate);
        }
        Ok(())
    }

    /// Counts each violation per host entry and directive, keeps it in the table and logs it
    /// within the log's limit.
    fn take(&self, target: &ReportTarget, violations: Vec<Violation>) -> usize {
        let now = Instant::now();
        let seconds = unix_now();
        let taken = violations.len();
        for violation in violations {
            target.violations.count(violation.directive);
            let key = Key {
                host: target.host.clone(),
                label: target.label.clone(),
                source: target.source,
                directive: violation.directive,
                blocked: violation.blocked,
            };
            self.log(&key, now);
            self.table.record(key, seconds);
        }
        taken
    }

    /// One line per violation, at most [`LOG_LINES_PER_SECOND`]; every value in it is one the
    /// service built (an origin the URL parser serialized, a keyword, a directive of its list,
    /// a label its router took), never a client's bytes.
    fn log(&self, key: &Key, now: Instant) {
        if !self.log_lines.take(1, now) {
            self.unlogged.fetch_add(1, Relaxed);
            return;
        }
        let unlogged = self.unlogged.swap(0, Relaxed);
        tracing::warn!(
            host = %key.host,
            label = key.label.as_deref().unwrap_or(""),
            from = key.source.as_str(),
            directive = DIRECTIVES[key.directive],
            blocked = key.blocked.as_str(),
            unlogged,
            "CSP violation reported"
        );
    }
}

/// Reads one report body of `media_type` within [`MAX_REPORT_BODY`] and `timeout`, and takes
/// what it names; the number of violations taken, or why none was.
///
/// SECURITY: the rates are charged a report before its body is read, and the body is read
/// only with one of [`MAX_READING`] places free, so a flood costs neither reading nor parsing
/// beyond the rates, and the bodies in flight hold a bounded amount of memory in all.
pub(crate) async fn receive<B>(
    intake: &Intake,
    target: &ReportTarget,
    media_type: MediaType,
    body: B,
    connection: &ConnectionReports,
    timeout: Duration,
) -> Result<usize, Refused>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    intake.within_rates(1, connection)?;
    let Ok(_reading) = intake.reading.clone().try_acquire_owned() else {
        return Err(Refused::Rate);
    };
    let bytes =
        match tokio::time::timeout(timeout, Limited::new(body, MAX_REPORT_BODY).collect()).await {
            Err(_) => return Err(Refused::Slow),
            // Over the cap, or a body that broke off: neither is a report.
            Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
                return Err(Refused::TooLarge);
            }
            Ok(Err(_)) => return Err(Refused::Malformed),
            Ok(Ok(collected)) => collected.to_bytes(),
        };
    let violations = parse(media_type, &bytes).map_err(|_| Refused::Malformed)?;
    // The first report was charged before the body was read; a batch pays for the rest.
    intake.within_rates(violations.len() - 1, connection)?;
    Ok(intake.take(target, violations))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    /// A body that never sends a byte.
    struct Silent;

    impl http_body::Body for Silent {
        type Data = Bytes;
        type Error = std::convert::Infallible;

        fn poll_frame(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
            Poll::Pending
        }
    }

    fn target() -> ReportTarget {
        ReportTarget {
            host: Arc::from("https://chat.example.com"),
            violations: Arc::default(),
            label: None,
            source: Source::View,
        }
    }

    #[tokio::test]
    async fn bodies_still_arriving_hold_at_most_max_reading_places() {
        let intake = Arc::new(Intake::default());
        let mut reading = Vec::new();
        for _ in 0..MAX_READING {
            let intake = intake.clone();
            reading.push(tokio::spawn(async move {
                let connection = ConnectionReports::default();
                let timeout = Duration::from_secs(3600);
                receive(
                    &intake,
                    &target(),
                    MediaType::CspReport,
                    Silent,
                    &connection,
                    timeout,
                )
                .await
            }));
        }
        tokio::task::yield_now().await;
        while intake.reading.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let (connection, target) = (ConnectionReports::default(), target());
        let timeout = Duration::from_secs(3600);
        let one_more = receive(
            &intake,
            &target,
            MediaType::CspReport,
            Silent,
            &connection,
            timeout,
        );
        // Refused at once, not left waiting for a body (without the cap, this would time out).
        let refused = tokio::time::timeout(Duration::from_secs(5), one_more).await;
        assert_eq!(refused, Ok(Err(Refused::Rate)));
        // A body that goes away gives its place back.
        for task in reading {
            task.abort();
            assert!(task.await.unwrap_err().is_cancelled());
        }
        assert_eq!(intake.reading.available_permits(), MAX_READING);
    }
}
