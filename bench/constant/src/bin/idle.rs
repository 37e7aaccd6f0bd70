//! Holds idle TLS connections open so that `bench/run` can price one in server memory: opens N
//! connections to a server on loopback, makes one keep-alive request on each (reading the whole
//! answer, which must be a `200`), keeps them all open, prints `ready N` and waits to be killed.
//!
//! ```text
//! idle ADDR SERVER_NAME N PATH [h1|h2] [ACCEPT_ENCODING]
//! ```
//!
//! `h2` asks over HTTP/2 as a browser tab does: ALPN `h2`, a browser's SETTINGS (Chromium's
//! header table, window and header list sizes) and request headers, and the connection is left
//! open after its one stream, answering the server's pings. `ACCEPT_ENCODING` (default none:
//! identity) is sent as the request's `Accept-Encoding`.
//!
//! `SERVER_NAME` is sent as SNI and, with the port, as `Host` (`:authority`). The server's
//! certificate is not verified (the benchmark's throwaway certificate), which is why `ADDR` must
//! be a loopback address; the handshake's signature still is.

use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

use bench_constant::{BoxError, Checks, connector_for, loopback, read_answer, server_name};
use bytes::Bytes;
use rustls_pki_types::ServerName;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Connections opened at once: enough to keep a one-core server busy with handshakes.
const LANES: usize = 16;
/// Each connection's handshake, request and answer.
const PER_CONNECTION: Duration = Duration::from_secs(20);

/// What keeps one connection open, held and never read: its stream, or for HTTP/2 the handle
/// whose drop would end it.
type Open = Box<dyn std::any::Any + Send>;

#[derive(Clone)]
struct Ask {
    addr: SocketAddr,
    name: String,
    server_name: ServerName<'static>,
    path: String,
    encoding: Option<String>,
    http2: bool,
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (addr, name, count, path, protocol, encoding) = match args.as_slice() {
        [a, n, c, p] => (a, n, c, p, "h1", None),
        [a, n, c, p, protocol] => (a, n, c, p, protocol.as_str(), None),
        [a, n, c, p, protocol, e] => (a, n, c, p, protocol.as_str(), Some(e.clone())),
        _ => return Err("usage: idle ADDR SERVER_NAME N PATH [h1|h2] [ACCEPT_ENCODING]".into()),
    };
    let http2 = match protocol {
        "h1" => false,
        "h2" => true,
        other => return Err(format!("the protocol is h1 or h2, not {other:?}").into()),
    };
    let count: usize = count.parse()?;
    let ask = Ask {
        addr: loopback(addr)?,
        name: name.clone(),
        server_name: server_name(name)?,
        path: path.clone(),
        encoding,
        http2,
    };
    let alpn: &[u8] = if http2 { b"h2" } else { b"http/1.1" };
    let connector = connector_for(Checks::Signature, true, alpn)?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut lanes = tokio::task::JoinSet::new();
        for lane in 0..LANES {
            let share = count / LANES + usize::from(lane < count % LANES);
            let (connector, ask) = (connector.clone(), ask.clone());
            lanes.spawn(async move {
                let mut open = Vec::with_capacity(share);
                for _ in 0..share {
                    let connection = open_and_ask(&connector, &ask);
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
async fn open_and_ask(connector: &TlsConnector, ask: &Ask) -> Result<Open, BoxError> {
    let tcp = TcpStream::connect(ask.addr).await?;
    tcp.set_nodelay(true)?;
    let mut tls = connector.connect(ask.server_name.clone(), tcp).await?;
    if ask.http2 {
        return Ok(Box::new(ask_over_h2(tls, ask).await?));
    }
    let encoding = match &ask.encoding {
        Some(encoding) => format!("Accept-Encoding: {encoding}\r\n"),
        None => String::new(),
    };
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}:{}\r\n{encoding}\r\n",
        ask.path,
        ask.name,
        ask.addr.port()
    );
    tls.write_all(request.as_bytes()).await?;
    read_answer(&mut tls).await?;
    Ok(Box::new(tls))
}

/// One stream on a new HTTP/2 connection, as a browser opens it; the connection is then driven
/// by a task of its own (pings, settings) for as long as the handle lives.
async fn ask_over_h2(
    tls: tokio_rustls::client::TlsStream<TcpStream>,
    ask: &Ask,
) -> Result<h2::client::SendRequest<Bytes>, BoxError> {
    let (send, connection) = h2::client::Builder::new()
        .header_table_size(65_536)
        .initial_window_size(6_291_456)
        .initial_connection_window_size(15_728_640)
        .max_header_list_size(262_144)
        .enable_push(false)
        .handshake::<_, Bytes>(tls)
        .await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut send = send.ready().await?;
    let uri = format!("https://{}:{}{}", ask.name, ask.addr.port(), ask.path);
    let mut request = http::Request::get(uri)
        .header("sec-ch-ua-platform", "\"Linux\"")
        .header("upgrade-insecure-requests", "1")
        .header("user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36")
        .header("accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8")
        .header("sec-fetch-site", "cross-site")
        .header("sec-fetch-mode", "navigate")
        .header("sec-fetch-dest", "iframe")
        .header("referer", "https://chat.example.com/")
        .header("accept-language", "en-US,en;q=0.9");
    if let Some(encoding) = &ask.encoding {
        request = request.header("accept-encoding", encoding.as_str());
    }
    let (answer, _) = send.send_request(request.body(())?, true)?;
    let answer = answer.await?;
    if answer.status() != http::StatusCode::OK {
        return Err(format!("expected a 200, got {}", answer.status()).into());
    }
    let mut body = answer.into_body();
    while let Some(chunk) = body.data().await {
        let chunk = chunk?;
        let _ = body.flow_control().release_capacity(chunk.len());
    }
    Ok(send)
}
