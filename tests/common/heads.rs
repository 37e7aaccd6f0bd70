//! The HTTP/1 head reader held to httparse, the parser hyper runs (shared by tests/properties.rs
//! and fuzz/fuzz_targets/heads.rs): the same bytes, split at any read boundaries, go through the
//! reader's scanner and through httparse, and
//! - both accept or refuse alike, and an accepted head has the same method, target, version
//!   and fields (cookie values aside: the reader drops them);
//! - the reader never keeps more than its limits (`kept ≤ filtered_max`) after any read;
//! - its work is at most `WORK_PER_BYTE` per byte and `WORK_PER_READ` per read.
//!
//! The reference reads each head with httparse, charges its request line and its fields as the
//! limits document (cookie lines as their marker), then applies what hyper asks of the parts
//! (a method, a URI, field names, `Content-Length` digits), written here from the `http` types.
#![allow(dead_code)]

use mcp_sandbox_proxy::{HeadLimits, HeadScanner, MAX_REPORT_BODY, REPORT_PATH, Refusal};

/// Bounds on the reader's work, in its own units (see `HeadScanner::work`).
pub const WORK_PER_BYTE: u64 = 16;
pub const WORK_PER_READ: u64 = 2;

const MAX_FIELDS: usize = 100;
const COOKIE_LINE: usize = "cookie: -\r\n".len();

/// One head as hyper would see it.
#[derive(Debug, PartialEq, Eq)]
pub struct Head {
    method: String,
    target: String,
    version: u8,
    fields: Vec<(String, Vec<u8>)>,
    /// A report's body, as much of it as arrived.
    body: Vec<u8>,
}

/// What became of one head.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed(Head),
    /// Refused; the reason is `None` where the reference cannot name one (httparse refused the
    /// bytes before the head's end: a reader over a limit names the limit first).
    Refused(Option<Refusal>),
}

/// Feeds `input` to a scanner in reads that end at `cuts` (offsets, any order, any value), and
/// checks every property against the reference. Panics with the reason.
pub fn check_heads(input: &[u8], cuts: &[usize], limits: HeadLimits) {
    let mut scanner = HeadScanner::new(limits);
    let mut ends: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    ends.push(input.len());
    ends.sort_unstable();
    let mut reads = 0;
    let mut at = 0;
    for end in ends {
        if end == at {
            continue;
        }
        scanner.scan(&input[at..end]);
        reads += 1;
        at = end;
        assert!(
            scanner.kept() <= limits.filtered_max(),
            "kept {} bytes, over {} ({limits:?}) for {:?}",
            scanner.kept(),
            limits.filtered_max(),
            String::from_utf8_lossy(input)
        );
    }
    let bound = WORK_PER_BYTE * input.len() as u64 + WORK_PER_READ * reads;
    assert!(
        scanner.work() <= bound,
        "{} units of work for {} bytes in {reads} reads",
        scanner.work(),
        input.len()
    );
    let read = reader_outcomes(&scanner);
    let expected = reference(input, limits);
    let agrees = read == expected
        || (scanner.refusal().is_none()
            && read.len() + 1 == expected.len()
            && expected[..read.len()] == read[..]
            && expected.last() == Some(&Outcome::Refused(None)))
        || (scanner.refusal().is_some()
            && read.len() == expected.len()
            && read[..read.len() - 1] == expected[..read.len() - 1]
            && expected.last() == Some(&Outcome::Refused(None)));
    assert!(
        agrees,
        "the reader and httparse differ on {:?} ({limits:?}):\n reader:   {read:?}\n httparse: {expected:?}",
        String::from_utf8_lossy(input)
    );
}

/// The heads the scanner passed on, read back with httparse, then its refusal.
fn reader_outcomes(scanner: &HeadScanner) -> Vec<Outcome> {
    let mut out = scanner.pending();
    let mut outcomes = Vec::new();
    if scanner.refusal().is_some() {
        let request = REFUSAL_REQUEST;
        out = out
            .strip_suffix(request.as_bytes())
            .unwrap_or_else(|| panic!("a refusal ends what the reader passes: {out:?}"));
    }
    while !out.is_empty() {
        let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
        let mut request = httparse::Request::new(&mut fields);
        let Ok(httparse::Status::Complete(n)) = request.parse(out) else {
            panic!(
                "the reader passed what httparse cannot read: {:?}",
                String::from_utf8_lossy(out)
            );
        };
        let mut head = head_of(&request);
        let body = report_body(&request).min(out.len() - n);
        head.body = out[n..n + body].to_vec();
        outcomes.push(Outcome::Passed(head));
        out = &out[n + body..];
    }
    if let Some(refusal) = scanner.refusal() {
        outcomes.push(Outcome::Refused(Some(refusal)));
    }
    outcomes
}

