//! The config file: TOML text in, a validated `Config` (or every problem, with key and line) out.
//!
//! The file is walked key by key from `toml`'s spanned document rather than derived with serde,
//! so every error can name the key, the line and — for an unknown key — the near miss. A
//! `hosts_dir` adds every `*.toml` file in it as more `[[hosts]]` entries (one file per tenant),
//! each walked the same way and named in its own messages.

use std::collections::HashMap;
use std::fmt;
use std::fs::Metadata;
use std::io;
use std::net::SocketAddr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::str::FromStr;
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::csp::{OptIn, OptIns};
use crate::limits::MAX_QUERY_BYTES;
use crate::origin::{Embedder, Origin, OriginPattern, SandboxName, site_guess};
use crate::routing::{is_one_label_below, parent_name};
use crate::sandbox::ViewSandbox;
use crate::signing::PolicyKeys;

/// The development default that `serve` runs without `--config`.
pub const EMBEDDED_DEFAULT: &str = include_str!("../config/default.toml");

/// Where the embedded default's demo host page listens. Never bound when a file is given.
const DEMO_LISTEN: &str = "127.0.0.1:8080";

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The public listener.
    pub listen: SocketAddr,
    /// `/livez`, `/readyz`, `/metrics`; `None` disables the admin listener.
    pub(crate) admin_listen: Option<SocketAddr>,
    /// `None`: plain HTTP (behind a TLS-terminating load balancer, or local development).
    pub tls: Option<TlsFiles>,
    pub hosts: Vec<HostEntry>,
    /// A folder whose `*.toml` files hold more `[[hosts]]` entries, one file per tenant.
    pub(crate) hosts_dir: Option<PathBuf>,
    pub limits: Limits,
    /// Only the embedded default serves the demo host page.
    pub demo_listen: Option<SocketAddr>,
    /// How often the config and certificate files are checked for changes; zero: never.
    pub(crate) watch_interval: Duration,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TlsFiles {
    /// The first pair is the default certificate; the rest are chosen by SNI.
    pub certificates: Vec<CertFiles>,
    /// `Strict-Transport-Security: max-age`; zero leaves the header out.
    pub hsts_max_age: Duration,
    /// The oldest TLS version offered: 1.2 (Mozilla "intermediate") or 1.3 ("modern").
    pub(crate) min_version: TlsVersion,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum TlsVersion {
    #[default]
    Tls12,
    Tls13,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CertFiles {
    pub cert: PathBuf,
    pub key: PathBuf,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostEntry {
    /// The host page's origin, or a pattern of them (preview and staging deployments).
    pub origin: Embedder,
    pub(crate) sandbox: SandboxName,
    pub per_server_subdomains: bool,
    /// How long browsers and shared caches may keep this host's pages; zero: `no-store`.
    /// The host's own `cache_max_age`, or the file's.
    pub cache_max_age: Duration,
    /// What the operator adds to this host's view policies (`view_opt_ins`); none by default.
    pub view_opt_ins: OptIns,
    /// Which messages the relay forwards between this host and its views (`relay_messages`).
    pub relay_messages: RelayMessages,
    /// The sandbox tokens this host's views may ever get (`view_sandbox`).
    pub view_sandbox: ViewSandbox,
    /// The keys a `?csp=` must be signed with (`policy_keys`); `None`: policies are unsigned.
    pub policy_keys: Option<PolicyKeys>,
}

/// Which messages the relay forwards between a host and its view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RelayMessages {
    /// JSON-RPC 2.0 objects only, as the spec says: anything else is dropped with a warning.
    #[default]
    JsonRpc,
    /// Any message, unchanged: for hosts whose views speak a wire of their own. Still pinned
    /// to the host's origin and the one view, and `ui/notifications/sandbox-*` still stays
    /// between host and proxy.
    Any,
}

impl RelayMessages {
    /// The name the config and the page use.
    pub fn name(self) -> &'static str {
        match self {
            RelayMessages::JsonRpc => "json-rpc",
            RelayMessages::Any => "any",
        }
    }
}

/// Every limit has a default safe for a service on the internet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    pub handshake_timeout: Duration,
    pub header_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub(crate) shutdown_grace: Duration,
    pub(crate) max_header_bytes: usize,
    pub max_query_bytes: usize,
    pub(crate) h2_max_concurrent_streams: u32,
    /// Answer bytes one connection may hold that its client has not read yet.
    pub max_unsent_bytes: usize,
    /// Bytes of rendered pages kept for reuse, across all hosts.
    pub page_cache_bytes: usize,
    /// Cookie bytes an HTTP/2 request may carry and still get its answer (which clears them).
    pub h2_cookie_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: 1024,
            handshake_timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            shutdown_grace: Duration::from_secs(30),
            max_header_bytes: 16 * 1024,
            max_query_bytes: 16 * 1024,
            h2_max_concurrent_streams: 32,
            max_unsent_bytes: 256 * 1024,
            page_cache_bytes: 16 * 1024 * 1024,
            // Chromium's cap on the partitioned cookies a cross-site frame can set (10 KiB, 180
            // cookies) counted as HTTP/2 does (each cookie a field, plus 32 bytes): ≈ 17 KiB.
            h2_cookie_bytes: 32 * 1024,
        }
    }
}

const DEFAULT_HSTS_MAX_AGE: Duration = Duration::from_secs(365 * 24 * 60 * 60);
const DEFAULT_WATCH_INTERVAL: Duration = Duration::from_secs(5);
/// The longest deadline or interval: one day.
const MAX_TIMER: Duration = Duration::from_secs(24 * 60 * 60);
/// The longest a cache may keep a page: a host origin removed from the config can still frame
/// a cached page this long.
const MAX_CACHE_MAX_AGE: Duration = MAX_TIMER;
/// The longest HSTS max-age: two years.
const MAX_HSTS_MAX_AGE: Duration = Duration::from_secs(2 * 365 * 24 * 60 * 60);

