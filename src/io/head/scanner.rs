//! HTTP/1 request heads framed out of a byte stream: lines found as the bytes arrive, cookie
//! values checked and dropped as they pass, and each complete head checked once.
//!
//! Three bounds hold by construction, whatever the bytes and however they are split into reads
//! (the property tests and the `heads` fuzz target check each one, against httparse):
//! - **Kept bytes are charged bytes.** `keep` is the only way into the head, and it charges
//!   what it keeps to the request line's or the fields' budget first; a byte over budget is
//!   never kept. So the head never holds more than `HeadLimits::filtered_max`.
//! - **Constant work per byte.** Each handler takes a run of bytes up to the next line feed
//!   with one forward search; a field line's start is classified from at most `cookie:`'s
//!   seven bytes; nothing already kept is looked at again until the head is complete, and then
//!   once (`check`). `work` counts each byte each time it is looked at, and each call.
//! - **httparse's framing.** A head starts after any empty lines (`\n` or `\r\n`) and ends at
//!   its first empty line after the request line, exactly where httparse ends it; a cookie's
//!   value must be made of the bytes httparse takes in a field value, so a head the scanner
//!   passes is one httparse takes as sent, with the cookie values aside.
//!
//! The one body a head may announce, a CSP report's (at most `MAX_REPORT_BODY`, see `check`),
//! is passed on byte for byte, each byte looked at once, and the next head starts after it.

use crate::limits::{HeadLimits, MAX_FIELDS, Refusal};

use super::check::check;
use super::starts::RequestStarts;
use crate::io::linger::MAX_DISCARD;

/// What a head's buffer starts with: a browser's head is a few hundred bytes.
const HEAD_CAPACITY: usize = 1024;

/// How many times `check` goes over a complete head: httparse, the target, the field names,
/// the body's framing.
const CHECK_PASSES: u64 = 4;

const COOKIE_NAME: &[u8] = b"cookie:";
/// What a `Cookie` line becomes: its name, then this in place of its value.
const COOKIE_VALUE_MARKER: &[u8] = b" -";

/// Whether httparse takes `byte` in a field value (RFC 9110's field-vchar, SP and HTAB,
/// obs-text); a unit test asks httparse about each of the 256. Written without branches, so
/// that a run of them compiles to vector instructions.
fn is_field_value_byte(byte: u8) -> bool {
    (byte >= 0x20) & (byte != 0x7f) | (byte == b'\t')
}

/// Whether every byte of `bytes` is a field value byte: no early exit, for the same reason.
fn all_field_value_bytes(bytes: &[u8]) -> bool {
    bytes
        .iter()
        .fold(true, |all, &byte| all & is_field_value_byte(byte))
}

/// Where the scanner is within the current head.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Nothing of the next head has arrived.
    Between,
    /// Empty lines before the request line, then the request line.
    RequestLine,
    /// The first bytes of a field line, kept until they show whether it is `Cookie`.
    FieldStart,
    /// The rest of a field line other than `Cookie`.
    Field,
    /// A cookie's value: each byte checked, none kept. `after_cr`: the last one was `\r`.
    CookieValue { after_cr: bool },
    /// Past a limit, or unreadable: dropped up to the head's end, then `refusal` is handed on.
    /// `line_empty`: the current line has had nothing but `\r` so far.
    Discard { refusal: Refusal, line_empty: bool },
    /// A report's body (the one body a head may announce, at most `MAX_REPORT_BODY`): its
    /// bytes are passed on as they are, `left` more of them.
    Body { left: usize },
}

impl State {
    /// The state with `body` bytes of a report's body still to come before the next head.
    fn before(body: usize) -> State {
        match body {
            0 => State::Between,
            left => State::Body { left },
        }
    }
}

/// Which budget a kept byte is charged to.
#[derive(Clone, Copy, Debug)]
enum Budget {
    RequestLine,
    Fields,
}

/// hyper stopped inside a request: the bytes that follow are its body, not a head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InsideARequest;

/// Frames heads out of the bytes it is given; complete heads (or a refusal request) collect in
/// [`HeadScanner::pending`] for hyper.
#[derive(Debug)]
pub struct HeadScanner {
    limits: HeadLimits,
    state: State,
    /// The current head as hyper will see it; empty between heads, so an idle connection holds
    /// no buffer.
    head: Vec<u8>,
    /// Where the line being read starts in `head`.
    line_start: usize,
    request_line_left: usize,
    fields_left: usize,
    field_lines: usize,
    /// Checked heads (or a refusal request) that hyper has not read yet, from `out_read` on.
    out: Vec<u8>,
    out_read: usize,
    /// Once set, nothing more is scanned: what the client sends next is dropped.
    refusal: Option<Refusal>,
    /// Bytes dropped while past a limit.
    discarded: usize,
    heads_begun: u64,
    /// Heads handed on to hyper (a refusal request in a refused head's place included).
    heads_handed: u64,
    work: u64,
    /// Where the requests in what hyper reads start.
    starts: RequestStarts,
}

