//! Requests at a fixed rate, whatever the server does: `bench/reload.mjs`'s load, to see what a
//! reload costs the requests being served meanwhile.
//!
//! ```text
//! paced ADDR HOST LANES RATE SECONDS PATH
//! ```
//!
//! LANES keep-alive connections (plain HTTP/1.1) share RATE requests per second; each lane sends
//! its next request at a time fixed in advance, and a request's latency counts from that time,
//! not from when it could be sent. A client that waits for each answer before it asks again (wrk)
//! sends almost nothing while the server stalls, so a stall of half a second shows in its maximum
//! alone; here every request that should have been sent during the stall waits it out and counts.
//! Prints `key value` lines: requests, errors, seconds, p50_ms, p99_ms, p999_ms, max_ms.

use std::net::SocketAddr;
use std::time::Duration;

use bench_constant::{BoxError, loopback, read_answer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::time::Instant;

/// One request's answer: longer means the server is not answering.
const PER_REQUEST: Duration = Duration::from_secs(10);

/// What one lane saw.
#[derive(Default)]
struct Tally {
    /// Microseconds from each request's planned time to the end of its answer.
    latencies_us: Vec<u32>,
    errors: u64,
    first_error: Option<String>,
}

fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [addr, host, lanes, rate, seconds, path] = args.as_slice() else {
        return Err("usage: paced ADDR HOST LANES RATE SECONDS PATH".into());
    };
    let addr = loopback(addr)?;
    let lanes: u32 = lanes.parse()?;
    let rate: f64 = rate.parse()?;
    let duration = Duration::from_secs(seconds.parse()?);
    if lanes == 0 || rate <= 0.0 {
        return Err("LANES and RATE must be above zero".into());
    }
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n");
    // Each lane asks every `period`; the lanes are spread evenly within it.
    let period = Duration::from_secs_f64(f64::from(lanes) / rate);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let tallies = runtime.block_on(async {
        let start = Instant::now();
        let end = start + duration;
        let mut running = tokio::task::JoinSet::new();
        for n in 0..lanes {
            let first = start + period.mul_f64(f64::from(n) / f64::from(lanes));
            let request = request.clone();
            running.spawn(async move { lane(addr, &request, first, period, end).await });
        }
        let mut tallies = Vec::with_capacity(lanes as usize);
        while let Some(tally) = running.join_next().await {
            tallies.push(tally?);
        }
        Ok::<_, BoxError>(tallies)
    })?;
    report(tallies, duration)
}

/// Asks at `first`, then every `period` until `end`, over one connection (a new one after an
/// error).
async fn lane(
    addr: SocketAddr,
    request: &str,
    first: Instant,
    period: Duration,
    end: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let mut connection: Option<TcpStream> = None;
    let mut planned = first;
    while planned < end {
        tokio::time::sleep_until(planned).await;
        let asked = tokio::time::timeout(PER_REQUEST, ask(&mut connection, addr, request));
        match asked.await {
            Ok(Ok(())) => {
                let micros = planned.elapsed().as_micros();
                tally
                    .latencies_us
                    .push(u32::try_from(micros).unwrap_or(u32::MAX));
            }
            Ok(Err(e)) => tally.error(e.to_string(), &mut connection),
            Err(_) => tally.error(format!("no answer within {PER_REQUEST:?}"), &mut connection),
        }
        planned += period;
    }
    tally
}

impl Tally {
    fn error(&mut self, what: String, connection: &mut Option<TcpStream>) {
        self.errors += 1;
        self.first_error.get_or_insert(what);
        *connection = None;
    }
}

/// One request and its answer, over the lane's connection (opened if it has none).
async fn ask(
    connection: &mut Option<TcpStream>,
    addr: SocketAddr,
    request: &str,
) -> Result<(), BoxError> {
    let stream = match connection {
        Some(stream) => stream,
        None => {
            let stream = TcpStream::connect(addr).await?;
            stream.set_nodelay(true)?;
            connection.insert(stream)
        }
    };
    stream.write_all(request.as_bytes()).await?;
    read_answer(stream).await
}

fn report(tallies: Vec<Tally>, duration: Duration) -> Result<(), BoxError> {
    let mut latencies: Vec<u32> = Vec::new();
    let (mut errors, mut first_error) = (0, None);
    for tally in tallies {
        latencies.extend(tally.latencies_us);
        errors += tally.errors;
        first_error = first_error.or(tally.first_error);
    }
    if latencies.is_empty() {
        return Err(format!("no request succeeded: {}", first_error.unwrap_or_default()).into());
    }
    latencies.sort_unstable();
    // Nearest rank, as the other clients compute it.
    let at = |per_mille: usize| {
        let rank = (latencies.len() * per_mille).div_ceil(1000).max(1) - 1;
        f64::from(latencies[rank]) / 1000.0
    };
    println!("requests {}", latencies.len());
    println!("errors {errors}");
    println!("seconds {:.3}", duration.as_secs_f64());
    println!("p50_ms {:.3}", at(500));
    println!("p99_ms {:.3}", at(990));
    println!("p999_ms {:.3}", at(999));
    println!("max_ms {:.3}", at(1000));
    if let Some(error) = first_error {
        eprintln!("first error: {error}");
    }
    Ok(())
}
