//! Holds idle TLS connections open so that `bench/run` can price one in server memory: opens N
//! connections to a server on loopback, makes one HTTP/1.1 keep-alive request on each (reading
//! the whole answer, which must be a `200`), keeps them all open, prints `ready N` and waits to
//! be killed.
//!
//! ```text
//! idle ADDR SERVER_NAME N PATH
//! ```
//!
//! `SERVER_NAME` is sent as SNI and, with the port, as `Host`. The server's certificate is not
//! verified (the benchmark's throwaway certificate), which is why `ADDR` must be a loopback
//! address; the handshake's signature still is.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use bench_constant::{BoxError, Checks, connector, loopback, read_answer, server_name};
use rustls_pki_types::ServerName;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// Connections opened at once: enough to keep a one-core server busy with handshakes.
const LANES: usize = 16;
/// Each connection's handshake, request and answer.
const PER_CONNECTION: Duration = Duration::from_secs(20);

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, name, count, path] = args.as_slice() else {
        return Err("usage: idle ADDR SERVER_NAME N PATH".into());
    };
    let addr = loopback(addr)?;
    let count: usize = count.parse()?;
    let server_name = server_name(name)?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {name}:{}\r\n\r\n",
        addr.port()
    );

    let connector = connector(Checks::Signature, true)?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut lanes = tokio::task::JoinSet::new();
        for lane in 0..LANES {
            let share = count / LANES + usize::from(lane < count % LANES);
            let (connector, server_name) = (connector.clone(), server_name.clone());
            let request = request.clone();
            lanes.spawn(async move {
                let mut open = Vec::with_capacity(share);
                for _ in 0..share {
                    let connection = open_and_ask(&connector, addr, &server_name, &request);
                    let stream = tokio::time::timeout(PER_CONNECTION, connection)
                        .await
                        .map_err(|_| format!("a connection took over {PER_CONNECTION:?}"))??;
                    open.push(stream);
                }
                Ok::<_, BoxError>(open)
            });
        }
        let mut open = Vec::with_capacity(count);
        while let Some(lane) = lanes.join_next().await {
            open.extend(lane??);
        }
        println!("ready {}", open.len());
        std::io::stdout().flush()?;
        // Held until the process is killed.
        std::future::pending::<()>().await;
        drop(open);
        Ok(())
    })
}

/// A TLS connection that has had one keep-alive request answered in full.
async fn open_and_ask(
    connector: &TlsConnector,
    addr: SocketAddr,
    server_name: &ServerName<'static>,
    request: &str,
) -> Result<TlsStream<TcpStream>, BoxError> {
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let mut tls = connector.connect(server_name.clone(), tcp).await?;
    tls.write_all(request.as_bytes()).await?;
    read_answer(&mut tls).await?;
    Ok(tls)
}
