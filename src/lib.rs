//! mcp-sandbox-proxy: the sandbox-proxy origin for MCP Apps views.
//!
//! The library does the work; `main.rs` only wires the command line to it. Every module is
//! private: what the binary, the tests and the fuzz targets use is the `pub use` list below.
//! A request's path through the modules:
//!
//! ```text
//! cli        serve: config::Config::load → server::Server::bind → Server::run
//! generation one config → service::Service (+ tls acceptor, limits) as an Endpoint
//! server     listeners: accept under the connection cap, the drain of the backlog
//! connection one connection: TLS handshake (tls: certificate by SNI) or the h2 preface
//!            (plain TCP: io::prefixed replays it), the byte stream wrapped by io::deadline
//!            → h1: io::head checks each head (a refused one: its typed limits::Refusal goes
//!            with the request in its place); hyper answers; at rest between requests
//!            → h2: hyper, streams run inline first
//! service    front_door: refused (refusal) → routed once (route: host entry, served name)
//!            → the page (page: from page_cache, or the query read once (page_query), the view
//!            policy decided and the page rendered (render; signing), then logs, forms,
//!            headers, caching) or a CSP report (reports) → finished (counted, HSTS, cookies
//!            cleared)
//! metrics    counted on the way; admin serves them, with /livez and /readyz
//! reload     SIGHUP or changed files → a new generation for every next request
//! ```

#![deny(missing_docs)]

mod acme;
mod admin;
mod answer;
mod body;
mod cli;
mod compress;
mod config;
mod connection;
mod csp;
mod demo;
mod embedders;
mod generation;
mod idle;
mod io;
mod limits;
mod memory;
mod metrics;
#[cfg(test)]
mod minify;
mod origin;
mod page;
mod page_paths;
mod page_query;
mod reload;
mod reports;
mod routing;
mod sandbox;
mod server;
mod service;
mod signing;
mod telemetry;
mod tls;
mod vocabulary;

pub use body::{Body, Unsent};
pub use cli::Cli;
pub use config::{
    Config, ConfigError, EMBEDDED_DEFAULT, HostEntry, Limits, Loaded, OpaqueViewStorage, Problem,
    RelayMessages, ViewPolicyOwner,
};
pub use csp::{
    DEFAULT_POLICY, DeclarationError, Declared, DomainList, DropReason, HostSource, OptIn, OptIns,
    ViewPolicy,
};
pub use embedders::{EmbedderError, Embedders, OriginListError};
pub use limits::{MAX_REPORT_BODY, REPORT_PATH};
pub use metrics::Metrics;
pub use page_paths::{PagePath, PagePaths, PathListError};
pub use page_query::{
    CSP_PARAMETER, EMBEDDER_PARAMETER, EXPIRES_PARAMETER, PageQuery, QueryError,
    SIGNATURE_PARAMETER, UPGRADE_PARAMETER, policy_for_query,
};
pub use reports::{MalformedReport, read_report};
pub use sandbox::{NoScripts, SandboxToken, ViewSandbox};
pub use server::{ServeError, Server};
pub use service::{NoLabel, NoSigner, PolicyVerdict, Service, Transport, ViewOrigin};
pub use signing::{KeyListError, Malformation, PolicyKey, PolicyKeys, SignatureRefusal};
pub use telemetry::{LogFormat, init as init_logging};

/// The HTTP/1 head reader's scanner and its limits, for the property tests and the `heads`
/// fuzz target, which hold it to httparse; not a stable interface.
#[doc(hidden)]
pub use io::head::HeadScanner;
#[doc(hidden)]
pub use limits::{HeadLimits, Refusal};

/// `<version> (<git revision>)`, as `--version` prints it.
pub(crate) const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("MCP_SANDBOX_PROXY_GIT_REV"),
    ")"
);
