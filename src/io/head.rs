//! HTTP/1 request heads, checked before hyper reads them: cookie values are discarded unread,
//! and a head that breaks a limit or cannot be parsed is replaced by a request that the service
//! answers with its own error, so that every answer carries the security headers.
//!
//! hyper answers a head it refuses itself (`400`, `431`) with a bare status line, and counts a
//! `Cookie` header against the same limit as every other field. Views on a sandbox name can set
//! cookies for it (views are cross-site, so browsers partition them, but partitioned cookies
//! are still sent), and a few hundred of them would cost every later view its page. So each
//! head is read here first, a line at a time:
//! - a `Cookie` field keeps its name and loses its value (`cookie: -`), however long it was;
//!   the service never reads cookies, it only learns that some were sent, and clears them;
//! - the request line (the query has its own limit, checked by the service with a precise
//!   `400`) and the other fields are counted against their own limits;
//! - a complete head is parsed as hyper will parse it; one hyper would refuse, one over a
//!   limit, and one that announces a body (the page takes none) is replaced by a refusal
//!   request naming the reason (with `connection: close`).
//!
//! A head over a limit is read to its end, unkept, before the refusal is handed on, and what
//! the client sends after it is read and dropped: closing a socket with unread bytes resets
//! it, and the reset can destroy the answer on its way to the client. Both are bounded by
//! `MAX_DISCARD` (and, like every read, by the connection's deadlines).

use std::io;
use std::mem::MaybeUninit;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

/// The field a refusal request carries; its value is a [`Refusal`] token.
pub(crate) const REFUSAL_FIELD: &str = "x-mcp-sandbox-proxy-refused";

/// At most this many fields in a head, as hyper is configured (`max_headers`).
pub(crate) const MAX_FIELDS: usize = 100;

/// What a head may hold besides its query: method, path, version and their separators.
pub(crate) const REQUEST_LINE_SLACK: usize = 4096;

/// The most a refused connection reads and drops before it gives up on a clean close.
const MAX_DISCARD: usize = 1 << 20;

/// Why a head was not passed on. The service answers each with its own status and text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The fields other than `Cookie` are over `limits.max_header_bytes`.
    FieldsTooLarge,
    /// The request line is longer than the query limit and the slack allow.
    TargetTooLong,
    /// hyper could not parse it.
    Malformed,
    /// It announces a body (`Content-Length` other than 0, or `Transfer-Encoding`).
    Body,
}

impl Refusal {
    const ALL: [Refusal; 4] = [
        Refusal::FieldsTooLarge,
        Refusal::TargetTooLong,
        Refusal::Malformed,
        Refusal::Body,
    ];

    pub(crate) fn token(self) -> &'static str {
        match self {
            Refusal::FieldsTooLarge => "fields-too-large",
            Refusal::TargetTooLong => "target-too-long",
            Refusal::Malformed => "malformed",
            Refusal::Body => "body",
        }
    }

    pub(crate) fn from_token(token: &[u8]) -> Option<Refusal> {
        Refusal::ALL
            .into_iter()
            .find(|r| r.token().as_bytes() == token)
    }

    /// The request hyper reads instead of the refused head.
    fn request(self) -> String {
        format!(
            "GET / HTTP/1.1\r\n{REFUSAL_FIELD}: {}\r\nconnection: close\r\n\r\n",
            self.token()
        )
    }
}

/// How much of a head may be spent on what.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HeadLimits {
    /// Bytes of the request line, line ending included.
    pub(crate) request_line: usize,
    /// Bytes of every field line but `Cookie` lines, line endings included.
    pub(crate) fields: usize,
}

impl HeadLimits {
    /// The most a head can be once filtered: what hyper's buffer must hold.
    pub(crate) fn filtered_max(&self) -> usize {
        // Each discarded cookie line still costs its marker, which counts as a field.
        self.request_line + self.fields + 2
    }
}

const COOKIE_NAME: &[u8] = b"cookie:";
const COOKIE_MARKER: &[u8] = b"cookie: -";
/// What a head's buffer starts with: a browser's head is a few hundred bytes.
const HEAD_CAPACITY: usize = 1024;

