//! The `mcp-sandbox-proxy` binary: parse the command line, start logging, run.

use std::process::ExitCode;

use clap::Parser;
use mcp_sandbox_proxy::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    mcp_sandbox_proxy::init_logging(cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(cli.run());
    // The drain is over. What may still run is blocking work nobody waits for (a reload stuck
    // reading a file): waiting for it would keep a drained process alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    code
}
