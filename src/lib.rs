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

/// `AsyncWrite` for a stream wrapper whose field `inner` does the writing.
#[macro_export]
#[doc(hidden)]
macro_rules! forward_async_write {
    ($wrapper:ident) => {
        impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for $wrapper<S> {
            fn poll_write(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                buf: &[u8],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
            }

            fn poll_flush(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.inner).poll_flush(cx)
            }

            fn poll_shutdown(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
            }

            fn poll_write_vectored(
                mut self: std::pin::Pin<&mut Self>,
                cx: &mut std::task::Context<'_>,
                bufs: &[std::io::IoSlice<'_>],
            ) -> std::task::Poll<std::io::Result<usize>> {
                std::pin::Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
            }

            fn is_write_vectored(&self) -> bool {
                self.inner.is_write_vectored()
            }
        }
    };
}
