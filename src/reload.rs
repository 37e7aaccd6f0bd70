//! Reload without restart: on SIGHUP, and when the config, tenant or certificate files change
//! on disk.
//!
//! Files are compared by content every `watch_interval`, through whatever symlinks lead to
//! them, so Kubernetes' `..data` symlink swap is seen like any other replacement. A reload
//! builds a whole new generation first and swaps it in only if everything loaded: a broken
//! file is refused, logged and counted, and the old generation keeps serving. Connections keep
//! the generation they were accepted under; new ones get the new one.
//!
//! All of it runs on the blocking pool, never on the threads that serve requests: a config
//! of 100 000 hosts takes about a second to build, and a stalled worker would hold every
//! connection it owns for that long (`bench/reload.mjs` measures it). Certificates and the
//! config file are compared by content; tenant files (`hosts_dir`) by their metadata, since
//! reading 100 000 of them at every poll would take most of a core.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Notify, watch};

use crate::acme::Challenges;
use crate::config::{self, Config, Loaded, References};
use crate::generation::{Endpoint, Generation};
use crate::metrics::Metrics;
use crate::telemetry;

/// How often generations that were replaced are looked at, to be freed once no connection
/// holds them any more.
const RETIRE_INTERVAL: Duration = Duration::from_secs(1);
/// A reload or poll running longer than this is reported: it is stuck on a file (a FIFO, a
/// hung network mount), and no reload can happen until it returns.
const STUCK_AFTER: Duration = Duration::from_secs(60);

/// Owns the serving config: rebuilds it on a trigger and hands the new endpoint to the
/// public listener.
pub(crate) struct Reloader {
    /// Registered when the reloader is made, before the server reports that it listens: a
    /// SIGHUP that arrives while it starts must reload, not end the process.
    hangup: Hangup,
    /// ACME wrote a new certificate: load it now, whatever the polling interval.
    acme_issued: Arc<Notify>,
    state: State,
}

/// What the reloader's blocking work needs; it moves to the blocking pool and back.
struct State {
    config: Config,
    /// The ACME validation answers every generation's resolver reads.
    challenges: Arc<Challenges>,
    endpoint: watch::Sender<Arc<Endpoint>>,
    metrics: Arc<Metrics>,
    watched: Watched,
    fingerprint: u64,
    /// Replaced endpoints that connections still hold. Whoever drops the last one frees a
    /// whole generation (a second for 100 000 hosts), so it is the reloader, here.
    retired: Vec<Arc<Endpoint>>,
}

/// The files a reload reads, as polling sees them.
pub(crate) struct Watched {
    path: Option<PathBuf>,
    /// The files the config file on disk names, and the hash of the text they were read from:
    /// read again only when that text changes, so that polling costs a read, not a parse.
    references: Option<(u64, References)>,
}

impl Watched {
    /// What the files hold now, before a config is loaded from them: a change that lands
    /// while the first config loads (a second for 100 000 hosts) is then seen at the first
    /// poll, as after any reload.
    pub(crate) fn before_loading(path: Option<PathBuf>) -> (Watched, u64) {
        let mut watched = Watched {
            path,
            references: None,
        };
        let fingerprint = watched.fingerprint(References::default);
        (watched, fingerprint)
    }
}

impl Reloader {
    /// `watched`: the files, and their fingerprint, as they were before `generation`'s config
    /// was loaded from them.
    pub(crate) fn new(
        (watched, fingerprint): (Watched, u64),
        generation: Generation,
        endpoint: watch::Sender<Arc<Endpoint>>,
        metrics: Arc<Metrics>,
        (challenges, acme_issued): (Arc<Challenges>, Arc<Notify>),
    ) -> Self {
        let state = State {
            config: generation.config,
            challenges,
            endpoint,
            metrics,
            watched,
            fingerprint,
            retired: Vec::new(),
        };
        Reloader {
            hangup: hangup_signal(),
            acme_issued,
            state,
        }
    }