impl HeadScanner {
    /// A scanner that holds heads to `limits`.
    pub fn new(limits: HeadLimits) -> Self {
        HeadScanner {
            limits,
            state: State::Between,
            head: Vec::new(),
            line_start: 0,
            request_line_left: limits.request_line,
            fields_left: limits.fields,
            field_lines: 0,
            out: Vec::new(),
            out_read: 0,
            refusal: None,
            discarded: 0,
            heads_begun: 0,
            heads_handed: 0,
            work: 0,
            starts: RequestStarts::default(),
        }
    }

    /// Scans bytes read from the client.
    pub fn scan(&mut self, mut bytes: &[u8]) {
        self.work += 1;
        while !bytes.is_empty() && self.refusal.is_none() {
            // Each handler takes at least one byte, or moves to another state that will.
            let taken = match self.state {
                State::Between => self.begin_head(),
                State::RequestLine => self.request_line(bytes),
                State::FieldStart => self.field_start(bytes),
                State::Field => self.field(bytes),
                State::CookieValue { after_cr } => self.cookie_value(bytes, after_cr),
                State::Discard {
                    refusal,
                    line_empty,
                } => self.discard(bytes, refusal, line_empty),
                State::Body { left } => self.body(bytes, left),
            };
            bytes = &bytes[taken..];
        }
    }

    /// Checked heads, or a refusal request, not yet read by hyper.
    pub fn pending(&self) -> &[u8] {
        &self.out[self.out_read..]
    }

    /// Marks `n` bytes of [`HeadScanner::pending`] as read.
    pub fn consume(&mut self, n: usize) {
        // hyper may read past its buffer's limit by a read's worth: four buffers is more than
        // it can ever hand back.
        self.starts.taken(n, 4 * self.limits.hyper_buffer());
        self.out_read += n;
        if self.out_read >= self.out.len() {
            self.out_read = 0;
            // Give the allocation back: an idle keep-alive connection keeps nothing.
            self.out = Vec::new();
        }
    }

    /// Puts back bytes hyper read and did not use, if hyper stopped where a request starts:
    /// they were checked already, so they come before anything still pending. Otherwise
    /// (hyper stopped inside a request: its body is not all read) refuses them, and the
    /// connection must end.
    pub(crate) fn resume(&mut self, bytes: &[u8]) -> Result<(), InsideARequest> {
        let between = !matches!(self.state, State::Body { .. });
        if !self.starts.stopped_at_a_request(bytes.len(), between) {
            return Err(InsideARequest);
        }
        self.starts.handed_back(bytes.len());
        if bytes.is_empty() {
            return Ok(());
        }
        let mut out = Vec::with_capacity(bytes.len() + self.pending().len());
        out.extend_from_slice(bytes);
        out.extend_from_slice(self.pending());
        self.out = out;
        self.out_read = 0;
        Ok(())
    }

    /// Nothing of a request is under way or unread: no head or body begun, no checked byte
    /// hyper has not read, no refusal.
    pub(crate) fn is_between_requests(&self) -> bool {
        self.state == State::Between && self.pending().is_empty() && self.refusal.is_none()
    }

    /// Why the connection's last head was refused, once one was.
    pub fn refusal(&self) -> Option<Refusal> {
        self.refusal
    }

    /// Heads handed on to hyper so far, a refusal request included: hyper reads them in this
    /// order, so the refused head is the request numbered this when its refusal is set.
    pub fn heads_handed(&self) -> u64 {
        self.heads_handed
    }

    /// Heads whose first byte has arrived, counted from the connection's start.
    pub fn heads_begun(&self) -> u64 {
        self.heads_begun
    }

    /// Bytes held for the head being read (its buffer's capacity): at most
    /// `HeadLimits::filtered_max`.
    pub fn kept(&self) -> usize {
        self.head.capacity()
    }

    /// Units of work done so far: a unit per call and per byte each time a byte is looked at.
    pub fn work(&self) -> u64 {
        self.work
    }