/// One problem in a config file, located by key and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub(crate) file: String,
    /// `None` for a problem with the whole file, such as one that cannot be read.
    pub(crate) line: Option<usize>,
    pub(crate) key: String,
    pub(crate) message: String,
}

impl Problem {
    /// The file's name with control characters escaped.
    pub(crate) fn file_shown(&self) -> String {
        escape_controls(&self.file)
    }

    /// The key with control characters escaped.
    pub(crate) fn key_shown(&self) -> String {
        escape_controls(&self.key)
    }

    /// The message with control characters escaped.
    pub(crate) fn message_shown(&self) -> String {
        escape_controls(&self.message)
    }
}

/// `text` with every control character escaped (`\n`, `\u{1b}`). SECURITY: file names, keys
/// and values may come from tenant tooling; a newline or a terminal escape in one must not
/// forge a line of `check`'s output or of a text log, nor drive the operator's terminal. Every
/// problem is shown through this, so no message can forget it.
fn escape_controls(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file_shown())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if !self.key.is_empty() {
            write!(f, "{} ", self.key_shown())?;
        }
        f.write_str(&self.message_shown())
    }
}

/// Every error found in a file; the config is refused as a whole.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    pub problems: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}

/// A config that loaded, with the warnings worth showing an operator.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub config: Config,
    pub warnings: Vec<Problem>,
}

impl Config {
    /// Reads and validates a config file and its tenant files. Relative paths are taken from
    /// the file's directory, so a config and what it names can move together.
    pub fn load(path: &Path) -> Result<Loaded, ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            problems: vec![Problem {
                file: name.clone(),
                line: None,
                key: String::new(),
                message: format!("cannot read the config file: {e}"),
            }],
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        Self::parse(&name, &text, base)
    }

    /// The other files this config reads, as a reload watches them.
    pub(crate) fn references(&self) -> References {
        References {
            certificates: self
                .tls
                .iter()
                .flat_map(|tls| tls.certificates.iter())
                .flat_map(|pair| [pair.cert.clone(), pair.key.clone()])
                .collect(),
            hosts_dir: self.hosts_dir.clone(),
        }
    }

    /// The development default: proxy on `localhost:8081` for a host on `localhost:8080`,
    /// and the demo host page.
    pub fn embedded_default() -> Result<Loaded, ConfigError> {
        let mut loaded = Self::parse("<embedded default>", EMBEDDED_DEFAULT, Path::new("."))?;
        loaded.config.demo_listen = DEMO_LISTEN.parse().ok();
        Ok(loaded)
    }

    /// Validates config text, and the tenant files of its `hosts_dir`. `file` names it in
    /// messages; `base` resolves relative paths.
    pub fn parse(file: &str, text: &str, base: &Path) -> Result<Loaded, ConfigError> {
        let mut walker = Walker::new(file, text, base);
        let config = walker
            .document()
            .and_then(|doc| walker.config(doc.get_ref()));
        // Problems in file order (the main file, then the tenant files by name), each by line.
        let ranks: HashMap<String, usize> = walker
            .files
            .iter()
            .enumerate()
            .map(|(rank, file)| (file.clone(), rank))
            .collect();
        let rank = |p: &Problem| (ranks.get(&p.file).copied(), p.line);
        walker.problems.sort_by_cached_key(rank);
        walker.warnings.sort_by_cached_key(rank);
        match config {
            Some(config) if walker.problems.is_empty() => Ok(Loaded {
                config,
                warnings: walker.warnings,
            }),
            _ => Err(ConfigError {
                problems: walker.problems,
            }),
        }
    }
}

/// The files a config names besides itself: what a reload must watch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct References {
    /// Every certificate and key file.
    pub(crate) certificates: Vec<PathBuf>,
    pub(crate) hosts_dir: Option<PathBuf>,
}

/// The files config text at `path` names, read without validating it: a reload looks at
/// these to see what changed, and the reload itself then validates everything. `None` if the
/// text is not TOML.
pub(crate) fn references_in(path: &Path, text: &str) -> Option<References> {
    let base = path.parent().unwrap_or(Path::new("."));
    let document = DeTable::parse(text).ok()?;
    let doc = document.get_ref();
    let string_at = |table: &Table<'_>, key: &str| match table.get(key).map(|v| v.get_ref()) {
        Some(DeValue::String(s)) if !s.is_empty() => Some(base.join(s.as_ref())),
        _ => None,
    };
    let mut certificates = Vec::new();
    for tls in tables_in(doc.get("tls")) {
        for pair in std::iter::once(tls).chain(tables_in(tls.get("extra"))) {
            certificates.extend(string_at(pair, "cert"));
            certificates.extend(string_at(pair, "key"));
        }
    }
    Some(References {
        certificates,
        hosts_dir: string_at(doc, "hosts_dir"),
    })
}