    /// Watches for SIGHUP and file changes until `stop` changes.
    pub(crate) async fn run(self, mut stop: watch::Receiver<bool>) {
        let Reloader {
            mut hangup,
            acme_issued,
            mut state,
        } = self;
        let interval = state.config.watch_interval;
        // A zero interval turns polling off; the tick branch is then disabled below.
        let period = if interval.is_zero() {
            Duration::from_secs(3600)
        } else {
            interval
        };
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        let mut retire_ticks = tokio::time::interval(RETIRE_INTERVAL);
        retire_ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let job: fn(&mut State) = tokio::select! {
                _ = stop.changed() => return,
                _ = recv(&mut hangup) => |state| {
                    state.fingerprint = state.fingerprint();
                    state.reload("SIGHUP");
                },
                () = acme_issued.notified() => |state| {
                    state.fingerprint = state.fingerprint();
                    state.reload("ACME");
                },
                _ = ticks.tick(), if !interval.is_zero() => State::poll,
                _ = retire_ticks.tick(), if !state.retired.is_empty() => State::free_retired,
            };
            // A reload stuck on a file (a FIFO, a hung network mount) must not hold up a drain:
            // the blocking job is left behind, and the process exits without it.
            state = tokio::select! {
                _ = stop.changed() => return,
                done = off_the_serving_path(state, job) => match done {
                    Some(state) => state,
                    None => return,
                },
            };
        }
    }
}

/// Runs `job` on the blocking pool and gives the state back; `None` if the job panicked.
async fn off_the_serving_path(mut state: State, job: fn(&mut State)) -> Option<State> {
    let mut done = tokio::task::spawn_blocking(move || {
        job(&mut state);
        state
    });
    let finished = tokio::select! {
        finished = &mut done => finished,
        () = tokio::time::sleep(STUCK_AFTER) => {
            tracing::warn!(
                after = ?STUCK_AFTER,
                "a reload or file poll is stuck reading a file: no reload can happen until it returns"
            );
            done.await
        }
    };
    match finished {
        Ok(state) => Some(state),
        Err(e) => {
            tracing::error!(error = %e, "the reloader failed: reloads stop, the current config keeps serving");
            None
        }
    }
}

impl State {
    /// Reloads if any watched file changed since the last look.
    fn poll(&mut self) {
        // Taken before the reload reads the files: a change that lands meanwhile differs from
        // it at the next tick and is loaded then.
        let now = self.fingerprint();
        if now != self.fingerprint {
            self.fingerprint = now;
            self.reload("files changed");
        }
        self.free_retired();
    }

    /// Loads the config (or keeps the embedded one) and its certificates, and swaps them in.
    /// Returns whether the new generation serves.
    fn reload(&mut self, trigger: &str) -> bool {
        let started = Instant::now();
        let Loaded { config, warnings } = match &self.watched.path {
            Some(path) => match Config::load(path) {
                Ok(loaded) => loaded,
                Err(e) => return self.refuse(trigger, &e.to_string()),
            },
            None => Loaded {
                config: self.config.clone(),
                warnings: Vec::new(),
            },
        };
        let generation = match Generation::build(config, &self.metrics, &self.challenges) {
            Ok(generation) => generation,
            Err(e) => return self.refuse(trigger, &e.to_string()),
        };
        telemetry::config_warnings(&warnings);
        self.warn_about_restart_only_changes(&generation.config);
        self.metrics
            .set_certificates(generation.certificates.clone());
        self.metrics.reloaded(true);
        let (hosts, certificates) = (generation.config.hosts.len(), generation.certificates.len());
        let replaced = self.endpoint.send_replace(generation.endpoint);
        // Said once it is true: a client (or a script) that connects when it reads this line
        // must get the new config, never the one replaced.
        tracing::info!(
            trigger,
            hosts,
            certificates,
            took_ms = started.elapsed().as_millis(),
            "reloaded: new connections use the new config and certificates"
        );
        self.retired.push(replaced);
        self.config = generation.config;
        self.free_retired();
        true
    }

    /// Frees the replaced generations that no connection holds any more.
    fn free_retired(&mut self) {
        // Only the reloader can still reach a retired endpoint once no connection does (it is
        // no longer in the channel), so a count of one cannot grow again.
        self.retired.retain(|endpoint| {
            Arc::strong_count(endpoint) > 1 || Arc::strong_count(&endpoint.handler) > 1
        });
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
            // The ACME task keeps the names and the CA it started with; certificates it has
            // issued are loaded by every reload all the same.
            ("acme", old.acme != new.acme),
        ];
        for (key, changed) in restart_only {
            if changed {
                tracing::warn!(key, "changed, but takes effect only after a restart");
            }
        }
    }

    fn fingerprint(&mut self) -> u64 {
        let serving = &self.config;
        self.watched.fingerprint(|| serving.references())
    }
}