/// Where the scanner is within the current head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    /// The request line (and any empty lines before it).
    Request,
    /// The start of a field line: `matched` bytes of `cookie:` seen so far (kept in `head`
    /// until the name is known).
    FieldStart { matched: usize },
    /// Inside a field line other than `Cookie`.
    Field,
    /// Inside a `Cookie` line: bytes up to the line feed are dropped.
    Cookie,
    /// Past a limit: the rest of the head is dropped, then `refusal` is handed on.
    Discard {
        refusal: Refusal,
        /// Bytes of the current line so far, line endings not counted.
        line: usize,
    },
}

/// Wraps a connection's byte stream on the way to hyper's HTTP/1 reader.
pub(crate) struct HeadFilter<S> {
    inner: S,
    limits: HeadLimits,
    line: Line,
    /// Bytes of the request line and of the fields so far.
    request_line_bytes: usize,
    field_bytes: usize,
    /// The current head as hyper will see it; empty between heads, so an idle connection holds
    /// no buffer.
    head: Vec<u8>,
    /// Checked heads (or a refusal request) that hyper has not read yet.
    out: Vec<u8>,
    /// How much of `out` hyper has read.
    out_read: usize,
    /// A refusal was queued: what the client sends next is dropped, and after it hyper reads
    /// end of file (it answers all the same: half-closed connections are served).
    refused: bool,
    /// Bytes dropped while over a limit or after a refusal.
    discarded: usize,
}

impl<S> HeadFilter<S> {
    pub(crate) fn new(inner: S, limits: HeadLimits) -> Self {
        HeadFilter {
            inner,
            limits,
            line: Line::Request,
            request_line_bytes: 0,
            field_bytes: 0,
            head: Vec::new(),
            out: Vec::new(),
            out_read: 0,
            refused: false,
            discarded: 0,
        }
    }

    /// Scans bytes read from the client; complete heads (or a refusal) go to `out`. A run of
    /// bytes up to a line's end is taken at once when it stays within its limit; a cookie's
    /// value is skipped at once. Everything else, and any run that would pass a limit, goes a
    /// byte at a time through `scan_byte`, which the runs are equivalent to.
    fn scan(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() && !self.refused {
            let taken = match self.line {
                Line::Request => self.scan_request_run(bytes),
                Line::Field => self.scan_field_run(bytes),
                Line::Cookie => self.skip_cookie_run(bytes),
                _ => None,
            };
            let taken = taken.unwrap_or_else(|| {
                self.scan_byte(bytes[0]);
                1
            });
            bytes = &bytes[taken..];
        }
    }

