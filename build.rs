//! Records the git revision for `--version` (from git, or from the crate tarball's
//! `.cargo_vcs_info.json`; a tree with neither says "unknown"), joins
//! the relay's parts, and strips the proxy page's sources into `OUT_DIR` for the binary to
//! serve (`src/minify.rs`).

use std::path::Path;
use std::process::Command;

#[path = "src/minify.rs"]
mod minify;
#[path = "src/vocabulary.rs"]
mod vocabulary;

fn main() {
    strip_proxy_page();
    let revision = std::env::var("MCP_SANDBOX_PROXY_GIT_REV")
        .ok()
        .or_else(packaged_revision)
        .or_else(git_revision)
        .filter(|rev| !rev.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=MCP_SANDBOX_PROXY_GIT_REV={revision}");
    println!("cargo:rerun-if-env-changed=MCP_SANDBOX_PROXY_GIT_REV");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
}

/// The commit a crate tarball was packaged from: `cargo package` writes it to
/// `.cargo_vcs_info.json` (`"sha1": "<40 hex digits>"`), and the tarball has no `.git`.
fn packaged_revision() -> Option<String> {
    let info = std::fs::read_to_string(".cargo_vcs_info.json").ok()?;
    println!("cargo:rerun-if-changed=.cargo_vcs_info.json");
    let after_key = &info[info.find("\"sha1\"")? + "\"sha1\"".len()..];
    let value = after_key.trim_start().strip_prefix(':')?.trim_start();
    let sha = value.strip_prefix('"')?.get(..40)?;
    sha.bytes()
        .all(|b| b.is_ascii_hexdigit())
        .then(|| sha[..12].to_owned())
}

fn git_revision() -> Option<String> {
    let out = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// `proxy-page/sandbox.html`, and the relay joined from `proxy-page/relay/*.js` in name order
/// inside one function, as served: comments and indentation stripped.
fn strip_proxy_page() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    println!("cargo:rerun-if-changed=src/minify.rs");
    let page = read("proxy-page/sandbox.html");
    write(&out, "sandbox.html", &minify::html(&page));
    let relay = joined_relay("proxy-page/relay");
    write(&out, "relay.js", &minify::javascript(&relay));
}

/// The relay as every page runs it: the shared vocabulary, then the parts, each a file of one
/// concern, in name order, in one function (one scope, strict mode), then `start()`. This is
/// the one join: `mcp-sandbox-proxy relay` prints it, and the node tests load what it prints.
fn joined_relay(dir: &str) -> String {
    println!("cargo:rerun-if-changed={dir}");
    println!("cargo:rerun-if-changed=src/vocabulary.rs");
    let mut parts: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{dir}: cannot read: {e}"))
        .map(|entry| entry.unwrap_or_else(|e| panic!("{dir}: {e}")).path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "js"))
        .collect();
    parts.sort();
    let mut relay = String::from("(function () {\n'use strict';\n");
    relay.push_str(&relay_vocabulary());
    for part in parts {
        relay.push_str(&read(&part.display().to_string()));
        relay.push('\n');
    }
    relay.push_str("start();\n})();\n");
    relay
}

/// `src/vocabulary.rs` as the relay's first part: the names the service and the relay share,
/// so the relay's own sources never type them.
fn relay_vocabulary() -> String {
    let lists: Vec<String> = vocabulary::DOMAIN_LISTS.iter().map(|l| js(l)).collect();
    let directives: Vec<String> = vocabulary::DOMAIN_LISTS
        .iter()
        .zip(vocabulary::LIST_DIRECTIVES)
        .map(|(list, directives)| format!("{}: [{}]", js(list), js_list(directives)))
        .collect();
    let apps_sdk: Vec<String> = vocabulary::DOMAIN_LISTS
        .iter()
        .zip(vocabulary::APPS_SDK_LISTS)
        .filter_map(|(list, key)| Some(format!("{}: {}", js(list), js(key?))))
        .collect();
    let opt_ins: Vec<String> = vocabulary::OPT_INS
        .iter()
        .map(|(name, adds)| {
            let adds: Vec<String> = adds
                .iter()
                .map(|(directive, source)| format!("[{}, {}]", js(directive), js(source)))
                .collect();
            format!("{{ name: {}, adds: [{}] }}", js(name), adds.join(", "))
        })
        .collect();
    format!(
        "// The names the service and the relay share (src/vocabulary.rs, written by build.rs).\n\
         var DOMAIN_LISTS = [{}];\n\
         var POLICY_DIRECTIVES = {{ {} }};\n\
         var APPS_SDK_LISTS = {{ {} }};\n\
         var APPS_SDK_REDIRECT_LIST = {};\n\
         var OPT_INS = [{}];\n\
         var VIEW_FEATURES = [{}];\n\
         var CSP_PARAMETER = {};\n\
         var WIDGET_CSP_PARAMETER = {};\n\
         var UPGRADE_PARAMETER = {};\n",
        lists.join(", "),
        directives.join(", "),
        apps_sdk.join(", "),
        js(vocabulary::APPS_SDK_REDIRECT_LIST),
        opt_ins.join(", "),
        js_list(&vocabulary::VIEW_FEATURES),
        js(vocabulary::CSP_PARAMETER),
        js(vocabulary::WIDGET_CSP_PARAMETER),
        js(vocabulary::UPGRADE_PARAMETER),
    )
}

/// A JavaScript string literal of `text`, which is ours: ASCII without quotes or backslashes
/// but the single quotes of CSP keywords.
fn js(text: &str) -> String {
    assert!(
        text.bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\'),
        "src/vocabulary.rs: {text:?} is not a plain name"
    );
    format!("\"{text}\"")
}

fn js_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|item| js(item))
        .collect::<Vec<_>>()
        .join(", ")
}

fn read(source: &str) -> String {
    println!("cargo:rerun-if-changed={source}");
    std::fs::read_to_string(source).unwrap_or_else(|e| panic!("{source}: cannot read: {e}"))
}

fn write(out: &str, served: &str, text: &str) {
    std::fs::write(Path::new(out).join(served), text)
        .unwrap_or_else(|e| panic!("{out}/{served}: cannot write: {e}"));
}
