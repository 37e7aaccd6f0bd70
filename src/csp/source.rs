//! The host-source grammar: one declared entry in, a CSP host-source safe to put in a directive
//! out, or the reason it was dropped.
//!
//! SECURITY: an entry must never reach the header as written: one that is not a plain
//! `[scheme://]host[:port][/path]` (a keyword, a second directive, a second policy, a scheme
//! alone, a wildcard that covers a whole suffix) is dropped, never passed through.

use std::fmt;

/// Entries longer than this are dropped: no real origin needs more, and it bounds the header.
const MAX_ENTRY_BYTES: usize = 255;

/// A CSP host-source that is safe to put in a directive: `[scheme://]host[:port][/path]`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostSource(String);

impl HostSource {
    /// The source as it goes into a directive.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for HostSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why a declared entry was dropped. The text is shown to operators and host developers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// Nothing at all.
    Empty,
    /// Longer than any real origin needs.
    TooLong,
    /// A character outside ASCII: hosts are written in punycode.
    NonAscii,
    /// Whitespace, which would make one entry two sources.
    Whitespace,
    /// A control character.
    Control,
    /// A `;`, which would start a new directive.
    Semicolon,
    /// A `,`, which would start a new policy.
    Comma,
    /// A quote: a keyword, nonce or hash, not a host.
    Quoted,
    /// A scheme alone (`https:`), which allows every host.
    SchemeOnly,
    /// A scheme other than https and wss (http and ws for loopback).
    SchemeNotAllowed,
    /// Plain http or ws off loopback.
    PlainOffLoopback,
    /// A user name or password.
    Userinfo,
    /// A query.
    Query,
    /// A fragment.
    Fragment,
    /// `*` alone, which allows every host.
    WildcardAlone,
    /// A wildcard over fewer than two labels (`*.com`).
    WildcardTooWide,
    /// A wildcard that is not the whole first label.
    WildcardMisplaced,
    /// A host that is not a DNS name.
    BadHost,
    /// A port that is not 1-65535 or `*`.
    BadPort,
    /// A path with characters a source path cannot have.
    BadPath,
    /// Anything else that is not `[scheme://]host[:port][/path]`.
    NotHostSource,
}

impl fmt::Display for DropReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            DropReason::Empty => "empty entry",
            DropReason::TooLong => return write!(f, "longer than {MAX_ENTRY_BYTES} bytes"),
            DropReason::NonAscii => "non-ASCII character (use the punycode form of the host)",
            DropReason::Whitespace => {
                "whitespace inside one entry (give each source its own entry)"
            }
            DropReason::Control => "control character",
            DropReason::Semicolon => "';' would start a new directive",
            DropReason::Comma => "',' would start a new policy",
            DropReason::Quoted => "keyword, nonce or hash: only host-sources are accepted",
            DropReason::SchemeOnly => "scheme-only source would allow every host",
            DropReason::SchemeNotAllowed => {
                "scheme not allowed (https, wss; http, ws for loopback)"
            }
            DropReason::PlainOffLoopback => {
                "plain http/ws is only allowed for localhost and 127.0.0.1"
            }
            DropReason::Userinfo => "user name or password in a source",
            DropReason::Query => "query in a source",
            DropReason::Fragment => "fragment in a source",
            DropReason::WildcardAlone => "wildcard alone would allow every host",
            DropReason::WildcardTooWide => "wildcard needs at least two labels after it",
            DropReason::WildcardMisplaced => "wildcard is only allowed as the whole first label",
            DropReason::BadHost => "host is not a DNS name",
            DropReason::BadPort => "port is not 1-65535 or *",
            DropReason::BadPath => "path has characters a source path cannot have",
            DropReason::NotHostSource => "not a host-source ([scheme://]host[:port][/path])",
        };
        f.write_str(text)
    }
}

impl std::str::FromStr for HostSource {
    type Err = DropReason;

