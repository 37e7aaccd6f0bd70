//! The config file: TOML text in, a validated `Config` (or every problem, with key and line) out.
//!
//! The file is walked key by key from `toml`'s spanned document rather than derived with serde,
//! so every error can name the key, the line and — for an unknown key — the near miss. A
//! `hosts_dir` adds every `*.toml` file in it as more `[[hosts]]` entries (one file per tenant),
//! each walked the same way and named in its own messages.

mod acme;
mod cross_check;
mod document;
mod features;
mod host_entry;
mod limits;
mod problem;
mod references;
mod tenants;
mod tls;
mod walk;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::csp::OptIns;
use crate::embedders::Embedders;
use crate::origin::SandboxName;
use crate::page_paths::PagePaths;
use crate::sandbox::ViewSandbox;
use crate::signing::PolicyKeys;

use walk::Walker;

pub use acme::{AcmeName, AcmeSettings};
pub use features::ViewFeatures;
pub use problem::{ConfigError, Problem};

pub(crate) use acme::{Challenge, SYSTEM_CA_BUNDLES};

pub(crate) use references::{References, references_in};
pub(crate) use tenants::tenant_files;

/// The development default that `serve` runs without `--config`.
pub const EMBEDDED_DEFAULT: &str = include_str!("../../config/default.toml");

/// Where the embedded default's demo host page listens. Never bound when a file is given.
const DEMO_LISTEN: &str = "127.0.0.1:8080";

#[derive(Clone, Debug, PartialEq)]
/// A validated config: every key read and checked, every path resolved.
pub struct Config {
    /// The public listener.
    pub listen: SocketAddr,
    /// `/livez`, `/readyz`, `/metrics`; `None` disables the admin listener.
    pub(crate) admin_listen: Option<SocketAddr>,
    /// `None`: plain HTTP (behind a TLS-terminating load balancer, or local development).
    pub tls: Option<TlsFiles>,
    /// Certificates issued and renewed by an ACME CA, beside (or instead of) `tls`'s files.
    pub acme: Option<AcmeSettings>,
    /// The host entries, the file's and then its tenant files', in order.
    pub hosts: Vec<HostEntry>,
    /// A folder whose `*.toml` files hold more `[[hosts]]` entries, one file per tenant.
    pub(crate) hosts_dir: Option<PathBuf>,
    /// `[limits]`, each key its default when not given.
    pub limits: Limits,
    /// Only the embedded default serves the demo host page.
    pub demo_listen: Option<SocketAddr>,
    /// How often the config and certificate files are checked for changes; zero: never.
    pub(crate) watch_interval: Duration,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TlsFiles {
    /// The first pair is the default certificate; the rest are chosen by SNI. Empty when
    /// every certificate comes from `[acme]`.
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
/// One `[[hosts]]` entry: a host page's origins, its sandbox name, and what its views get.
pub struct HostEntry {
    /// The host page's origins and patterns of them (preview and staging deployments).
    pub origin: Embedders,
    pub(crate) sandbox: SandboxName,
    /// Also serve `<label>.<sandbox>`, one origin per MCP server.
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
    /// The browser features granted to every view beyond the spec's permissions
    /// (`view_features`); none by default.
    pub view_features: ViewFeatures,
    /// The tokens a view gets when the host asks for none (`view_sandbox_default`), within
    /// `view_sandbox`; `None`: the spec's default, cut to `view_sandbox`.
    pub view_sandbox_default: Option<ViewSandbox>,
    /// The keys a `?csp=` must be signed with (`policy_keys`); `None`: policies are unsigned.
    pub policy_keys: Option<PolicyKeys>,
    /// How far ahead a signed URL's expiry may be (`policy_max_lifetime`).
    pub policy_max_lifetime: Duration,
    /// The paths the page answers on (`page_paths`).
    pub page_paths: PagePaths,
    /// Who writes the view's policy (`view_policy`).
    pub view_policy: ViewPolicyOwner,
    /// Whether this host's page policies ask browsers to report violations to the sandbox
    /// (`csp_reports`, on by default).
    pub csp_reports: bool,
    /// What an opaque view's `localStorage` and `sessionStorage` are (`opaque_view_storage`).
    pub opaque_view_storage: OpaqueViewStorage,
}

/// What an opaque view's storage is: none, as browsers give an opaque origin (its storage
/// throws), or one in memory, the view's own.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OpaqueViewStorage {
    /// The browser's: touching it throws, as for any opaque origin.
    #[default]
    None,
    /// A `Storage` in the view's memory, per view, gone with it, shared with nothing.
    Memory,
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

/// Who writes a view's policy (`view_policy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ViewPolicyOwner {
    /// The service: the page's header carries the policy built from `?csp=` (the spec's way).
    #[default]
    Service,
    /// The host: it writes a CSP `<meta>` into each view's HTML (MCP Inspector 2.x does), and
    /// the page's header carries no fetch directive, only framing and the page's sandbox.
    Host,
}

impl ViewPolicyOwner {
    /// The name the config and the page use.
    pub fn name(self) -> &'static str {
        match self {
            ViewPolicyOwner::Service => "service",
            ViewPolicyOwner::Host => "host",
        }
    }
}