/// What the reader hands hyper in a refused head's place, whatever the refusal: the refusal
/// itself travels beside it, typed (see `limits`).
const REFUSAL_REQUEST: &str = "GET / HTTP/1.1\r\nconnection: close\r\n\r\n";

fn head_of(request: &httparse::Request<'_, '_>) -> Head {
    Head {
        method: request.method.unwrap_or_default().to_owned(),
        target: request.path.unwrap_or_default().to_owned(),
        version: request.version.unwrap_or_default(),
        fields: request
            .headers
            .iter()
            .map(|f| {
                if f.name.eq_ignore_ascii_case("cookie") {
                    ("cookie".to_owned(), b"-".to_vec())
                } else {
                    (f.name.to_owned(), f.value.to_vec())
                }
            })
            .collect(),
        body: Vec::new(),
    }
}

/// The length of the body a head that passed announces: a report's `Content-Length`, or 0.
fn report_body(request: &httparse::Request<'_, '_>) -> usize {
    let report = request.method == Some("POST")
        && request.path.unwrap_or_default().split('?').next() == Some(REPORT_PATH);
    let length = request
        .headers
        .iter()
        .find(|f| f.name.eq_ignore_ascii_case("content-length"));
    match length {
        Some(field) if report => std::str::from_utf8(field.value).unwrap().parse().unwrap(),
        _ => 0,
    }
}

/// What httparse, the documented limits and hyper's rules make of each head in `input`, in
/// order, up to the first refusal or the first head that has not ended.
pub fn reference(input: &[u8], limits: HeadLimits) -> Vec<Outcome> {
    let mut outcomes = Vec::new();
    let mut rest = input;
    loop {
        let mut fields = [httparse::EMPTY_HEADER; MAX_FIELDS];
        let mut request = httparse::Request::new(&mut fields);
        match request.parse(rest) {
            Ok(httparse::Status::Partial) => return outcomes,
            Ok(httparse::Status::Complete(n)) => {
                let mut outcome = judge(&request, &rest[..n], limits);
                // A report's body follows its head; the next head starts after it.
                let mut next = n;
                if let Outcome::Passed(head) = &mut outcome {
                    let body = report_body(&request).min(rest.len() - n);
                    head.body = rest[n..n + body].to_vec();
                    next += body;
                }
                let refused = matches!(outcome, Outcome::Refused(_));
                outcomes.push(outcome);
                if refused {
                    return outcomes;
                }
                rest = &rest[next..];
            }
            Err(_) => {
                outcomes.push(Outcome::Refused(None));
                return outcomes;
            }
        }
    }
}

/// One complete head: the limits first, then what hyper asks of its parts.
fn judge(request: &httparse::Request<'_, '_>, head: &[u8], limits: HeadLimits) -> Outcome {
    let offset = |s: &[u8]| s.as_ptr() as usize - head.as_ptr() as usize;
    let line_end = |from: usize| from + head[from..].iter().position(|b| *b == b'\n').unwrap() + 1;
    let method = request.method.unwrap_or_default();
    // Empty lines before the request line cost nothing.
    let start = offset(method.as_bytes());
    let request_line = line_end(start) - start;
    let mut field_bytes = head.len() - line_end(start);
    for field in request.headers.iter() {
        if field.name.eq_ignore_ascii_case("cookie") {
            let start = offset(field.name.as_bytes());
            let end = line_end(offset(field.value) + field.value.len());
            field_bytes = field_bytes - (end - start) + COOKIE_LINE;
        }
    }
    if request_line > limits.request_line {
        return Outcome::Refused(Some(Refusal::TargetTooLong));
    }
    if field_bytes > limits.fields {
        return Outcome::Refused(Some(Refusal::FieldsTooLarge));
    }
    let target = request.path.unwrap_or_default();
    if target.len() > usize::from(u16::MAX) - 1 {
        return Outcome::Refused(Some(Refusal::TargetTooLong));
    }
    if http::Method::from_bytes(method.as_bytes()).is_err() || http::Uri::try_from(target).is_err()
    {
        return Outcome::Refused(Some(Refusal::Malformed));
    }
    let mut malformed = false;
    for field in request.headers.iter() {
        if field.name.len() >= 1 << 16 {
            return Outcome::Refused(Some(Refusal::FieldsTooLarge));
        }
        malformed |= http::HeaderName::from_bytes(field.name.as_bytes()).is_err();
    }
    if malformed {
        return Outcome::Refused(Some(Refusal::Malformed));
    }
    for field in request.headers.iter() {
        if field.name.eq_ignore_ascii_case("transfer-encoding") {
            return Outcome::Refused(Some(Refusal::Body));
        }
    }
    // hyper's Content-Length: digits only, nothing else (no sign, no list, not empty). Any
    // length but zero is a body, whether or not it fits hyper's u64.
    let lengths: Vec<&[u8]> = request
        .headers
        .iter()
        .filter(|f| f.name.eq_ignore_ascii_case("content-length"))
        .map(|f| f.value)
        .collect();
    let digits = |v: &[u8]| !v.is_empty() && v.iter().all(u8::is_ascii_digit);
    // A CSP report (POST /csp-report) may carry one length of at most MAX_REPORT_BODY.
    if method == "POST" && target.split('?').next() == Some(REPORT_PATH) {
        if lengths.len() > 1 || lengths.iter().any(|v| !digits(v)) {
            return Outcome::Refused(Some(Refusal::Malformed));
        }
        // Compared as a big number: leading zeros dropped, then by length, then by digits.
        let cap = MAX_REPORT_BODY.to_string();
        let over = lengths.first().is_some_and(|v| {
            let v = std::str::from_utf8(v).unwrap().trim_start_matches('0');
            (v.len(), v) > (cap.len(), cap.as_str())
        });
        if over {
            return Outcome::Refused(Some(Refusal::ReportTooLarge));
        }
        return Outcome::Passed(head_of(request));
    }
    if lengths
        .iter()
        .any(|v| digits(v) && v.iter().any(|b| *b != b'0'))
    {
        return Outcome::Refused(Some(Refusal::Body));
    }
    if lengths.iter().any(|v| !digits(v)) {
        return Outcome::Refused(Some(Refusal::Malformed));
    }
    Outcome::Passed(head_of(request))
}

