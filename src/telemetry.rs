//! Logs: `tracing-subscriber` as text or JSON lines, filtered by `RUST_LOG` (default `info`).

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

use crate::config::Problem;

/// How log lines are written (`--log-format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line, for log pipelines.
    Json,
}

/// Installs the global subscriber; logs go to standard error, so `headers` and `check`
/// output on standard out stays clean.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let result = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
    // A second init (tests) keeps the first subscriber; nothing is lost.
    let _ = result;
}

/// Logs what a loaded config warns about, at start and after every reload.
pub(crate) fn config_warnings(warnings: &[Problem]) {
    for warning in warnings {
        tracing::warn!(
            file = %warning.file_shown(),
            line = warning.line,
            key = %warning.key_shown(),
            "{}",
            warning.message_shown()
        );
    }
}

/// A budget of log lines per second, shared by every request: a flood of bad requests costs a
/// few lines and a count, not a full disk.
#[derive(Debug)]
pub(crate) struct LogBudget {
    per_second: u64,
    second: std::sync::atomic::AtomicU64,
    used: std::sync::atomic::AtomicU64,
    suppressed: std::sync::atomic::AtomicU64,
}

impl LogBudget {
    pub(crate) const fn new(per_second: u64) -> Self {
        use std::sync::atomic::AtomicU64;
        LogBudget {
            per_second,
            second: AtomicU64::new(0),
            used: AtomicU64::new(0),
            suppressed: AtomicU64::new(0),
        }
    }

    /// Whether one more line may be written in the current second.
    pub(crate) fn allow(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if self.second.swap(now, Relaxed) != now {
            self.used.store(0, Relaxed);
        }
        if self.used.fetch_add(1, Relaxed) < self.per_second {
            return true;
        }
        self.suppressed.fetch_add(1, Relaxed);
        false
    }

    /// Lines suppressed since the last call.
    pub(crate) fn take_suppressed(&self) -> u64 {
        self.suppressed
            .swap(0, std::sync::atomic::Ordering::Relaxed)
    }
}