/// Every limit has a default safe for a service on the internet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Open connections; more wait in the kernel's backlog.
    pub max_connections: usize,
    /// The TLS handshake's deadline.
    pub handshake_timeout: Duration,
    /// The deadline for a request head, a client that sends nothing included.
    pub header_read_timeout: Duration,
    /// How long a kept-alive connection may sit idle.
    pub idle_timeout: Duration,
    pub(crate) shutdown_grace: Duration,
    pub(crate) max_header_bytes: usize,
    /// The longest query a page takes (`?csp=` and the rest).
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
/// A signed URL's longest life unless the entry says (`policy_max_lifetime`): a working
/// session's worth for a host that signs when its chat page loads; signers default to 10 min.
pub(crate) const DEFAULT_POLICY_MAX_LIFETIME: Duration = Duration::from_secs(3600);
/// The longest `policy_max_lifetime`: a week. A URL that must outlive it was not signed per page.
const MAX_POLICY_MAX_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);

/// The longest HSTS max-age: two years.
const MAX_HSTS_MAX_AGE: Duration = Duration::from_secs(2 * 365 * 24 * 60 * 60);

/// A config that loaded, with the warnings worth showing an operator.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The config.
    pub config: Config,
    /// What an operator should read, though nothing stops the config.
    pub warnings: Vec<Problem>,
}

/// The port a request's authority may leave out: 443 where the service answers with the
/// certificates of `[tls]`, 80 where it does not. Sandbox names and routes are compared without
/// it; the loader and the service must agree on it, so it is decided here alone.
pub(crate) fn default_port(tls: bool) -> u16 {
    if tls { 443 } else { 80 }
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

    /// `[tls]` with every certificate it serves: its files, then those `[acme]` has issued so
    /// far (chosen by their names, never the default for a client without SNI unless they are
    /// all). `None` for plain HTTP.
    pub(crate) fn served_tls(&self) -> Option<TlsFiles> {
        let mut files = self.tls.clone()?;
        if let Some(acme) = &self.acme {
            files.certificates.extend(acme.issued_files());
        }
        Some(files)
    }

    /// Whether connections offering `acme-tls/1` alone get TLS-ALPN-01 answers.
    pub(crate) fn answers_tls_alpn(&self) -> bool {
        self.acme
            .as_ref()
            .is_some_and(|acme| acme.challenge == Challenge::TlsAlpn01)
    }

    /// The other files this config reads, as a reload watches them.
    pub(crate) fn references(&self) -> References {
        References {
            // ACME's files too, present or not yet: a new certificate is loaded as it appears.
            certificates: self
                .tls
                .iter()
                .flat_map(|tls| tls.certificates.iter())
                .flat_map(|pair| [pair.cert.clone(), pair.key.clone()])
                .chain(self.acme.iter().flat_map(AcmeSettings::watched_files))
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

    /// Every key the file takes, dotted as docs/configuration.md writes them (`tls.extra.cert`,
    /// `hosts.origin`): the lists the unknown-key speller offers, one per section.
    pub fn keys() -> Vec<String> {
        let sections: [(&str, &[&str]); 6] = [
            ("", document::KEYS),
            ("tls", tls::KEYS),
            ("tls.extra", tls::EXTRA_KEYS),
            ("acme", acme::KEYS),
            ("hosts", host_entry::KEYS),
            ("limits", &limits::KEYS),
        ];
        sections
            .iter()
            .flat_map(|(section, keys)| keys.iter().map(move |key| walk::join(section, key)))
            .collect()
    }

    /// Validates config text, and the tenant files of its `hosts_dir`. `file` names it in
    /// messages; `base` resolves relative paths.
    pub fn parse(file: &str, text: &str, base: &Path) -> Result<Loaded, ConfigError> {
        let mut walker = Walker::new(file, text, base);
        let config = walker
            .document()
            .and_then(|doc| document::config(&mut walker, doc.get_ref()));
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