/// A table, or each table of an array of them; nothing for any other value.
fn tables_in<'v, 'i>(value: Option<&'v Value<'i>>) -> Vec<&'v Table<'i>> {
    match value.map(|v| v.get_ref()) {
        Some(DeValue::Table(table)) => vec![table],
        Some(DeValue::Array(items)) => items
            .iter()
            .filter_map(|item| match item.get_ref() {
                DeValue::Table(table) => Some(table),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The tenant files of a `hosts_dir`: every `*.toml` entry directly in it, by name, with its
/// metadata through symlinks (or why there is none: a dangling symlink, a file it may not
/// stat). Hidden names are skipped, so editors' temporary files and Kubernetes' `..data`
/// folder are not read twice. An entry that vanished since the folder was listed is not there.
pub(crate) fn tenant_files(dir: &Path) -> io::Result<Vec<(PathBuf, io::Result<Metadata>)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().map(|n| n.to_string_lossy());
        let Some(name) = name else { continue };
        if name.starts_with('.') || !name.ends_with(".toml") {
            continue;
        }
        let metadata = std::fs::metadata(&path);
        if metadata.is_err() && std::fs::symlink_metadata(&path).is_err() {
            continue;
        }
        files.push((path, metadata));
    }
    files.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(files)
}

/// A host entry and where it was written, for messages about it and about the entries it
/// meets.
struct Placed {
    entry: HostEntry,
    file: Rc<str>,
    /// Its index among the file's `[[hosts]]`.
    index: usize,
    /// The line of its `sandbox` (of the entry, if it has none).
    line: usize,
}

impl Placed {
    /// How a message about `from` names this entry: `hosts[2]`, and its file if another.
    fn named_from(&self, from: &Placed) -> String {
        if self.file == from.file {
            format!("hosts[{}]", self.index)
        } else {
            format!("hosts[{}] in {}", self.index, self.file)
        }
    }
}

type Table<'i> = DeTable<'i>;
type Value<'i> = Spanned<DeValue<'i>>;

struct Walker<'a> {
    file: &'a str,
    text: &'a str,
    base: &'a Path,
    problems: Vec<Problem>,
    warnings: Vec<Problem>,
    /// Every file read so far, the main one first: messages are sorted in this order.
    files: Vec<String>,
    /// Where each line after the first starts: every entry's line is looked up, so counting
    /// from the start of the text each time would grow with the square of its length.
    line_starts: Vec<usize>,
}

impl<'a> Walker<'a> {
    fn new(file: &'a str, text: &'a str, base: &'a Path) -> Self {
        Walker {
            file,
            text,
            base,
            problems: Vec::new(),
            warnings: Vec::new(),
            files: vec![file.to_owned()],
            line_starts: text
                .bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(at, _)| at + 1)
                .collect(),
        }
    }

    /// The text as a TOML document, or the problem that it is not one.
    fn document(&mut self) -> Option<Spanned<Table<'a>>> {
        match DeTable::parse(self.text) {
            Ok(document) => Some(document),
            Err(e) => {
                let line = e.span().map_or(1, |span| self.line(&span));
                self.problem(line, "", format!("not valid TOML: {}", e.message().trim()));
                None
            }
        }
    }

    /// A problem in another file than the one being walked.
    fn problem_in(&mut self, file: &str, line: usize, key: &str, message: String) {
        self.problems.push(Problem {
            file: file.to_owned(),
            line: Some(line),
            key: key.to_owned(),
            message,
        });
    }

    fn line(&self, span: &Range<usize>) -> usize {
        // The lines that start at or before the span, plus the first.
        self.line_starts
            .partition_point(|&start| start <= span.start)
            + 1
    }

    fn problem(&mut self, line: usize, key: &str, message: String) {
        self.problems.push(Problem {
            file: self.file.to_owned(),
            line: Some(line),
            key: key.to_owned(),
            message,
        });
    }

    fn error_at(&mut self, value: &Value<'_>, key: &str, message: String) {
        let line = self.line(&value.span());
        self.problem(line, key, message);
    }

    fn warning_in(&mut self, file: &str, line: Option<usize>, key: &str, message: String) {
        self.warnings.push(Problem {
            file: file.to_owned(),
            line,
            key: key.to_owned(),
            message,
        });
    }

    /// Reports every key of `table` not in `known`, with the closest known key if one is near.
    fn reject_unknown_keys(&mut self, table: &Table<'_>, prefix: &str, known: &[&str]) {
        for (key, _) in table.iter() {
            let name: &str = key.get_ref();
            if known.contains(&name) {
                continue;
            }
            let line = self.line(&key.span());
            let hint = match near_miss(name, known) {
                Some(near) => format!(" — did you mean \"{near}\"?"),
                None => format!(" (known keys: {})", known.join(", ")),
            };
            self.problem(
                line,
                &join(prefix, name),
                format!("is not a known key{hint}"),
            );
        }
    }

    fn config(&mut self, doc: &Table<'_>) -> Option<Config> {
        let known = [
            "listen",
            "admin_listen",
            "watch_interval",
            "cache_max_age",
            "tls",
            "hosts",
            "hosts_dir",
            "limits",
        ];
        self.reject_unknown_keys(doc, "", &known);
        let listen = match doc.get("listen") {
            Some(value) => self.socket_addr(value, "listen"),
            None => {
                self.problem(
                    1,
                    "listen",
                    "is missing (for example listen = \"0.0.0.0:8443\")".into(),
                );
                None
            }
        };
        let admin_listen = doc
            .get("admin_listen")
            .and_then(|v| self.socket_addr(v, "admin_listen"));
        let tls = match doc.get("tls") {
            Some(value) => self.tls(value),
            None => None,
        };
        let limits = match doc.get("limits") {
            Some(value) => self.limits(value),
            None => Limits::default(),
        };
        let watch_interval = match doc.get("watch_interval") {
            Some(value) => self.duration(value, "watch_interval", true, MAX_TIMER),
            None => Some(DEFAULT_WATCH_INTERVAL),
        };
        let cache_max_age = match doc.get("cache_max_age") {
            Some(value) => self.cache_max_age(value, "cache_max_age"),
            None => Some(Duration::ZERO),
        };
        let default_port = if doc.contains_key("tls") { 443 } else { 80 };
        let cache_max_age = cache_max_age.unwrap_or_default();
        let hosts_dir = doc.get("hosts_dir").map(|v| (v, self.path(v, "hosts_dir")));
        let file: Rc<str> = Rc::from(self.file);
        let mut placed = match doc.get("hosts") {
            Some(value) => self.host_entries(value, &file, cache_max_age),
            None => Vec::new(),
        };
        let problems_before = self.problems.len();
        if let Some((at, Some(dir))) = &hosts_dir {
            placed.extend(self.tenant_hosts(dir, at, cache_max_age));
        }
        // For tenant files, only when nothing else explains it (an unreadable folder, an entry
        // with an error).
        let tenants_explained = self.problems.len() > problems_before;
        if placed.is_empty() && !doc.contains_key("hosts") && !tenants_explained {
            match &hosts_dir {
                None => self.problem(
                    1,
                    "hosts",
                    "is missing: add at least one [[hosts]] entry".into(),
                ),
                Some((at, Some(dir))) => {
                    let message = format!(
                        "\"{}\" has no [[hosts]] entry in any *.toml file, and neither has this file: add at least one",
                        dir.display()
                    );
                    self.error_at(at, "hosts_dir", message);
                }
                Some((_, None)) => {}
            }
        }
        self.cross_check_hosts(&placed, default_port);
        Some(Config {
            listen: listen?,
            admin_listen,
            tls,
            hosts: placed.into_iter().map(|p| p.entry).collect(),
            hosts_dir: hosts_dir.and_then(|(_, dir)| dir),
            limits,
            demo_listen: None,
            watch_interval: watch_interval?,
        })
    }

    fn table<'v, 'i>(&mut self, value: &'v Value<'i>, key: &str) -> Option<&'v Table<'i>> {
        match value.get_ref() {
            DeValue::Table(table) => Some(table),
            other => {
                let found = other.type_str();
                self.error_at(value, key, format!("must be a table, not {found}"));
                None
            }
        }
    }

    fn string<'v>(&mut self, value: &'v Value<'_>, key: &str) -> Option<&'v str> {
        match value.get_ref() {
            DeValue::String(s) => Some(s.as_ref()),
            other => {
                let found = other.type_str();
                self.error_at(value, key, format!("must be a string, not {found}"));
                None
            }
        }
    }

    fn socket_addr(&mut self, value: &Value<'_>, key: &str) -> Option<SocketAddr> {
        let raw = self.string(value, key)?;
        match raw.parse() {
            Ok(addr) => Some(addr),
            Err(_) => {
                let message = format!(
                    "\"{raw}\" is not ip:port (for example \"0.0.0.0:8443\" or \"[::]:8443\")"
                );
                self.error_at(value, key, message);
                None
            }
        }
    }

    fn path(&mut self, value: &Value<'_>, key: &str) -> Option<PathBuf> {
        let raw = self.string(value, key)?;
        if raw.is_empty() {
            self.error_at(value, key, "must name a file".into());
            return None;
        }
        Some(self.base.join(raw))
    }

    fn cert_files(&mut self, table: &Table<'_>, at: &Value<'_>, prefix: &str) -> Option<CertFiles> {
        let mut pair = [None, None];
        for (slot, name) in pair.iter_mut().zip(["cert", "key"]) {
            let key = join(prefix, name);
            match table.get(name) {
                Some(value) => *slot = self.path(value, &key),
                None => self.error_at(at, &key, "is missing (a PEM file path)".into()),
            }
        }
        let [cert, key] = pair;
        Some(CertFiles {
            cert: cert?,
            key: key?,
        })
    }

    fn tls(&mut self, value: &Value<'_>) -> Option<TlsFiles> {
        let table = self.table(value, "tls")?;
        self.reject_unknown_keys(
            table,
            "tls",
            &["cert", "key", "extra", "hsts_max_age", "min_version"],
        );
        let mut certificates = vec![self.cert_files(table, value, "tls")];
        if let Some(extra) = table.get("extra") {
            match extra.get_ref() {
                DeValue::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let prefix = format!("tls.extra[{i}]");
                        if let Some(t) = self.table(item, &prefix) {
                            self.reject_unknown_keys(t, &prefix, &["cert", "key"]);
                            certificates.push(self.cert_files(t, item, &prefix));
                        }
                    }
                }
                other => {
                    let found = other.type_str();
                    let message =
                        format!("must be an array of tables ([[tls.extra]]), not {found}");
                    self.error_at(extra, "tls.extra", message);
                }
            }
        }
        let hsts_max_age = match table.get("hsts_max_age") {
            Some(v) => self.duration(v, "tls.hsts_max_age", true, MAX_HSTS_MAX_AGE)?,
            None => DEFAULT_HSTS_MAX_AGE,
        };
        let min_version = match table.get("min_version") {
            None => TlsVersion::default(),
            Some(v) => match self.string(v, "tls.min_version")? {
                "1.2" => TlsVersion::Tls12,
                "1.3" => TlsVersion::Tls13,
                other => {
                    let message = format!(
                        "\"{other}\" is not a TLS version this service offers: \"1.2\" or \"1.3\""
                    );
                    self.error_at(v, "tls.min_version", message);
                    return None;
                }
            },
        };
        Some(TlsFiles {
            certificates: certificates.into_iter().collect::<Option<_>>()?,
            hsts_max_age,
            min_version,
        })
    }

    fn limits(&mut self, value: &Value<'_>) -> Limits {
        let mut limits = Limits::default();
        let Some(table) = self.table(value, "limits") else {
            return limits;
        };
        let durations: [(&str, &mut Duration); 4] = [
            ("handshake_timeout", &mut limits.handshake_timeout),
            ("header_read_timeout", &mut limits.header_read_timeout),
            ("idle_timeout", &mut limits.idle_timeout),
            ("shutdown_grace", &mut limits.shutdown_grace),
        ];
        let mut known: Vec<&str> = durations.iter().map(|(name, _)| *name).collect();
        for (name, slot) in durations {
            if let Some(v) = table.get(name)
                && let Some(d) = self.duration(v, &join("limits", name), false, MAX_TIMER)
            {
                *slot = d;
            }
        }
        let mut streams = limits.h2_max_concurrent_streams as usize;
        let counts: [(&str, &mut usize, usize); 7] = [
            ("max_connections", &mut limits.max_connections, 1 << 24),
            ("max_header_bytes", &mut limits.max_header_bytes, 1 << 20),
            (
                "max_query_bytes",
                &mut limits.max_query_bytes,
                MAX_QUERY_BYTES,
            ),
            ("h2_max_concurrent_streams", &mut streams, 10_000),
            ("max_unsent_bytes", &mut limits.max_unsent_bytes, 1 << 30),
            ("page_cache_bytes", &mut limits.page_cache_bytes, 1 << 34),
            ("h2_cookie_bytes", &mut limits.h2_cookie_bytes, 1 << 24),
        ];
        known.extend(counts.iter().map(|(name, _, _)| *name));
        for (name, slot, max) in counts {
            if let Some(v) = table.get(name)
                && let Some(n) = self.count(v, &join("limits", name), max)
            {
                *slot = n;
            }
        }
        limits.h2_max_concurrent_streams = u32::try_from(streams).unwrap_or(u32::MAX);
        self.reject_unknown_keys(table, "limits", &known);
        limits
    }

    fn count(&mut self, value: &Value<'_>, key: &str, max: usize) -> Option<usize> {
        let parsed = match value.get_ref() {
            DeValue::Integer(i) => usize::from_str_radix(i.as_str(), i.radix()).ok(),
            _ => None,
        };
        match parsed {
            Some(n) if (1..=max).contains(&n) => Some(n),
            _ => {
                self.error_at(
                    value,
                    key,
                    format!("must be a whole number from 1 to {max}"),
                );
                None
            }
        }
    }

    /// A duration up to `max`: deadlines and intervals become timers, which a huge value would
    /// overflow; `max` is far above any useful setting.
    fn duration(
        &mut self,
        value: &Value<'_>,
        key: &str,
        zero_ok: bool,
        max: Duration,
    ) -> Option<Duration> {
        let raw = self.string(value, key)?;
        match parse_duration(raw) {
            Some(d) if d > max => {
                let message = format!(
                    "\"{raw}\" is longer than the most this key takes, {}s",
                    max.as_secs()
                );
                self.error_at(value, key, message);
                None
            }
            Some(d) if zero_ok || !d.is_zero() => Some(d),
            _ => {
                let message = format!(
                    "\"{raw}\" is not a duration (a whole number with ms, s, m, h or d, like \"10s\")"
                );
                self.error_at(value, key, message);
                None
            }
        }
    }

    /// A page's cache lifetime: whole seconds, since `max-age` counts in them.
    fn cache_max_age(&mut self, value: &Value<'_>, key: &str) -> Option<Duration> {
        let age = self.duration(value, key, true, MAX_CACHE_MAX_AGE)?;
        if age.subsec_nanos() != 0 {
            let message =
                "must be whole seconds (Cache-Control: max-age counts in seconds), like \"10m\""
                    .to_owned();
            self.error_at(value, key, message);
            return None;
        }
        Some(age)
    }

    /// The `[[hosts]]` entries of the file being walked; `file` is its name, shared by them.
    fn host_entries(
        &mut self,
        value: &Value<'_>,
        file: &Rc<str>,
        cache_max_age: Duration,
    ) -> Vec<Placed> {
        let items = match value.get_ref() {
            DeValue::Array(items) if !items.is_empty() => items,
            other => {
                let found = other.type_str();
                let message = format!("must be one or more [[hosts]] tables, not {found}");
                self.error_at(value, "hosts", message);
                return Vec::new();
            }
        };
        let mut placed = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            if let Some(entry) = self.host(item, index, cache_max_age) {
                let line = self.line(&sandbox_value(item).span());
                let file = file.clone();
                placed.push(Placed {
                    entry,
                    file,
                    index,
                    line,
                });
            }
        }
        placed
    }

    /// The entries of every tenant file in `dir`. A file that cannot be read, or holds
    /// anything but `[[hosts]]`, is a problem of the whole config: one bad tenant file refuses
    /// the load (or the reload, and the old config keeps serving).
    fn tenant_hosts(&mut self, dir: &Path, at: &Value<'_>, cache_max_age: Duration) -> Vec<Placed> {
        let files = match tenant_files(dir) {
            Ok(files) => files,
            Err(e) => {
                let message = format!("cannot read the folder \"{}\": {e}", dir.display());
                self.error_at(at, "hosts_dir", message);
                return Vec::new();
            }
        };
        // `hosts_dir` may name the main file's own folder: the main file is not a tenant file.
        let main_file = std::fs::canonicalize(self.file).ok();
        let mut placed = Vec::new();
        for (path, metadata) in files {
            if main_file.is_some() && std::fs::canonicalize(&path).ok() == main_file {
                continue;
            }
            let name = path.display().to_string();
            self.files.push(name.clone());
            let whole_file = |message: String| Problem {
                file: name.clone(),
                line: None,
                key: String::new(),
                message,
            };
            match &metadata {
                Ok(m) if !m.is_file() => {
                    let message = "is not a regular file: skipped".to_owned();
                    self.warnings.push(whole_file(message));
                    continue;
                }
                Ok(_) => {}
                Err(e) => {
                    self.problems
                        .push(whole_file(format!("cannot read the tenant file: {e}")));
                    continue;
                }
            }
            if path.file_name().is_none_or(|n| n.to_str().is_none()) {
                let message = "has a name that is not UTF-8: rename it".to_owned();
                self.problems.push(whole_file(message));
                continue;
            }
            let text = match std::fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) => {
                    self.problems
                        .push(whole_file(format!("cannot read the tenant file: {e}")));
                    continue;
                }
            };
            let mut tenant = Walker::new(&name, &text, self.base);
            if let Some(doc) = tenant.document() {
                placed.extend(tenant.tenant_document(doc.get_ref(), cache_max_age));
            }
            self.problems.append(&mut tenant.problems);
            self.warnings.append(&mut tenant.warnings);
        }
        placed
    }

    /// A tenant file: `[[hosts]]` entries and nothing else.
    fn tenant_document(&mut self, doc: &Table<'_>, cache_max_age: Duration) -> Vec<Placed> {
        for (key, _) in doc.iter() {
            let name: &str = key.get_ref();
            if name != "hosts" {
                let line = self.line(&key.span());
                let message = "is not allowed in a tenant file: it holds [[hosts]] entries only, and everything else belongs in the main config".to_owned();
                self.problem(line, name, message);
            }
        }
        let file: Rc<str> = Rc::from(self.file);
        match doc.get("hosts") {
            Some(value) => self.host_entries(value, &file, cache_max_age),
            None => {
                let message = "has no [[hosts]] entry: it adds nothing".to_owned();
                self.warning_in(self.file, None, "", message);
                Vec::new()
            }
        }
    }

    fn host(
        &mut self,
        value: &Value<'_>,
        index: usize,
        cache_max_age: Duration,
    ) -> Option<HostEntry> {
        let prefix = format!("hosts[{index}]");
        let table = self.table(value, &prefix)?;
        self.reject_unknown_keys(
            table,
            &prefix,
            &[
                "origin",
                "sandbox",
                "per_server_subdomains",
                "cache_max_age",
                "view_opt_ins",
                "relay_messages",
                "view_sandbox",
                "policy_keys",
            ],
        );
        let cache_max_age = match table.get("cache_max_age") {
            Some(v) => self.cache_max_age(v, &join(&prefix, "cache_max_age")),
            None => Some(cache_max_age),
        };
        let origin = self.parsed::<Embedder>(table, value, &prefix, "origin");
        let sandbox = self.parsed::<SandboxName>(table, value, &prefix, "sandbox");
        let per_server_subdomains = match table.get("per_server_subdomains") {
            None => false,
            Some(v) => match v.get_ref() {
                DeValue::Boolean(b) => *b,
                other => {
                    let found = other.type_str();
                    let key = join(&prefix, "per_server_subdomains");
                    self.error_at(v, &key, format!("must be true or false, not {found}"));
                    false
                }
            },
        };
        let view_opt_ins = match table.get("view_opt_ins") {
            None => Some(OptIns::default()),
            Some(v) => self.opt_ins(v, &join(&prefix, "view_opt_ins")),
        };
        let relay_messages = match table.get("relay_messages") {
            None => Some(RelayMessages::default()),
            Some(v) => self.relay_messages(v, &join(&prefix, "relay_messages")),
        };
        let view_sandbox = match table.get("view_sandbox") {
            None => Some(ViewSandbox::default()),
            Some(v) => self.view_sandbox(v, &join(&prefix, "view_sandbox")),
        };
        let policy_keys = match table.get("policy_keys") {
            None => Some(None),
            Some(v) => self.policy_keys(v, &join(&prefix, "policy_keys")).map(Some),
        };
        Some(HostEntry {
            origin: origin?,
            sandbox: sandbox?,
            per_server_subdomains,
            cache_max_age: cache_max_age?,
            view_opt_ins: view_opt_ins?,
            relay_messages: relay_messages?,
            view_sandbox: view_sandbox?,
            policy_keys: policy_keys?,
        })
    }

    fn relay_messages(&mut self, value: &Value<'_>, key: &str) -> Option<RelayMessages> {
        match self.string(value, key)? {
            "json-rpc" => Some(RelayMessages::JsonRpc),
            "any" => Some(RelayMessages::Any),
            other => {
                let message = format!(
                    "\"{other}\" is not a choice: \"json-rpc\" (the spec's, the default) or \"any\" (a host whose views speak a wire of their own)"
                );
                self.error_at(value, key, message);
                None
            }
        }
    }

    /// A host's view opt-ins: a list of their names, each known.
    fn opt_ins(&mut self, value: &Value<'_>, key: &str) -> Option<OptIns> {
        let opt_ins = self.names::<OptIn>(value, key, "view opt-ins, like [\"worker-blob\"]")?;
        Some(OptIns::new(opt_ins))
    }

    /// The sandbox tokens a host's views may get: a list of their names, each known, with
    /// `allow-scripts` among them.
    fn view_sandbox(&mut self, value: &Value<'_>, key: &str) -> Option<ViewSandbox> {
        let what = "sandbox tokens, like [\"allow-scripts\", \"allow-forms\"]";
        self.names_into(value, key, what, ViewSandbox::new)
    }

    /// A host's signing keys: one or two, each `env:NAME` or hex.
    fn policy_keys(&mut self, value: &Value<'_>, key: &str) -> Option<PolicyKeys> {
        let what = "keys, like [\"env:CHAT_POLICY_KEY\"]";
        self.names_into(value, key, what, PolicyKeys::new)
    }

    /// A list of names, each parsed, then made into one value by a rule over them all.
    fn names_into<T: FromStr<Err = String>, S>(
        &mut self,
        value: &Value<'_>,
        key: &str,
        what: &str,
        build: impl FnOnce(Vec<T>) -> Result<S, String>,
    ) -> Option<S> {
        let names = self.names::<T>(value, key, what)?;
        match build(names) {
            Ok(built) => Some(built),
            Err(message) => {
                self.error_at(value, key, message);
                None
            }
        }
    }

    /// A list of names, each parsed; every one that is not known is its own error.
    fn names<T: FromStr<Err = String>>(
        &mut self,
        value: &Value<'_>,
        key: &str,
        what: &str,
    ) -> Option<Vec<T>> {
        let DeValue::Array(items) = value.get_ref() else {
            let found = value.get_ref().type_str();
            self.error_at(value, key, format!("must be a list of {what}, not {found}"));
            return None;
        };
        let mut parsed = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let name = match item.get_ref() {
                DeValue::String(name) => name.parse::<T>(),
                other => Err(format!("must be a string, not {}", other.type_str())),
            };
            match name {
                Ok(name) => parsed.push(name),
                Err(message) => {
                    self.error_at(item, &format!("{key}[{i}]"), message);
                    ok = false;
                }
            }
        }
        ok.then_some(parsed)
    }

    fn parsed<T>(
        &mut self,
        table: &Table<'_>,
        at: &Value<'_>,
        prefix: &str,
        name: &str,
    ) -> Option<T>
    where
        T: std::str::FromStr,
        T::Err: fmt::Display,
    {
        let key = join(prefix, name);
        let Some(value) = table.get(name) else {
            self.error_at(at, &key, "is missing".into());
            return None;
        };
        let raw = self.string(value, &key)?;
        match raw.parse() {
            Ok(parsed) => Some(parsed),
            Err(e) => {
                self.error_at(value, &key, format!("\"{raw}\": {e}"));
                None
            }
        }
    }

    /// Rules that relate entries: unique names, no sandbox on a host's own origin, and a
    /// warning when the two share a site. Each is a lookup in a map built once, so the cost
    /// grows with the number of entries rather than its square (platforms run one entry per
    /// tenant). A problem is reported at the later entry, naming the earliest one it meets.
    fn cross_check_hosts(&mut self, hosts: &[Placed], default_port: u16) {
        let authorities: Vec<String> = hosts
            .iter()
            .map(|placed| placed.entry.sandbox.authority(default_port))
            .collect();
        let embedders = EmbedderIndex::new(hosts);
        // The earlier entries: by name, the per-server ones by name, and by the name one label up.
        let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(hosts.len());
        let mut per_server: HashMap<&str, usize> = HashMap::new();
        let mut by_parent: HashMap<&str, usize> = HashMap::with_capacity(hosts.len());
        for (n, placed) in hosts.iter().enumerate() {
            let entry = &placed.entry;
            let authority = authorities[n].as_str();
            let key = format!("hosts[{}].sandbox", placed.index);
            let parent = parent_name(authority);
            if let Some(&m) = by_name.get(authority) {
                let message = format!(
                    "\"{authority}\" is already the sandbox of {}",
                    hosts[m].named_from(placed)
                );
                self.problem_in(&placed.file, placed.line, &key, message);
            } else {
                let overlapping = parent
                    .and_then(|parent| per_server.get(parent))
                    .or_else(|| {
                        by_parent
                            .get(authority)
                            .filter(|_| entry.per_server_subdomains)
                    });
                if let Some(&m) = overlapping {
                    let message = format!(
                        "\"{authority}\" overlaps the sandbox \"{}\" of {} through per-server subdomains: a request could mean either",
                        authorities[m],
                        hosts[m].named_from(placed)
                    );
                    self.problem_in(&placed.file, placed.line, &key, message);
                }
            }
            by_name.entry(authority).or_insert(n);
            if entry.per_server_subdomains {
                per_server.entry(authority).or_insert(n);
            }
            if let Some(parent) = parent {
                by_parent.entry(parent).or_insert(n);
            }
            self.check_sandbox_against_embedders(placed, &embedders, &key);
        }
    }

    /// The sandbox of `entry` against every host origin and pattern that could be its origin
    /// or share its site, found by lookups. A same-site warning names the first such host and
    /// counts the others, so that a thousand tenants on one site make one line, not a thousand.
    fn check_sandbox_against_embedders(
        &mut self,
        placed: &Placed,
        embedders: &EmbedderIndex<'_>,
        key: &str,
    ) {
        let entry = &placed.entry;
        let host = entry.sandbox.host();
        let mut candidates: Vec<&Origin> = embedders.by_host.get(host).cloned().unwrap_or_default();
        if entry.per_server_subdomains
            && let Some(below) = embedders.by_parent_host.get(host)
        {
            candidates.extend(below);
        }
        for origin in candidates {
            if let Some(message) = same_origin_as(entry, origin) {
                self.problem_in(&placed.file, placed.line, key, message);
            }
        }
        let mut patterns: Vec<&OriginPattern> = parent_name(host)
            .and_then(|parent| embedders.patterns_by_suffix.get(parent))
            .cloned()
            .unwrap_or_default();
        if entry.per_server_subdomains
            && let Some(at_name) = embedders.patterns_by_suffix.get(host)
        {
            patterns.extend(at_name);
        }
        for pattern in patterns {
            if let Some(message) = one_of_pattern(entry, pattern) {
                self.problem_in(&placed.file, placed.line, key, message);
            }
        }
        let site = site_guess(host);
        // Not warned about: a loopback host for a loopback sandbox, and a host whose origin
        // this sandbox was just refused for.
        let loopback = entry.sandbox.is_loopback();
        let others: Vec<&str> = embedders
            .by_site
            .get(site)
            .into_iter()
            .flatten()
            .filter(|e| !(loopback && e.loopback))
            .filter(|e| !refused(entry, e.embedder))
            .map(|e| e.shown.as_str())
            .collect();
        if let Some(first) = others.first() {
            let more = match others.len() - 1 {
                0 => String::new(),
                n => format!(" (and {n} more host(s) on it)"),
            };
            let message = format!(
                "\"{}\" is on the same site as the host {first}{more} ({site}): browsers share SameSite cookies and some storage partitions within a site; a sandbox on its own registrable domain isolates views from the host completely",
                entry.sandbox
            );
            self.warning_in(&placed.file, Some(placed.line), key, message);
        }
    }
}

