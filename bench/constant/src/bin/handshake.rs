//! Full TLS handshakes as fast as a server takes them: `bench/run`'s load for a new connection
//! per request. Each of N lanes connects, makes a full TLS 1.3 handshake (session resumption
//! off), asks for PATH with `Connection: close`, reads the whole answer (a `200`) and closes, over
//! and over for the given seconds.
//!
//! ```text
//! handshake ADDR SERVER_NAME LANES SECONDS PATH
//! ```
//!
//! wrk, the other choice, resumes its previous TLS session on each new connection (so its
//! handshakes carry no certificate and no signature), and a client that verifies the server's
//! signature spends more per handshake than the server spends making it: one client core could
//! not keep one server core busy. This client checks nothing of the handshake (loopback only,
//! the benchmark's throwaway certificate) and counts any handshake that was not a full one as an
//! error. Prints `key value` lines: requests, errors, seconds, rps, p99_ms, full_handshakes.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bench_constant::{BoxError, Checks, connector, loopback, read_answer, server_name};
use rustls::HandshakeKind;
use rustls_pki_types::ServerName;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// One connection's handshake, request and answer: longer means the server is not answering.
const PER_CONNECTION: Duration = Duration::from_secs(10);

/// What one lane saw.
#[derive(Default)]
struct Tally {
    /// Microseconds from connect to the end of the answer, one per success.
    latencies_us: Vec<u32>,
    full_handshakes: u64,
    errors: u64,
    first_error: Option<String>,
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, name, lanes, seconds, path] = args.as_slice() else {
        return Err("usage: handshake ADDR SERVER_NAME LANES SECONDS PATH".into());
    };
    let addr = loopback(addr)?;
    let lanes: usize = lanes.parse()?;
    let duration = Duration::from_secs(seconds.parse()?);
    let server_name = server_name(name)?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {name}:{}\r\nConnection: close\r\n\r\n",
        addr.port()
    );
    let connector = connector(Checks::Nothing, false)?;

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (tallies, elapsed) = runtime.block_on(async {
        let start = Instant::now();
        let end = start + duration;
        let mut running = tokio::task::JoinSet::new();
        for _ in 0..lanes {
            let (connector, server_name) = (connector.clone(), server_name.clone());
            let request = request.clone();
            running.spawn(async move { lane(&connector, addr, &server_name, &request, end).await });
        }
        let mut tallies = Vec::with_capacity(lanes);
        while let Some(tally) = running.join_next().await {
            tallies.push(tally?);
        }
        Ok::<_, BoxError>((tallies, start.elapsed()))
    })?;
    report(tallies, elapsed)
}

/// Asks over new connections, one after the other, until `end`.
async fn lane(
    connector: &TlsConnector,
    addr: SocketAddr,
    server_name: &ServerName<'static>,
    request: &str,
    end: Instant,
) -> Tally {
    let mut tally = Tally::default();
    while Instant::now() < end {
        let started = Instant::now();
        let asked = ask(connector, addr, server_name, request);
        match tokio::time::timeout(PER_CONNECTION, asked).await {
            Ok(Ok(kind)) => {
                let micros = started.elapsed().as_micros();
                tally
                    .latencies_us
                    .push(u32::try_from(micros).unwrap_or(u32::MAX));
                tally.full_handshakes += u64::from(kind == Some(HandshakeKind::Full));
            }
            Ok(Err(e)) => tally.error(e.to_string()),
            Err(_) => tally.error(format!("no answer within {PER_CONNECTION:?}")),
        }
    }
    tally
}

impl Tally {
    fn error(&mut self, what: String) {
        self.errors += 1;
        self.first_error.get_or_insert(what);
    }
}

/// One connection: handshake, request, answer; the kind of handshake it was.
async fn ask(
    connector: &TlsConnector,
    addr: SocketAddr,
    server_name: &ServerName<'static>,
    request: &str,
) -> Result<Option<HandshakeKind>, BoxError> {
    let tcp = TcpStream::connect(addr).await?;
    tcp.set_nodelay(true)?;
    let mut tls = connector.connect(server_name.clone(), tcp).await?;
    let kind = tls.get_ref().1.handshake_kind();
    tls.write_all(request.as_bytes()).await?;
    read_answer(&mut tls).await?;
    Ok(kind)
}

fn report(tallies: Vec<Tally>, elapsed: Duration) -> Result<(), BoxError> {
    let mut latencies: Vec<u32> = Vec::new();
    let (mut full, mut errors, mut first_error) = (0, 0, None);
    for tally in tallies {
        latencies.extend(tally.latencies_us);
        full += tally.full_handshakes;
        errors += tally.errors;
        first_error = first_error.or(tally.first_error);
    }
    if latencies.is_empty() {
        return Err(format!("no request succeeded: {}", first_error.unwrap_or_default()).into());
    }
    latencies.sort_unstable();
    // Nearest rank, as bench/report.mjs computes h2load's.
    let rank = (latencies.len() * 99).div_ceil(100).max(1) - 1;
    let requests = latencies.len();
    let seconds = elapsed.as_secs_f64();
    println!("requests {requests}");
    println!("errors {errors}");
    println!("seconds {seconds:.3}");
    println!("rps {:.1}", requests as f64 / seconds);
    println!("p99_ms {:.3}", f64::from(latencies[rank]) / 1000.0);
    println!("full_handshakes {full}");
    if let Some(error) = first_error {
        eprintln!("first error: {error}");
    }
    Ok(())
}