    /// The bytes up to and including the next line feed, or all of them.
    fn line_run(bytes: &[u8]) -> usize {
        bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |end| end + 1)
    }

    /// Keeps the bytes up to the line's end if there are at most `room` of them: how many, and
    /// whether they end the line.
    fn keep_line_run(&mut self, bytes: &[u8], room: usize) -> Option<(usize, bool)> {
        let run = Self::line_run(bytes);
        if run > room {
            return None;
        }
        self.keep_run(&bytes[..run]);
        Some((run, bytes[run - 1] == b'\n'))
    }

    fn scan_request_run(&mut self, bytes: &[u8]) -> Option<usize> {
        let room = self
            .limits
            .request_line
            .saturating_sub(self.request_line_bytes);
        let (run, ended) = self.keep_line_run(bytes, room)?;
        self.request_line_bytes += run;
        if ended && self.head.iter().any(|b| !b.is_ascii_whitespace()) {
            self.line = Line::FieldStart { matched: 0 };
        }
        Some(run)
    }

    fn scan_field_run(&mut self, bytes: &[u8]) -> Option<usize> {
        let room = self.limits.fields.saturating_sub(self.field_bytes);
        let (run, ended) = self.keep_line_run(bytes, room)?;
        self.field_bytes += run;
        if ended {
            self.line = Line::FieldStart { matched: 0 };
        }
        Some(run)
    }

    fn skip_cookie_run(&mut self, bytes: &[u8]) -> Option<usize> {
        let run = Self::line_run(bytes);
        if bytes[run - 1] == b'\n' {
            self.scan_byte(b'\n');
        }
        Some(run)
    }

    fn scan_byte(&mut self, byte: u8) {
        match self.line {
            Line::Request => {
                self.keep(byte);
                self.request_line_bytes += 1;
                if byte == b'\n' && self.head.iter().any(|b| !b.is_ascii_whitespace()) {
                    self.line = Line::FieldStart { matched: 0 };
                }
                if self.request_line_bytes > self.limits.request_line {
                    self.discard_rest(Refusal::TargetTooLong);
                }
            }
            Line::FieldStart { matched: 0 } if byte == b'\r' => self.keep(byte),
            Line::FieldStart { matched: 0 } if byte == b'\n' => {
                self.keep(byte);
                self.end_of_head();
            }
            Line::FieldStart { matched } => {
                if byte.to_ascii_lowercase() != COOKIE_NAME[matched] {
                    // Not a cookie line: the bytes held back so far count as field bytes.
                    self.line = Line::Field;
                    self.count_field(matched);
                    self.field_byte(byte);
                } else if matched + 1 < COOKIE_NAME.len() {
                    self.keep(byte);
                    self.line = Line::FieldStart {
                        matched: matched + 1,
                    };
                } else {
                    self.head.truncate(self.head.len() - matched);
                    self.head.extend_from_slice(COOKIE_MARKER);
                    self.line = Line::Cookie;
                    self.count_field(COOKIE_MARKER.len());
                }
            }
            Line::Field => self.field_byte(byte),
            Line::Cookie => {
                if byte == b'\n' {
                    self.head.extend_from_slice(b"\r\n");
                    self.line = Line::FieldStart { matched: 0 };
                    self.count_field(2);
                }
            }
            Line::Discard { refusal, line } => {
                self.discarded += 1;
                let line = match byte {
                    b'\n' if line == 0 => return self.refuse(refusal),
                    b'\n' => 0,
                    b'\r' => line,
                    _ => line + 1,
                };
                self.line = Line::Discard { refusal, line };
                if self.discarded > MAX_DISCARD {
                    self.refuse(refusal);
                }
            }
        }
    }

    /// A byte of a field line other than `Cookie` (unless a limit was just passed).
    fn field_byte(&mut self, byte: u8) {
        if matches!(self.line, Line::Discard { .. }) {
            return;
        }
        self.keep(byte);
        if byte == b'\n' {
            self.line = Line::FieldStart { matched: 0 };
        }
        self.count_field(1);
    }

    fn keep(&mut self, byte: u8) {
        self.keep_run(&[byte]);
    }

    fn keep_run(&mut self, bytes: &[u8]) {
        if self.head.capacity() == 0 {
            // Most heads fit: one allocation per head rather than a doubling series.
            self.head.reserve(HEAD_CAPACITY);
        }
        self.head.extend_from_slice(bytes);
    }

    fn count_field(&mut self, bytes: usize) {
        self.field_bytes += bytes;
        if self.field_bytes > self.limits.fields {
            self.discard_rest(Refusal::FieldsTooLarge);
        }
    }

    /// Drops what is kept of the head and the rest of it as it arrives, until the blank line
    /// that ends the head.
    fn discard_rest(&mut self, refusal: Refusal) {
        let line = match self.line {
            Line::Discard { .. } => return,
            Line::FieldStart { matched: 0 } => 0,
            _ => 1,
        };
        self.head = Vec::new();
        self.line = Line::Discard { refusal, line };
    }

    fn end_of_head(&mut self) {
        let head = std::mem::take(&mut self.head);
        match check(&head) {
            // The head's own allocation becomes what hyper reads: no copy.
            Ok(()) if self.out.is_empty() => self.out = head,
            Ok(()) => self.out.extend_from_slice(&head),
            Err(refusal) => self.refuse(refusal),
        }
        self.line = Line::Request;
        self.request_line_bytes = 0;
        self.field_bytes = 0;
    }

    fn refuse(&mut self, refusal: Refusal) {
        if self.refused {
            return;
        }
        self.refused = true;
        self.head = Vec::new();
        self.out.extend_from_slice(refusal.request().as_bytes());
    }
}

