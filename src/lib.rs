//! mcp-sandbox-proxy: the sandbox-proxy origin for MCP Apps views.
//!
//! The library does the work; `main.rs` only wires the command line to it.

pub mod admin;
pub mod cli;
pub mod config;
pub mod csp;
pub mod deadline;
pub mod demo;
pub mod metrics;
pub mod origin;
pub mod page;
pub mod reload;
pub mod server;
pub mod service;
pub mod telemetry;
pub mod tls;

/// `<version> (<git revision>)`, as `--version` prints it.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("MCP_SANDBOX_PROXY_GIT_REV"),
    ")"
);