    /// Counts bytes dropped after a refusal; past `MAX_DISCARD` the connection gives up.
    pub(crate) fn drop_after_refusal(&mut self, bytes: usize) -> bool {
        self.discarded = self.discarded.saturating_add(bytes);
        self.discarded <= MAX_DISCARD
    }

    fn body(&mut self, bytes: &[u8], left: usize) -> usize {
        let n = left.min(bytes.len());
        self.work += n as u64;
        self.starts.body(n);
        self.out.extend_from_slice(&bytes[..n]);
        self.state = State::before(left - n);
        n
    }

    fn begin_head(&mut self) -> usize {
        self.heads_begun += 1;
        self.state = State::RequestLine;
        0
    }

    fn request_line(&mut self, bytes: &[u8]) -> usize {
        if self.head.is_empty() {
            let empty = empty_lines(bytes);
            if empty > 0 {
                self.work += empty as u64;
                return empty;
            }
        }
        let (run, ended) = self.line_run(bytes);
        if !self.keep(&bytes[..run], Budget::RequestLine) {
            return 0;
        }
        if ended {
            // spec (RFC 9112 §2.2), as httparse: empty lines before a request line are skipped.
            // Dropped, they are kept nowhere and cost no budget (a client sending nothing else
            // is held to the header deadline like any slow head).
            if matches!(self.head.as_slice(), b"\n" | b"\r\n") {
                self.head.clear();
                self.request_line_left = self.limits.request_line;
            } else {
                self.start_field_line();
            }
        }
        run
    }

    fn field_start(&mut self, bytes: &[u8]) -> usize {
        let held = self.head.len() - self.line_start;
        let (run, ended) = self.line_run(&bytes[..bytes.len().min(COOKIE_NAME.len() - held)]);
        if !self.keep(&bytes[..run], Budget::Fields) {
            return 0;
        }
        let line = &self.head[self.line_start..];
        self.work += line.len() as u64;
        if ended {
            if matches!(line, b"\n" | b"\r\n") {
                self.end_of_head();
            } else {
                self.end_field_line();
            }
        } else if line.eq_ignore_ascii_case(COOKIE_NAME) {
            // The name is written as hyper would read it; the marker replaces the value.
            let start = self.line_start;
            self.head[start..].copy_from_slice(COOKIE_NAME);
            if self.keep(COOKIE_VALUE_MARKER, Budget::Fields) {
                self.state = State::CookieValue { after_cr: false };
            }
        } else if line != b"\r" && !starts_cookie_name(line) {
            // A lone `\r` may still be the start of the empty line that ends the head.
            self.state = State::Field;
        }
        run
    }

    fn field(&mut self, bytes: &[u8]) -> usize {
        let (run, ended) = self.line_run(bytes);
        if !self.keep(&bytes[..run], Budget::Fields) {
            return 0;
        }
        if ended {
            self.end_field_line();
        }
        run
    }

    /// A cookie's value, dropped: each byte must be one httparse takes in a value, and `\r`
    /// only right before the line feed, as in any other field (a bare `\r` ends a line for some
    /// front ends and not for others: a way to smuggle a second request past one of them).
    fn cookie_value(&mut self, bytes: &[u8], after_cr: bool) -> usize {
        let (run, ended) = self.line_run(bytes);
        let mut value = &bytes[..if ended { run - 1 } else { run }];
        if after_cr && !value.is_empty() {
            self.discard_rest(Refusal::Malformed, false);
            return 0;
        }
        let ends_with_cr = value.last() == Some(&b'\r');
        if ends_with_cr {
            value = &value[..value.len() - 1];
        }
        self.work += value.len() as u64;
        if !all_field_value_bytes(value) {
            self.discard_rest(Refusal::Malformed, false);
            return value
                .iter()
                .position(|b| !is_field_value_byte(*b))
                .unwrap_or(0);
        }
        if !ended {
            self.state = State::CookieValue {
                after_cr: ends_with_cr,
            };
        } else if !self.keep(b"\r\n", Budget::Fields) {
            // The line feed is left to `discard`: it ends this line there.
            return run - 1;
        } else {
            self.end_field_line();
        }
        run
    }

    fn discard(&mut self, bytes: &[u8], refusal: Refusal, mut line_empty: bool) -> usize {
        for (at, &byte) in bytes.iter().enumerate() {
            self.work += 1;
            match byte {
                b'\n' if line_empty => {
                    self.refuse(refusal);
                    return at + 1;
                }
                b'\n' => line_empty = true,
                b'\r' => {}
                _ => line_empty = false,
            }
        }
        self.state = State::Discard {
            refusal,
            line_empty,
        };
        if !self.drop_after_refusal(bytes.len()) {
            self.refuse(refusal);
        }
        bytes.len()
    }

