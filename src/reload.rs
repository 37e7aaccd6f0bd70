//! Reload without restart: on SIGHUP, and when the config or certificate files change on disk.
//!
//! Files are compared by content every `watch_interval`, through whatever symlinks lead to
//! them, so Kubernetes' `..data` symlink swap is seen like any other replacement. A reload
//! builds a whole new generation first and swaps it in only if everything loaded: a broken
//! file is refused, logged and counted, and the old generation keeps serving. Connections keep
//! the generation they were accepted under; new ones get the new one.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;

use tokio::sync::watch;

use crate::config::{Config, Loaded};
use crate::generation::{Endpoint, Generation};
use crate::metrics::Metrics;
use crate::telemetry;

/// Owns the serving config: rebuilds it on a trigger and hands the new endpoint to the
/// public listener.
pub(crate) struct Reloader {
    /// Registered when the reloader is made, before the server reports that it listens: a
    /// SIGHUP that arrives while it starts must reload, not end the process.
    hangup: Hangup,
    path: Option<PathBuf>,
    config: Config,
    endpoint: watch::Sender<Arc<Endpoint>>,
    metrics: Arc<Metrics>,
    fingerprint: u64,
}

impl Reloader {
    pub(crate) fn new(
        path: Option<PathBuf>,
        generation: Generation,
        endpoint: watch::Sender<Arc<Endpoint>>,
        metrics: Arc<Metrics>,
    ) -> Self {
        let fingerprint = fingerprint(path.as_ref(), &generation.config);
        Reloader {
            hangup: hangup_signal(),
            path,
            config: generation.config,
            endpoint,
            metrics,
            fingerprint,
        }
    }

    /// Watches for SIGHUP and file changes until `stop` changes.
    pub(crate) async fn run(mut self, mut stop: watch::Receiver<bool>) {
        let mut hangup = self.hangup.take();
        let interval = self.config.watch_interval;
        // A zero interval turns polling off; the tick branch is then disabled below.
        let period = if interval.is_zero() {
            std::time::Duration::from_secs(3600)
        } else {
            interval
        };
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            tokio::select! {
                _ = stop.changed() => return,
                _ = recv(&mut hangup) => {
                    self.fingerprint = fingerprint(self.path.as_ref(), &self.config);
                    self.reload("SIGHUP");
                }
                _ = ticks.tick(), if !interval.is_zero() => {
                    // Taken before the reload reads the files: a change that lands meanwhile
                    // differs from it at the next tick and is loaded then.
                    let now = fingerprint(self.path.as_ref(), &self.config);
                    if now != self.fingerprint {
                        self.fingerprint = now;
                        self.reload("files changed");
                    }
                }
            }
        }
    }

    /// Loads the config (or keeps the embedded one) and its certificates, and swaps them in.
    /// Returns whether the new generation serves.
    fn reload(&mut self, trigger: &str) -> bool {
        let Loaded { config, warnings } = match &self.path {
            Some(path) => match Config::load(path) {
                Ok(loaded) => loaded,
                Err(e) => return self.refuse(trigger, &e.to_string()),
            },
            None => Loaded {
                config: self.config.clone(),
                warnings: Vec::new(),
            },
        };
        let generation = match Generation::build(config, &self.metrics) {
            Ok(generation) => generation,
            Err(e) => return self.refuse(trigger, &e.to_string()),
        };
        telemetry::config_warnings(&warnings);
        self.warn_about_restart_only_changes(&generation.config);
        self.metrics
            .set_certificates(generation.certificates.clone());
        self.metrics.reloaded(true);
        tracing::info!(
            trigger,
            hosts = generation.config.hosts.len(),
            certificates = generation.certificates.len(),
            "reloaded: new connections use the new config and certificates"
        );
        self.endpoint.send_replace(generation.endpoint);
        self.config = generation.config;
        true
    }

    fn refuse(&self, trigger: &str, reason: &str) -> bool {
        self.metrics.reloaded(false);
        tracing::error!(
            trigger,
            reason,
            "reload refused: the previous config and certificates keep serving"
        );
        false
    }

    fn warn_about_restart_only_changes(&self, new: &Config) {
        let old = &self.config;
        let restart_only = [
            ("listen", old.listen != new.listen),
            ("admin_listen", old.admin_listen != new.admin_listen),
            (
                "limits.max_connections",
                old.limits.max_connections != new.limits.max_connections,
            ),
            (
                "limits.shutdown_grace",
                old.limits.shutdown_grace != new.limits.shutdown_grace,
            ),
            ("watch_interval", old.watch_interval != new.watch_interval),
        ];
        for (key, changed) in restart_only {
            if changed {
                tracing::warn!(key, "changed, but takes effect only after a restart");
            }
        }
    }
}

/// A hash of the config file and every certificate and key file it names, by content. The
/// files are those the config on disk names if it loads (a new config may name new files that
/// do not exist yet: their arrival must count as a change), else those of the serving config.
fn fingerprint(path: Option<&PathBuf>, serving: &Config) -> u64 {
    let on_disk = path
        .and_then(|p| Config::load(p).ok())
        .map(|loaded| loaded.config);
    let config = on_disk.as_ref().unwrap_or(serving);
    let mut hasher = DefaultHasher::new();
    let files = path.into_iter().cloned().chain(
        config
            .tls
            .iter()
            .flat_map(|tls| tls.certificates.iter())
            .flat_map(|pair| [pair.cert.clone(), pair.key.clone()]),
    );
    for file in files {
        file.hash(&mut hasher);
        match std::fs::read(&file) {
            Ok(bytes) => bytes.hash(&mut hasher),
            Err(e) => e.kind().hash(&mut hasher),
        }
    }
    hasher.finish()
}

#[cfg(unix)]
type Hangup = Option<tokio::signal::unix::Signal>;
#[cfg(not(unix))]
type Hangup = Option<()>;

#[cfg(unix)]
fn hangup_signal() -> Hangup {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::hangup()) {
        Ok(signal) => Some(signal),
        Err(e) => {
            tracing::warn!(error = %e, "SIGHUP cannot be watched: reload by file change only");
            None
        }
    }
}

#[cfg(not(unix))]
fn hangup_signal() -> Hangup {
    None
}

#[cfg(unix)]
async fn recv(hangup: &mut Hangup) {
    match hangup {
        Some(signal) => {
            signal.recv().await;
        }
        None => std::future::pending().await,
    }
}

#[cfg(not(unix))]
async fn recv(_: &mut Hangup) {
    std::future::pending().await
}
