//! Records the git revision for `--version`; a source tree without git says "unknown".

use std::process::Command;

fn main() {
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