/// Why `entry`'s sandbox would serve the same origin as `origin`, if it would.
fn same_origin_as(entry: &HostEntry, origin: &Origin) -> Option<String> {
    // The scheme browsers see is not known here: without [tls] a load balancer may still
    // serve the sandbox over https. So only ports are compared: no port on either side
    // means each is on its scheme's default, which is the same origin if the schemes agree.
    let same_port = match entry.sandbox.port() {
        Some(port) => {
            let default = match origin.scheme() {
                crate::origin::Scheme::Http => 80,
                crate::origin::Scheme::Https => 443,
            };
            port == origin.port().unwrap_or(default)
        }
        None => origin.port().is_none(),
    };
    let host = entry.sandbox.host();
    let same_host = host == origin.host()
        || entry.per_server_subdomains && is_one_label_below(origin.host(), host);
    // SECURITY: a view served from the host's own origin could reach the host's DOM,
    // cookies and storage: the whole point of the proxy is a different origin.
    (same_host && same_port).then(|| {
        format!(
            "\"{}\" serves the same origin as the host {origin}: the sandbox must be a different origin",
            entry.sandbox
        )
    })
}

/// As `same_origin_as`, for every origin a pattern stands for: no name the sandbox answers may
/// be one of them.
fn one_of_pattern(entry: &HostEntry, pattern: &OriginPattern) -> Option<String> {
    let host = entry.sandbox.host();
    let same_port = entry.sandbox.port().unwrap_or(443) == pattern.port().unwrap_or(443);
    // SECURITY: a sandbox name that is itself one of the pattern's origins (or whose
    // per-server labels are) would run views on a host page's own origin.
    let same_host = is_one_label_below(host, pattern.suffix())
        || entry.per_server_subdomains && host == pattern.suffix();
    (same_host && same_port).then(|| {
        format!(
            "\"{}\" serves an origin of the host pattern {pattern}: the sandbox must be a different origin",
            entry.sandbox
        )
    })
}