/// Pieces of heads: request lines, fields and line ends a client may send, good and hostile.
const HEAD_PIECES: &[&[u8]] = &[
    b"GET / HTTP/1.1\r\n",
    b"GET /sandbox.html?csp=%7B%7D HTTP/1.1\r\n",
    b"HEAD /a HTTP/1.0\n",
    b"POST / HTTP/1.1\r\n",
    b"POST /csp-report?from=view HTTP/1.1\r\n",
    b"POST /csp-report HTTP/1.1\r\n",
    b"GET /csp-report HTTP/1.1\r\n",
    b"Content-Length: 65536\r\n",
    b"Content-Length: 0065537\r\n",
    b"Content-Length: 99999999999999999999999\r\n",
    b"GET  / HTTP/1.1\r\n",
    b"GET http://a.test/ HTTP/1.1\r\n",
    b"GET /a#b HTTP/1.1\r\n",
    b"G@T / HTTP/1.1\r\n",
    b"GET / HTTP/2.0\r\n",
    b"Host: chat.sandbox.test\r\n",
    b"Accept: */*\n",
    b"Cookie: a=1; b=2\r\n",
    b"cookie:\r\n",
    b"COOKIE:   x \t\r\n",
    b"Cookie: a\rContent-Length: 40\r\n",
    b"Cookie: \x00\x01\x7f\r\n",
    b"Cookie: \xc3\xa9\r\n",
    b"Cookie : a\r\n",
    b"Cookies: a\r\n",
    b"Cooki",
    b"e: x\r\n",
    b"Content-Length: 0\r\n",
    b"Content-Length: 5\r\n",
    b"Content-Length:\r\n",
    b"Content-Length: 0, 0\r\n",
    b"Transfer-Encoding: chunked\r\n",
    b" folded\r\n",
    b"Bad Name: v\r\n",
    b"X: a\x00b\r\n",
    b"X: a\rb\r\n",
    b"X-Long: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\r\n",
    b"a:b\n",
    b"\r\n",
    b"\r\n",
    b"\n",
    b"\n",
    b"\r",
    b"\r\r\n",
    b"  \r\n",
    b":\r\n",
];

/// A head made of random pieces, runs of one byte and a random byte; `below(n)` draws from
/// `0..n`.
pub fn random_head(below: &mut impl FnMut(usize) -> usize) -> Vec<u8> {
    let mut input = Vec::new();
    for _ in 0..below(24) + 1 {
        input.extend_from_slice(HEAD_PIECES[below(HEAD_PIECES.len())]);
        if below(16) == 0 {
            // A run of one byte: many blank lines, bare CRs, a long value.
            let byte = [b'\n', b'\r', b'a', b' ', b'\t', 0][below(6)];
            input.extend(std::iter::repeat_n(byte, below(300)));
        }
    }
    if below(6) == 0 {
        let at = below(input.len() + 1);
        input.insert(at, below(256) as u8);
    }
    input
}