    /// The bytes up to and including the next line feed, or all of them; and whether they end
    /// the line.
    fn line_run(&mut self, bytes: &[u8]) -> (usize, bool) {
        let run = bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |end| end + 1);
        self.work += run as u64;
        (run, bytes[..run].last() == Some(&b'\n'))
    }

    /// Keeps `bytes` if their budget has room for them; otherwise keeps nothing more of this
    /// head and drops the rest of it. Returns whether they were kept.
    fn keep(&mut self, bytes: &[u8], budget: Budget) -> bool {
        let (left, refusal) = match budget {
            Budget::RequestLine => (&mut self.request_line_left, Refusal::TargetTooLong),
            Budget::Fields => (&mut self.fields_left, Refusal::FieldsTooLarge),
        };
        let Some(rest) = left.checked_sub(bytes.len()) else {
            self.work += (self.head.len() - self.line_start) as u64;
            let line_empty = self.head[self.line_start..].iter().all(|b| *b == b'\r');
            self.discard_rest(refusal, line_empty);
            return false;
        };
        *left = rest;
        self.work += bytes.len() as u64;
        self.reserve(bytes.len());
        self.head.extend_from_slice(bytes);
        true
    }

    /// Room for `more` bytes, never past `filtered_max`: the budgets allow no more, and the
    /// buffer's capacity, not only its length, is what a head costs.
    fn reserve(&mut self, more: usize) {
        let needed = self.head.len() + more;
        if needed <= self.head.capacity() {
            return;
        }
        let grown = (self.head.capacity() * 2)
            .max(HEAD_CAPACITY)
            .min(self.limits.filtered_max())
            .max(needed);
        // Growing copies what is kept: doubling makes that constant work per byte, amortised.
        self.work += self.head.len() as u64;
        self.head.reserve_exact(grown - self.head.len());
    }

    fn start_field_line(&mut self) {
        self.line_start = self.head.len();
        self.state = State::FieldStart;
    }

    /// A field line is complete: the next one starts, unless that is one too many.
    fn end_field_line(&mut self) {
        self.field_lines += 1;
        if self.field_lines > MAX_FIELDS {
            self.discard_rest(Refusal::FieldsTooLarge, true);
        } else {
            self.start_field_line();
        }
    }

    /// Drops what is kept of the head, and the rest of it as it arrives, until the empty line
    /// that ends it.
    fn discard_rest(&mut self, refusal: Refusal, line_empty: bool) {
        self.head = Vec::new();
        self.line_start = 0;
        self.state = State::Discard {
            refusal,
            line_empty,
        };
    }

    fn end_of_head(&mut self) {
        let head = std::mem::take(&mut self.head);
        self.work += CHECK_PASSES * head.len() as u64;
        let body = match check(&head) {
            Ok(body) => {
                self.pass_on(head);
                body
            }
            Err(refusal) => {
                self.refuse(refusal);
                0
            }
        };
        self.state = State::before(body);
        self.line_start = 0;
        self.request_line_left = self.limits.request_line;
        self.fields_left = self.limits.fields;
        self.field_lines = 0;
    }

    /// Hands a checked head on to hyper.
    fn pass_on(&mut self, head: Vec<u8>) {
        self.heads_handed += 1;
        self.starts.head(head.len());
        if self.pending().is_empty() {
            // The head's own allocation becomes what hyper reads: no copy.
            self.out = head;
            self.out_read = 0;
        } else {
            self.out.extend_from_slice(&head);
        }
    }

    fn refuse(&mut self, refusal: Refusal) {
        if self.refusal.is_some() {
            return;
        }
        self.refusal = Some(refusal);
        self.head = Vec::new();
        self.heads_handed += 1;
        self.starts.head(Refusal::REQUEST.len());
        self.out.extend_from_slice(Refusal::REQUEST.as_bytes());
    }
}

/// How many bytes at the start of `bytes` are whole empty lines (`\n` or `\r\n`).
fn empty_lines(bytes: &[u8]) -> usize {
    let mut at = 0;
    loop {
        match bytes[at..] {
            [b'\n', ..] => at += 1,
            [b'\r', b'\n', ..] => at += 2,
            _ => return at,
        }
    }
}

/// Whether a field line's first bytes may still be `cookie:`.
fn starts_cookie_name(line: &[u8]) -> bool {
    line.len() < COOKIE_NAME.len() && line.eq_ignore_ascii_case(&COOKIE_NAME[..line.len()])
}

#[cfg(test)]
mod tests;