impl Watched {
    /// A hash of the config file and of every file it names: certificates and keys by content,
    /// tenant files by what their metadata says of their content (reading 100 000 tenant files
    /// at every poll would take most of a core). The files are those the config on disk names
    /// if it can be read (a new config may name files that do not exist yet: their arrival must
    /// count as a change), else `fallback`'s: the serving config's.
    fn fingerprint(&mut self, fallback: impl FnOnce() -> References) -> u64 {
        let mut hasher = DefaultHasher::new();
        // Without a file (a config given in code), only the files the serving config names.
        let references = match self.path.clone() {
            Some(path) => {
                path.hash(&mut hasher);
                let text = match std::fs::read(&path) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        e.kind().hash(&mut hasher);
                        Vec::new()
                    }
                };
                text.hash(&mut hasher);
                self.references_on_disk(&path, &text, fallback)
            }
            None => fallback(),
        };
        let tenant_files = match &references.hosts_dir {
            Some(dir) => config::tenant_files(dir).unwrap_or_else(|e| {
                e.kind().hash(&mut hasher);
                Vec::new()
            }),
            None => Vec::new(),
        };
        for (file, metadata) in &tenant_files {
            file.hash(&mut hasher);
            match metadata {
                Ok(metadata) => hash_identity(metadata, &mut hasher),
                Err(e) => e.kind().hash(&mut hasher),
            }
        }
        for file in &references.certificates {
            file.hash(&mut hasher);
            match std::fs::read(file) {
                Ok(bytes) => bytes.hash(&mut hasher),
                Err(e) => e.kind().hash(&mut hasher),
            }
        }
        hasher.finish()
    }

    /// The files the config text on disk names, parsed again only when the text changed.
    fn references_on_disk(
        &mut self,
        path: &std::path::Path,
        text: &[u8],
        fallback: impl FnOnce() -> References,
    ) -> References {
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        let text_hash = hasher.finish();
        if let Some((hash, references)) = &self.references
            && *hash == text_hash
        {
            return references.clone();
        }
        let references = std::str::from_utf8(text)
            .ok()
            .and_then(|text| config::references_in(path, text))
            .unwrap_or_else(fallback);
        self.references = Some((text_hash, references.clone()));
        references
    }
}

/// What changes whenever a file's content does: a rewrite changes its change time (which no
/// tool can set back) and a replacement, such as Kubernetes' symlink swap, its inode.
#[cfg(unix)]
fn hash_identity(metadata: &std::fs::Metadata, hasher: &mut DefaultHasher) {
    use std::os::unix::fs::MetadataExt;
    (metadata.dev(), metadata.ino(), metadata.len()).hash(hasher);
    (metadata.mtime(), metadata.mtime_nsec()).hash(hasher);
    (metadata.ctime(), metadata.ctime_nsec()).hash(hasher);
}

#[cfg(not(unix))]
fn hash_identity(metadata: &std::fs::Metadata, hasher: &mut DefaultHasher) {
    metadata.len().hash(hasher);
    metadata.modified().ok().hash(hasher);
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

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tracing::field::{Field, Visit};
    use tracing_subscriber::Layer;
    use tracing_subscriber::layer::{Context, SubscriberExt};

    use super::*;

    /// When the reload line is written: whether a new connection gets the new endpoint.
    struct Probe {
        receiver: watch::Receiver<Arc<Endpoint>>,
        replaced: Arc<Endpoint>,
        seen: Arc<Mutex<Option<bool>>>,
    }

    struct Message(String);

    impl Visit for Message {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                self.0 = format!("{value:?}");
            }
        }
    }

    impl<S: tracing::Subscriber> Layer<S> for Probe {
        fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
            let mut message = Message(String::new());
            event.record(&mut message);
            if message.0.starts_with("reloaded:") {
                let new = !Arc::ptr_eq(&self.receiver.borrow(), &self.replaced);
                *self.seen.lock().unwrap() = Some(new);
            }
        }
    }

    #[test]
    fn the_reload_line_is_written_once_new_connections_get_the_new_config() {
        let config = Config::embedded_default().unwrap().config;
        let metrics = Metrics::new();
        let challenges = Challenges::new();
        let generation = Generation::build(config, &metrics, &challenges).unwrap();
        let replaced = generation.endpoint.clone();
        let (endpoint, receiver) = watch::channel(replaced.clone());
        let mut state = State {
            config: generation.config,
            challenges,
            endpoint,
            metrics,
            watched: Watched::before_loading(None).0,
            fingerprint: 0,
            retired: Vec::new(),
        };
        let seen = Arc::new(Mutex::new(None));
        let probe = Probe {
            receiver,
            replaced,
            seen: seen.clone(),
        };
        let subscriber = tracing_subscriber::registry().with(probe);
        tracing::subscriber::with_default(subscriber, || assert!(state.reload("test")));
        assert_eq!(
            *seen.lock().unwrap(),
            Some(true),
            "the line came before the swap"
        );
    }
}
