//! The property that keeps HTTP/1 requests from being smuggled: on one connection, whatever the
//! client sends and however it stalls its writes and its reads, and whether the handler reads a
//! report's body or answers before it, every request the handler is given is one of the
//! requests the client sent, framed from the stream's start (a reference framing with
//! httparse), in order: never one hidden in a body; and every answer the client gets is the
//! handler's, never one hyper wrote itself for bytes it took as a head.
//!
//! Runs the connection as the service does (`serve_checked` on a `Deadlined` stream) over an
//! in-memory pipe with a small buffer, on paused time, so that rests, deadlines and stalled
//! writes happen at the same virtual moments on every run.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::serve_checked;
use crate::answer::Answer;
use crate::body::Body;
use crate::config::Limits;
use crate::io::activity::Activity;
use crate::io::deadline::{Deadlined, Deadlines};
use crate::limits::{MAX_REPORT_BODY, REPORT_PATH};

/// Streams tried; each runs for a few virtual seconds.
const CASES: u64 = 2000;

/// xorshift64*: seeded, the same on every machine, so a failure names its seed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    }
}

/// Requests a body hides: a page, and a chunked request the head reader refuses.
fn hidden(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|k| match rng.below(3) {
            0 => format!("GET /smuggled-{k} HTTP/1.1\r\nHost: h\r\n\r\n"),
            1 => format!(
                "POST /smuggled-{k} HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
            ),
            _ => "x".repeat(rng.below(40)),
        })
        .collect()
}

/// A client's stream: requests of every shape the head reader passes or refuses, reports
/// whose bodies hide requests.
fn client_stream(rng: &mut Rng) -> Vec<u8> {
    let mut stream = String::new();
    for i in 0..1 + rng.below(6) {
        let hiding = 1 + rng.below(4);
        let body = hidden(rng, hiding);
        let request = match rng.below(12) {
            0 | 1 => format!("GET /top-{i} HTTP/1.1\r\nHost: h\r\n\r\n"),
            2..=8 => format!(
                "POST {REPORT_PATH}?top-{i} HTTP/1.1\r\nHost: h\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ),
            9 => format!(
                "GET /top-{i} HTTP/1.1\r\nHost: h\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ),
            10 => format!(
                "POST {REPORT_PATH}?top-{i} HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                body.len()
            ),
            _ => format!(
                "POST {REPORT_PATH}?top-{i} HTTP/1.1\r\nHost: h\r\nContent-Length: {}\r\n\r\n{body}",
                MAX_REPORT_BODY + 1
            ),
        };
        stream.push_str(&request);
    }
    stream.into_bytes()
}

/// The requests a server may serve from `stream`, in order: framed from its start by httparse,
/// each body skipped by its length, up to the first the service takes no body for.
fn reference(stream: &[u8]) -> Vec<String> {
    let mut served = Vec::new();
    let mut at = 0;
    loop {
        let mut fields = [httparse::EMPTY_HEADER; 16];
        let mut request = httparse::Request::new(&mut fields);
        let Ok(httparse::Status::Complete(head)) = request.parse(&stream[at..]) else {
            return served;
        };
        let target = request.path.unwrap_or_default().to_owned();
        let field = |name: &str| {
            request
                .headers
                .iter()
                .find(|f| f.name.eq_ignore_ascii_case(name))
        };
        if field("transfer-encoding").is_some() {
            return served;
        }
        let length = field("content-length").map_or(0, |f| {
            std::str::from_utf8(f.value).unwrap().parse().unwrap()
        });
        let report = request.method == Some("POST") && target.starts_with(REPORT_PATH);
        if length > 0 && (!report || length > MAX_REPORT_BODY) {
            return served;
        }
        served.push(target);
        at += head + length;
    }
}

/// The field every answer of the handler carries.
const MARK: &str = "x-handler";

/// An answer of the handler's, marked as such.
fn answer(body: Bytes) -> Response<Body> {
    let mut response = Response::new(Body::new(body));
    let mark = http::HeaderValue::from_static("1");
    response.headers_mut().insert(MARK, mark);
    response
}

/// How the handler answers a report: reads its body, or answers before it (at once or a
/// little later), as the service's refusals do.
fn answer_report(how: usize, body: Incoming) -> Answer {
    let status = |code| {
        let mut response = answer(Bytes::from_static(b"report\n"));
        *response.status_mut() = code;
        response
    };
    match how {
        0 => Answer::ready(status(StatusCode::UNSUPPORTED_MEDIA_TYPE)),
        1 => Answer::Reading(Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            drop(body);
            status(StatusCode::TOO_MANY_REQUESTS)
        })),
        _ => Answer::Reading(Box::pin(async move {
            let read = tokio::time::timeout(Duration::from_secs(1), body.collect()).await;
            match read {
                Ok(Ok(_)) => status(StatusCode::NO_CONTENT),
                _ => status(StatusCode::REQUEST_TIMEOUT),
            }
        })),
    }
}