/// A request target made only of bytes every URI parser takes in a path or query (RFC 3986's
/// unreserved and sub-delims, `:@/?%`), starting with `/`: what browsers send. `http`'s parser
/// takes each of them (a unit test asks it), so such a target needs no second parse here.
fn is_plain_origin_form(target: &str) -> bool {
    target.starts_with('/') && target.bytes().all(|b| PLAIN_TARGET_BYTES[usize::from(b)])
}

/// The bytes `is_plain_origin_form` takes, as a table: one lookup per byte.
const PLAIN_TARGET_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let marks = b"-._~!$&'()*+,;=:@/?%";
    let mut i = 0;
    while i < marks.len() {
        table[marks[i] as usize] = true;
        i += 1;
    }
    table
};

/// Whether hyper would take this (filtered, complete) head, and whether it announces a body.
fn check(head: &[u8]) -> Result<(), Refusal> {
    // Left uninitialised, as hyper does: httparse writes each field before it is read, and
    // filling 100 empty fields for every head cost more than parsing it.
    let mut fields = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_FIELDS];
    let mut request = httparse::Request::new(&mut []);
    match request.parse_with_uninit_headers(head, &mut fields) {
        Ok(httparse::Status::Complete(_)) => {}
        Err(httparse::Error::TooManyHeaders) => return Err(Refusal::FieldsTooLarge),
        Ok(httparse::Status::Partial) | Err(_) => return Err(Refusal::Malformed),
    }
    // hyper builds these types from the parts; what they refuse, hyper answers with a 400.
    let method_ok = request
        .method
        .is_some_and(|m| http::Method::from_bytes(m.as_bytes()).is_ok());
    let target_ok = request
        .path
        .is_some_and(|p| is_plain_origin_form(p) || http::Uri::try_from(p).is_ok());
    if !method_ok || !target_ok {
        return Err(Refusal::Malformed);
    }
    for field in request.headers.iter() {
        if http::HeaderName::from_bytes(field.name.as_bytes()).is_err()
            || http::HeaderValue::from_bytes(field.value).is_err()
        {
            return Err(Refusal::Malformed);
        }
        let announces_body = field.name.eq_ignore_ascii_case("transfer-encoding")
            || field.name.eq_ignore_ascii_case("content-length")
                && field.value.iter().any(|b| *b != b'0');
        if announces_body {
            return Err(Refusal::Body);
        }
    }
    Ok(())
}

impl<S: AsyncRead + Unpin> HeadFilter<S> {
    /// Reads until there is something for hyper: a checked head (or a refusal), or the end of
    /// the stream. Resolves to whether there is, without handing anything over, so that a
    /// connection at rest can wait for its next request before it builds a reader for it.
    pub(crate) fn poll_next_head(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<bool>> {
        loop {
            if self.out_read < self.out.len() {
                return Poll::Ready(Ok(true));
            }
            if self.refused && self.discarded > MAX_DISCARD {
                return Poll::Ready(Ok(false));
            }
            // Uninitialised: a plain socket writes before anything is read (TLS initialises
            // what it is given itself), and zeroing it cost more than the scan.
            let mut chunk = [MaybeUninit::<u8>::uninit(); 4096];
            let mut read = ReadBuf::uninit(&mut chunk);
            ready!(Pin::new(&mut self.inner).poll_read(cx, &mut read))?;
            let filled = read.filled().len();
            if filled == 0 {
                // End of file: a partial head has no answer (hyper would give none either).
                self.head = Vec::new();
                return Poll::Ready(Ok(false));
            }
            if self.refused {
                self.discarded += filled;
                continue;
            }
            self.scan(read.filled());
        }
    }

    /// Puts back bytes hyper read from here and did not use: they were checked already, so
    /// they come before anything still to be read.
    pub(crate) fn unread(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut out = Vec::with_capacity(bytes.len() + self.out.len() - self.out_read);
        out.extend_from_slice(bytes);
        out.extend_from_slice(&self.out[self.out_read..]);
        self.out = out;
        self.out_read = 0;
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for HeadFilter<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if !ready!(this.poll_next_head(cx))? {
            return Poll::Ready(Ok(()));
        }
        let pending = &this.out[this.out_read..];
        let n = pending.len().min(buf.remaining());
        buf.put_slice(&pending[..n]);
        this.out_read += n;
        if this.out_read == this.out.len() {
            this.out_read = 0;
            // Give the allocation back: an idle keep-alive connection keeps nothing.
            this.out = Vec::new();
        }
        Poll::Ready(Ok(()))
    }
}

write_through!(HeadFilter);

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: HeadLimits = HeadLimits {
        request_line: 64,
        fields: 64,
    };

