//! Records the git revision for `--version` (a source tree without git says "unknown"), and
//! strips the proxy page's sources into `OUT_DIR` for the binary to serve (`src/minify.rs`).

use std::path::Path;
use std::process::Command;

#[path = "src/minify.rs"]
mod minify;

fn main() {
    strip_proxy_page();
    let revision = std::env::var("MCP_SANDBOX_PROXY_GIT_REV")
        .ok()
        .or_else(|| {
            let out = Command::new("git")
                .args(["rev-parse", "--short=12", "HEAD"])
                .output()
                .ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        })
        .filter(|rev| !rev.is_empty())
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=MCP_SANDBOX_PROXY_GIT_REV={revision}");
    println!("cargo:rerun-if-env-changed=MCP_SANDBOX_PROXY_GIT_REV");
    println!("cargo:rerun-if-changed=.git/HEAD");
    println!("cargo:rerun-if-changed=.git/refs/heads");
}

/// `proxy-page/sandbox.html` and `relay.js` as served: comments and indentation stripped.
fn strip_proxy_page() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let files = [
        (
            "proxy-page/sandbox.html",
            "sandbox.html",
            minify::html as fn(&str) -> String,
        ),
        ("proxy-page/relay.js", "relay.js", minify::javascript),
    ];
    for (source, served, strip) in files {
        println!("cargo:rerun-if-changed={source}");
        println!("cargo:rerun-if-changed=src/minify.rs");
        let text = std::fs::read_to_string(source)
            .unwrap_or_else(|e| panic!("{source}: cannot read: {e}"));
        std::fs::write(Path::new(&out).join(served), strip(&text))
            .unwrap_or_else(|e| panic!("{out}/{served}: cannot write: {e}"));
    }
}
