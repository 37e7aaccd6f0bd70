//! mcp-sandbox-proxy: the sandbox-proxy origin for MCP Apps views.
//!
//! The library does the work; `main.rs` only wires the command line to it. A request's path
//! through the modules:
//!
//! ```text
//! cli        serve: config::Config::load → server::Server::bind → Server::run
//! generation one config → service::Service (+ tls acceptor, limits) as an Endpoint
//! server     listeners: accept under the connection cap, the drain of the backlog
//! connection one connection: TLS handshake (tls: certificate by SNI) or the h2 preface
//!            (plain TCP: io::prefixed replays it), the byte stream wrapped by io::deadline
//!            → h1: io::head checks each head; hyper answers; at rest between requests
//!            → h2: hyper, streams run inline first
//! service    Host/:authority → host entry → csp: ?csp= → view policy
//!            → page: the proxy page (proxy-page/sandbox.html + relay.js) → headers
//! metrics    counted on the way; admin serves them, with /livez and /readyz
//! reload     SIGHUP or changed files → a new generation for every next request
//! ```

mod admin;
pub mod body;
pub mod cli;
mod compress;
pub mod config;
mod connection;
pub mod csp;
mod demo;
mod generation;
mod idle;
mod io;
mod limits;
mod memory;
pub mod metrics;
#[cfg(test)]
mod minify;
pub mod origin;
mod page;
mod reload;
mod routing;
pub mod sandbox;
pub mod server;
pub mod service;
pub mod signing;
pub mod telemetry;
pub mod tls;

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