    /// What hyper would read for `input`, fed in pieces of `step` bytes.
    fn filtered(input: &[u8], step: usize) -> (String, bool) {
        let mut filter = HeadFilter::new((), LIMITS);
        for piece in input.chunks(step) {
            filter.scan(piece);
        }
        (
            String::from_utf8_lossy(&filter.out).into_owned(),
            filter.refused,
        )
    }

    /// What the byte-at-a-time state machine alone makes of `input`.
    fn filtered_bytewise(input: &[u8], limits: HeadLimits) -> (Vec<u8>, bool) {
        let mut filter = HeadFilter::new((), limits);
        for byte in input {
            if filter.refused {
                break;
            }
            filter.scan_byte(*byte);
        }
        (filter.out.to_vec(), filter.refused)
    }

    #[test]
    fn runs_are_scanned_as_the_bytes_one_by_one_would_be() {
        // Heads built from pieces that meet every state and limit: request lines and fields
        // of many lengths, cookie lines (and near misses), blank lines, bare line feeds.
        let pieces: [&[u8]; 12] = [
            b"GET /?q=1 HTTP/1.1\r\n",
            b"Host: a.test\r\n",
            b"Cookie: a=1; b=2\r\n",
            b"cookie:x\n",
            b"Cookies-Not: 1\r\n",
            b"X-Long: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv\r\n",
            b"\r\n",
            b"\n",
            b"  \r\n",
            b"Accept: */*\r\n",
            b"GET /?qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq HTTP/1.1\r\n",
            b"Content-Length: 5\r\n",
        ];
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize % n
        };
        for limits in [
            LIMITS,
            HeadLimits {
                request_line: 40,
                fields: 120,
            },
        ] {
            for _ in 0..2_000 {
                let mut input = Vec::new();
                for _ in 0..next(12) + 1 {
                    input.extend_from_slice(pieces[next(pieces.len())]);
                }
                let expected = filtered_bytewise(&input, limits);
                for step in [1, 2, 5, 13, input.len()] {
                    let mut filter = HeadFilter::new((), limits);
                    for piece in input.chunks(step) {
                        filter.scan(piece);
                    }
                    let got = (filter.out.to_vec(), filter.refused);
                    assert_eq!(
                        got,
                        expected,
                        "step {step}: {:?}",
                        String::from_utf8_lossy(&input)
                    );
                }
            }
        }
    }

    #[test]
    fn every_plain_target_byte_is_one_http_takes_in_a_path_and_a_query() {
        for b in 0..=u8::MAX {
            let c = char::from(b);
            let target = format!("/a{c}b?c{c}d{c}");
            if is_plain_origin_form(&target) {
                assert!(http::Uri::try_from(target.as_str()).is_ok(), "{b:#04x}");
            }
        }
        assert!(!is_plain_origin_form("*"));
        assert!(!is_plain_origin_form("http://a/"));
        assert!(!is_plain_origin_form("/a#b"));
        assert!(!is_plain_origin_form("/a b"));
        assert!(is_plain_origin_form(
            "/?csp=%7B%22connectDomains%22%3A%5B%5D%7D"
        ));
    }

    #[test]
    fn cookie_values_are_dropped_whatever_their_size_and_split() {
        let cookies = format!("Cookie: a={}\r\nCOOKIE: b=2\r\n", "x".repeat(100_000));
        let head = format!("GET / HTTP/1.1\r\nHost: a.test\r\n{cookies}Accept: */*\r\n\r\n");
        for step in [1, 3, 7, 4096] {
            let (out, refused) = filtered(head.as_bytes(), step);
            assert!(!refused, "step {step}");
            assert_eq!(
                out,
                "GET / HTTP/1.1\r\nHost: a.test\r\ncookie: -\r\ncookie: -\r\nAccept: */*\r\n\r\n",
                "step {step}"
            );
        }
    }

    #[test]
    fn a_field_that_only_starts_like_cookie_is_kept() {
        let head = "GET / HTTP/1.1\r\nCookies-Not: 1\r\nCook: 2\r\n\r\n";
        assert_eq!(filtered(head.as_bytes(), 1), (head.to_owned(), false));
    }

    #[test]
    fn pipelined_heads_pass_in_order() {
        let two = "GET /a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /b HTTP/1.1\r\nHost: x\r\n\r\n";
        assert_eq!(filtered(two.as_bytes(), 5), (two.to_owned(), false));
    }

    #[test]
    fn each_broken_limit_and_form_is_refused_with_its_reason() {
        let roomy = HeadLimits {
            request_line: 64,
            fields: 4096,
        };
        let long_line = format!("GET /?{} HTTP/1.1\r\n\r\n", "q".repeat(100));
        let long_fields = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "v".repeat(100));
        let many_fields = format!("GET / HTTP/1.1\r\n{}\r\n", "a:b\r\n".repeat(101));
        let cases = [
            (long_line.as_str(), LIMITS, Refusal::TargetTooLong),
            (long_fields.as_str(), LIMITS, Refusal::FieldsTooLarge),
            (many_fields.as_str(), roomy, Refusal::FieldsTooLarge),
            (
                "GET / HTTP/1.1\r\nBad Name: v\r\n\r\n",
                roomy,
                Refusal::Malformed,
            ),
            (
                "GET http://[::1 HTTP/1.1\r\n\r\n",
                roomy,
                Refusal::Malformed,
            ),
            ("NOT HTTP\r\n\r\n", roomy, Refusal::Malformed),
            (
                "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
                roomy,
                Refusal::Body,
            ),
            (
                "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
                roomy,
                Refusal::Body,
            ),
        ];
        for (input, limits, refusal) in cases {
            let mut filter = HeadFilter::new((), limits);
            filter.scan(input.as_bytes());
            assert!(filter.refused, "{input:?}");
            assert_eq!(
                String::from_utf8_lossy(&filter.out),
                refusal.request(),
                "{input:?}"
            );
        }
    }

    #[test]
    fn a_head_with_an_empty_body_is_passed() {
        let head = "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(filtered(head.as_bytes(), 2), (head.to_owned(), false));
    }

    #[test]
    fn an_over_limit_head_is_read_to_its_end_before_the_refusal() {
        // Over the fields limit exactly at a line's end, then at its middle; byte by byte too.
        let at_line_end = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "v".repeat(60));
        let mid_line = format!("GET / HTTP/1.1\r\nX: {}\r\nY: z\r\n\r\n", "v".repeat(90));
        for input in [at_line_end, mid_line] {
            for step in [1, 5, 4096] {
                let mut filter = HeadFilter::new((), LIMITS);
                let (before_end, end) = input.split_at(input.len() - 2);
                for piece in before_end.as_bytes().chunks(step) {
                    filter.scan(piece);
                }
                assert!(
                    !filter.refused,
                    "not before the head's end: {input:?} {step}"
                );
                assert!(filter.head.is_empty(), "nothing of it kept");
                filter.scan(end.as_bytes());
                assert!(filter.refused, "{input:?} {step}");
                assert_eq!(
                    String::from_utf8_lossy(&filter.out),
                    Refusal::FieldsTooLarge.request()
                );
            }
        }
    }

    #[test]
    fn refusal_tokens_round_trip() {
        for refusal in Refusal::ALL {
            assert_eq!(
                Refusal::from_token(refusal.token().as_bytes()),
                Some(refusal)
            );
        }
        assert_eq!(Refusal::from_token(b"other"), None);
    }
}