/// Every entry's host origin or pattern, by what the cross-checks look up: a host name, the
/// name one label up, a pattern's name, and a site.
struct EmbedderIndex<'h> {
    by_host: HashMap<&'h str, Vec<&'h Origin>>,
    by_parent_host: HashMap<&'h str, Vec<&'h Origin>>,
    patterns_by_suffix: HashMap<&'h str, Vec<&'h OriginPattern>>,
    /// What each site holds, as the messages name it (`https://chat.example.com`,
    /// `host pattern https://*.preview.example.com`).
    by_site: HashMap<&'h str, Vec<SiteMember<'h>>>,
}

struct SiteMember<'h> {
    embedder: &'h Embedder,
    shown: String,
    loopback: bool,
}

impl<'h> EmbedderIndex<'h> {
    fn new(hosts: &'h [Placed]) -> Self {
        let mut index = EmbedderIndex {
            by_host: HashMap::new(),
            by_parent_host: HashMap::new(),
            patterns_by_suffix: HashMap::new(),
            by_site: HashMap::new(),
        };
        for Placed { entry, .. } in hosts {
            let (name, shown) = match &entry.origin {
                Embedder::Exact(origin) => {
                    index.by_host.entry(origin.host()).or_default().push(origin);
                    if let Some(parent) = parent_name(origin.host()) {
                        index.by_parent_host.entry(parent).or_default().push(origin);
                    }
                    (origin.host(), origin.to_string())
                }
                Embedder::Pattern(pattern) => {
                    let suffix = pattern.suffix();
                    index
                        .patterns_by_suffix
                        .entry(suffix)
                        .or_default()
                        .push(pattern);
                    (suffix, format!("pattern {pattern}"))
                }
            };
            let loopback = matches!(&entry.origin, Embedder::Exact(o) if o.is_loopback());
            let member = SiteMember {
                embedder: &entry.origin,
                shown,
                loopback,
            };
            index
                .by_site
                .entry(site_guess(name))
                .or_default()
                .push(member);
        }
        index
    }
}