/// Serves one client stream, cut into pieces sent with pauses while the client reads its
/// answers with pauses of its own; the targets the handler was given.
async fn serve_one(seed: u64, stream: &[u8]) -> (Vec<String>, String) {
    let mut rng = Rng(seed);
    // A small pipe: a client that pauses its reads stalls the server's writes.
    let (mut client, server) = tokio::io::duplex(64);
    let activity = Activity::new();
    let limits = Limits {
        header_read_timeout: Duration::from_secs(1),
        idle_timeout: Duration::from_secs(5),
        ..Limits::default()
    };
    let deadlines = Deadlines {
        header_read: limits.header_read_timeout,
        idle: limits.idle_timeout,
    };
    let io = Deadlined::new(server, activity.clone(), deadlines);
    let given = Arc::new(Mutex::new(Vec::new()));
    let answers = Arc::new(Mutex::new(Rng(seed ^ 0x9e37_79b9)));
    let counted = activity.clone();
    let service = {
        let given = given.clone();
        service_fn(move |req: Request<Incoming>| {
            let refused = counted.request_arrived().is_some();
            if !refused {
                let target = req.uri().path_and_query().map(|t| t.to_string());
                given.lock().unwrap().push(target.unwrap_or_default());
            }
            let how = answers.lock().unwrap().below(4);
            let answer = if req.method() == Method::POST && !refused {
                answer_report(how, req.into_body())
            } else {
                let page = Bytes::from(vec![b'p'; how * 3000]);
                Answer::ready(answer(page))
            };
            counted.answered();
            answer.keeping_busy(&counted)
        })
    };
    let serving = serve_checked(io, &limits, service, None, activity, None);
    let pieces = {
        let mut pieces = Vec::new();
        let mut rest = stream;
        while !rest.is_empty() {
            let n = (1 + rng.below(80)).min(rest.len());
            let pause = [0, 0, 30, 150, 150, 1500][rng.below(6)];
            pieces.push((&rest[..n], Duration::from_millis(pause)));
            rest = &rest[n..];
        }
        pieces
    };
    let read_pauses: Vec<u64> = (0..64).map(|_| [0, 200, 200][rng.below(3)]).collect();
    let (mut reading, mut writing) = tokio::io::split(&mut client);
    let write = async {
        for (piece, pause) in pieces {
            tokio::time::sleep(pause).await;
            if writing.write_all(piece).await.is_err() {
                return;
            }
        }
        let _ = writing.shutdown().await;
    };
    let mut answers = Vec::new();
    let read = async {
        let mut chunk = [0u8; 256];
        for pause in read_pauses.iter().cycle() {
            tokio::time::sleep(Duration::from_millis(*pause)).await;
            match reading.read(&mut chunk).await {
                Ok(n) if n > 0 => answers.extend_from_slice(&chunk[..n]),
                _ => return,
            }
        }
    };
    let served = async {
        let _ = serving.await;
    };
    let all = async { tokio::join!(write, read, served) };
    let ended = tokio::time::timeout(Duration::from_secs(600), all).await;
    assert!(ended.is_ok(), "seed {seed}: the connection never ended");
    let given = Arc::try_unwrap(given).unwrap().into_inner().unwrap();
    (
        given,
        String::from_utf8_lossy(&answers).to_ascii_lowercase(),
    )
}

/// Whether every complete answer head in `answers` carries the handler's mark (the last may be
/// cut short by the connection's end).
fn all_heads_marked(answers: &str) -> bool {
    answers.split("http/1.1 ").skip(1).all(|answer| {
        answer
            .split_once("\r\n\r\n")
            .is_none_or(|(head, _)| head.contains(&format!("\r\n{MARK}: 1")))
    })
}

#[tokio::test(start_paused = true)]
async fn every_request_served_is_one_the_client_sent_outside_any_body() {
    for seed in 1..=CASES {
        let stream = client_stream(&mut Rng(seed.wrapping_mul(0x2545_f491)));
        let (given, answers) = serve_one(seed, &stream).await;
        let sent = reference(&stream);
        let stream = String::from_utf8_lossy(&stream);
        assert!(
            sent.starts_with(&given),
            "seed {seed}: served {given:?}, but the client sent {sent:?} in\n{stream}"
        );
        assert!(
            all_heads_marked(&answers),
            "seed {seed}: an answer not the handler's in\n{answers}\nto\n{stream}"
        );
    }
}