    fn from_str(entry: &str) -> Result<Self, DropReason> {
        check_characters(entry)?;
        let lower_prefix;
        let (scheme, rest) = match entry.find("://") {
            Some(i) => {
                lower_prefix = entry[..i].to_ascii_lowercase();
                (Some(lower_prefix.as_str()), &entry[i + 3..])
            }
            None if entry.ends_with(':') => return Err(DropReason::SchemeOnly),
            None => (None, entry),
        };
        if let Some(scheme) = scheme
            && !matches!(scheme, "https" | "wss" | "http" | "ws")
        {
            return Err(DropReason::SchemeNotAllowed);
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        if authority.contains('@') {
            return Err(DropReason::Userinfo);
        }
        if rest.contains('?') {
            return Err(DropReason::Query);
        }
        if rest.contains('#') {
            return Err(DropReason::Fragment);
        }
        let authority = authority.to_ascii_lowercase();
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => match parse_port(port) {
                Ok(port) => (host, Some(port)),
                // `javascript:…`, `mailto:…`: a scheme with a body, not a host and port.
                Err(_) if scheme.is_none() && !port.bytes().all(|b| b.is_ascii_digit()) => {
                    return Err(DropReason::NotHostSource);
                }
                Err(reason) => return Err(reason),
            },
            None => (authority.as_str(), None),
        };
        check_host(host)?;
        // SECURITY: plain http/ws can be read and rewritten on the network; only loopback,
        // which never leaves the machine, may use it.
        if matches!(scheme, Some("http" | "ws")) && !matches!(host, "localhost" | "127.0.0.1") {
            return Err(DropReason::PlainOffLoopback);
        }
        check_path(path)?;
        let mut out = String::with_capacity(entry.len());
        if let Some(scheme) = scheme {
            out.push_str(scheme);
            out.push_str("://");
        }
        out.push_str(host);
        if let Some(port) = port {
            out.push(':');
            out.push_str(port);
        }
        out.push_str(path);
        Ok(HostSource(out))
    }
}

fn check_characters(entry: &str) -> Result<(), DropReason> {
    if entry.is_empty() {
        return Err(DropReason::Empty);
    }
    if entry.len() > MAX_ENTRY_BYTES {
        return Err(DropReason::TooLong);
    }
    for c in entry.chars() {
        let reason = match c {
            c if !c.is_ascii() => DropReason::NonAscii,
            ' ' | '\t' | '\n' | '\r' | '\x0c' => DropReason::Whitespace,
            c if c.is_ascii_control() => DropReason::Control,
            ';' => DropReason::Semicolon,
            ',' => DropReason::Comma,
            '\'' | '"' => DropReason::Quoted,
            _ => continue,
        };
        return Err(reason);
    }
    Ok(())
}

fn parse_port(port: &str) -> Result<&str, DropReason> {
    if port == "*" {
        return Ok(port);
    }
    let digits = !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
    match port.parse::<u16>() {
        Ok(p) if digits && p != 0 => Ok(port),
        _ => Err(DropReason::BadPort),
    }
}

fn check_host(host: &str) -> Result<(), DropReason> {
    let (wildcard, name) = match host.strip_prefix("*.") {
        Some(name) => (true, name),
        None => (false, host),
    };
    if host == "*" {
        return Err(DropReason::WildcardAlone);
    }
    if name.contains('*') {
        return Err(DropReason::WildcardMisplaced);
    }
    if !crate::origin::is_dns_name(name) {
        return Err(DropReason::BadHost);
    }
    // SECURITY: `*.com` matches every .com site; two labels after the wildcard keep it to
    // one registrable domain in the common case.
    if wildcard && name.split('.').count() < 2 {
        return Err(DropReason::WildcardTooWide);
    }
    Ok(())
}

/// A source path: `/`-separated RFC 3986 path characters, percent escapes well formed.
fn check_path(path: &str) -> Result<(), DropReason> {
    let bytes = path.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let ok = match b {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3);
                let well_formed = hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
                i += 2;
                well_formed
            }
            b'/' | b'-' | b'.' | b'_' | b'~' | b'!' | b'$' | b'&' | b'(' | b')' | b'+' | b'='
            | b':' | b'@' => true,
            b => b.is_ascii_alphanumeric(),
        };
        if !ok {
            return Err(DropReason::BadPath);
        }
        i += 1;
    }
    Ok(())
}
