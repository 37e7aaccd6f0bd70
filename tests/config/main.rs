//! The config loader: each rule of config.md, with the message an operator sees.

use std::path::Path;
use std::time::Duration;

use mcp_sandbox_proxy::{Config, EMBEDDED_DEFAULT};

mod acme;
mod cross_check;
mod document;
mod host_entry;
mod keys;
mod limits;
mod tenants;
mod views;

fn errors(text: &str) -> Vec<String> {
    match Config::parse("c.toml", text, Path::new("/etc/p")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.problems.iter().map(|p| p.to_string()).collect(),
    }
}

/// The config `text` loads to; panics, naming the problems, if it is refused.
fn parse(text: &str) -> Config {
    match Config::parse("c.toml", text, Path::new("/")) {
        Ok(loaded) => loaded.config,
        Err(e) => panic!("refused:\n{e}"),
    }
}

fn warnings(text: &str) -> Vec<String> {
    match Config::parse("c.toml", text, Path::new("/etc/p")) {
        Ok(loaded) => loaded.warnings.iter().map(|p| p.to_string()).collect(),
        Err(e) => panic!("refused:\n{e}"),
    }
}

const LISTEN: &str = "listen = \"127.0.0.1:8443\"\n";

fn host(origin: &str, sandbox: &str) -> String {
    format!("{LISTEN}[[hosts]]\norigin = \"{origin}\"\nsandbox = \"{sandbox}\"\n")
}