/// Whether `entry`'s sandbox is refused for `embedder` (then a same-site warning would add nothing).
fn refused(entry: &HostEntry, embedder: &Embedder) -> bool {
    match embedder {
        Embedder::Exact(origin) => same_origin_as(entry, origin).is_some(),
        Embedder::Pattern(pattern) => one_of_pattern(entry, pattern).is_some(),
    }
}

/// The `sandbox` value of a host table, for messages about it; the table if it has none.
fn sandbox_value<'v, 'i>(table: &'v Value<'i>) -> &'v Value<'i> {
    match table.get_ref() {
        DeValue::Table(t) => t.get("sandbox").unwrap_or(table),
        _ => table,
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// A whole number followed by `ms`, `s`, `m`, `h` or `d`.
fn parse_duration(raw: &str) -> Option<Duration> {
    let digits_end = raw.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = raw.split_at(digits_end);
    let n: u64 = number.parse().ok()?;
    let seconds = match unit {
        "ms" => return Some(Duration::from_millis(n)),
        "s" => 1,
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        _ => return None,
    };
    n.checked_mul(seconds).map(Duration::from_secs)
}

/// The known key closest to `name`, if it is a likely typo of it.
fn near_miss<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Some(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(
            parse_duration("365d"),
            Some(Duration::from_secs(31_536_000))
        );
        for bad in ["", "10", "s", "1.5s", "-1s", "10 s", "10sec"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn near_misses() {
        let known = ["listen", "admin_listen", "tls", "hosts", "limits"];
        assert_eq!(near_miss("lisen", &known), Some("listen"));
        assert_eq!(near_miss("host", &known), Some("hosts"));
        assert_eq!(near_miss("admin-listen", &known), Some("admin_listen"));
        assert_eq!(near_miss("certificates", &known), None);
    }
}
