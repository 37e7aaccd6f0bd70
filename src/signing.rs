//! Policies bound to the host (`policy_keys`): for a host that signs, a `?csp=` is served only
//! with a valid signature of the host's backend; any other gets the spec's default policy.
//!
//! A same-origin view can script its proxy page and navigate it to any URL of the sandbox
//! origin, so an unsigned `?csp=` is the view's to choose. With signing, the only policies a
//! page can get are ones the host's backend signed, for the name it is served on, until their
//! expiry.
//!
//! The scheme (v1), for signers in any language:
//!
//! ```text
//! message   = "mcp-sandbox-proxy policy v1" LF sandbox LF expires LF csp
//! signature = lower-case hex of HMAC-SHA256(key, message)
//! URL       = …?csp=<csp>&expires=<expires>&signature=<signature>
//! ```
//!
//! `sandbox` is the name the page is served on as a browser writes the URL's host (lower case,
//! the default port left out; with per-server subdomains, the server's label included, so a URL
//! signed for one server's origin gets the default policy on another's); `expires` is a Unix time in seconds, in decimal digits, the first second at
//! which the URL is refused; `csp` is the parameter's value after percent-decoding, byte for byte.

use std::fmt;
use std::str::FromStr;
use std::time::{SystemTime, UNIX_EPOCH};

use ring::hmac;

use crate::page_query::{EXPIRES_PARAMETER, PageQuery, SIGNATURE_PARAMETER};

/// What every signed message begins with: it names the scheme, so that a signature made for
/// anything else (another version, another service using the same key) never verifies here.
const DOMAIN: &str = "mcp-sandbox-proxy policy v1";

/// A key must hold at least this many bytes: HMAC-SHA256's own output size.
const MIN_KEY_BYTES: usize = 32;
/// Written as hex, so that `openssl rand -hex 32` makes one and `openssl dgst -macopt hexkey:`
/// uses it; longer keys are allowed up to this many bytes.
const MAX_KEY_BYTES: usize = 128;
/// The current key and the one before it: enough to rotate without a gap.
const MAX_KEYS: usize = 2;
/// Digits in `expires`: any Unix time in seconds until the year 2286.
const MAX_EXPIRES_DIGITS: usize = 10;
const SIGNATURE_HEX_DIGITS: usize = 64;
/// How far a signer's clock may run ahead of the service's before its URLs are refused as
/// living too long.
const CLOCK_SLACK_SECONDS: u64 = 60;

/// One HMAC-SHA256 key of a host's, from the config (hex) or from an environment variable.
#[derive(Clone)]
pub struct PolicyKey {
    key: hmac::Key,
    /// Where it came from, for messages; the key itself is never shown.
    source: KeySource,
    /// Kept to compare configs (a reload that changes nothing); never shown.
    bytes: Box<[u8]>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum KeySource {
    Config,
    Env(String),
}

impl FromStr for PolicyKey {
    type Err = String;

    /// Reads a `policy_keys` entry: `env:NAME` names an environment variable that holds the key
    /// as hex; anything else is the key itself, as hex.
    fn from_str(entry: &str) -> Result<Self, Self::Err> {
        let (source, hex) = match entry.strip_prefix("env:") {
            Some(name) => {
                if !is_env_name(name) {
                    return Err(format!(
                        "\"env:{name}\" does not name an environment variable (letters, digits and _)"
                    ));
                }
                let value = std::env::var(name).map_err(|_| {
                    format!("the environment variable {name} is not set (or not UTF-8)")
                })?;
                (KeySource::Env(name.to_owned()), value)
            }
            None => (KeySource::Config, entry.to_owned()),
        };
        let bytes = key_bytes(hex.trim()).map_err(|problem| match &source {
            KeySource::Config => format!("the key {problem}"),
            KeySource::Env(name) => format!("the key in {name} {problem}"),
        })?;
        Ok(PolicyKey {
            key: hmac::Key::new(hmac::HMAC_SHA256, &bytes),
            source,
            bytes: bytes.into_boxed_slice(),
        })
    }
}

impl PartialEq for PolicyKey {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source && self.bytes == other.bytes
    }
}

impl Eq for PolicyKey {}

impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Where a key came from, never the key.
        match self {
            KeySource::Config => f.write_str("a key written in the file"),
            KeySource::Env(name) => write!(f, "env:{name}"),
        }
    }
}

impl fmt::Debug for PolicyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // SECURITY: a key must never reach a log line or an error, so Debug shows its source.
        match &self.source {
            KeySource::Config => f.write_str("PolicyKey(config)"),
            KeySource::Env(name) => write!(f, "PolicyKey(env:{name})"),
        }
    }
}

/// Why a list of keys is no entry's `policy_keys`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyListError {
    /// No key at all.
    #[error(
        "must hold a key (\"env:NAME\", or 64 hex digits: openssl rand -hex 32); leave the key out for unsigned policies"
    )]
    Empty,
    /// The same key twice, from these two sources (never the key itself).
    #[error(
        "lists the same key twice ({0} and {1}): a rotation holds the current key and the one before it"
    )]
    SameTwice(String, String),
    /// More than `MAX_KEYS`.
    #[error("holds {0} keys: at most {MAX_KEYS}, the current one and the one before it")]
    TooMany(usize),
}

/// Why a key's hex is no key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
enum KeyBytesError {
    #[error("is not hex (0-9, a-f, an even count)")]
    NotHex,
    #[error("holds {0} bytes: at least {MIN_KEY_BYTES} (64 hex digits: openssl rand -hex 32)")]
    TooShort(usize),
    #[error("holds {0} bytes: at most {MAX_KEY_BYTES}")]
    TooLong(usize),
}

/// A host's signing keys: one, or two while they rotate. Any of them verifies; the first signs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyKeys(Vec<PolicyKey>);

impl PolicyKeys {
    pub(crate) fn new(keys: Vec<PolicyKey>) -> Result<Self, KeyListError> {
        match keys.len() {
            0 => Err(KeyListError::Empty),
            // A rotation that lists the new key where the old one should be (or one variable
            // twice) would leave no key to rotate to: say so rather than verify with one.
            2 if keys[0].bytes == keys[1].bytes => Err(KeyListError::SameTwice(
                keys[0].source.to_string(),
                keys[1].source.to_string(),
            )),
            1..=MAX_KEYS => Ok(PolicyKeys(keys)),
            n => Err(KeyListError::TooMany(n)),
        }
    }

    /// How many keys: one, or two while they rotate.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Never true: there is always a key.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The signature of the first key over one URL's policy.
    pub fn sign(&self, sandbox: &str, expires: u64, csp: &str) -> String {
        let message = message(sandbox, &expires.to_string(), csp);
        // `new` holds at least one key.
        let key = &self.0[0].key;
        hex(hmac::sign(key, &message).as_ref())
    }

    /// Whether a page's query carries a policy the host signed for `sandbox`, still valid at
    /// `now` (Unix seconds). `Ok(None)`: the query has no `csp`, so there is nothing to sign.
    pub(crate) fn verify(
        &self,
        sandbox: &str,
        query: &PageQuery,
        now: u64,
        max_lifetime: u64,
    ) -> Result<Option<Signed>, SignatureRefusal> {
        let Some(parts) = SignedParts::of(query)? else {
            return Ok(None);
        };
        let message = message(sandbox, parts.expires_raw, parts.csp);
        // SECURITY: `hmac::verify` compares in constant time, and every key is tried, so the
        // time taken does not say which one matched either. The expiry is read only from a URL
        // that verified: a forged one learns nothing.
        let verified: Vec<bool> = self
            .0
            .iter()
            .map(|key| hmac::verify(&key.key, &message, &parts.signature).is_ok())
            .collect();
        let Some(key) = verified.iter().position(|ok| *ok) else {
            return Err(SignatureRefusal::Wrong);
        };
        if now >= parts.expires {
            return Err(SignatureRefusal::Expired {
                expires: parts.expires,
                now,
            });
        }
        // SECURITY: without a bound, one URL signed to expire in 2286 was a policy for ever.
        // A minute of slack for a signer whose clock runs a little ahead.
        if parts.expires - now > max_lifetime.saturating_add(CLOCK_SLACK_SECONDS) {
            return Err(SignatureRefusal::TooLong {
                lifetime: parts.expires - now,
                max_lifetime,
            });
        }
        Ok(Some(Signed {
            expires: parts.expires,
            key,
        }))
    }
}

/// A policy the host signed: valid until `expires`, verified by key number `key` (from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Signed {
    pub(crate) expires: u64,
    pub(crate) key: usize,
}

/// Why a page's `?csp=` was not honoured: the page gets the spec's default policy, and the
/// relay says this to the host's developer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignatureRefusal {
    /// A `csp` without a `signature`.
    Unsigned,
    /// The signed parameters cannot be read.
    Malformed(Malformation),
    /// Signed, and expired at `expires` (Unix seconds).
    Expired {
        /// The first second the URL was refused at.
        expires: u64,
        /// When it was asked for.
        now: u64,
    },
    /// Valid for longer than the host entry's `policy_max_lifetime`.
    TooLong {
        /// Seconds the URL would still be valid for.
        lifetime: u64,
        /// The most the host entry allows.
        max_lifetime: u64,
    },
    /// No key of the host's gives this signature.
    Wrong,
}

impl std::error::Error for SignatureRefusal {}

/// What is wrong with a signed URL's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Malformation {
    /// A `csp` and a `signature` without an `expires`.
    ExpiresMissing,
    /// `expires` is not 1 to 10 decimal digits.
    ExpiresNotUnixTime,
    /// `signature` is not 64 lower-case hex digits.
    SignatureNotHex,
}

impl fmt::Display for Malformation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Malformation::ExpiresMissing => write!(f, "?{EXPIRES_PARAMETER}= is missing"),
            Malformation::ExpiresNotUnixTime => write!(
                f,
                "?{EXPIRES_PARAMETER}= is not a Unix time in seconds (at most {MAX_EXPIRES_DIGITS} digits)"
            ),
            Malformation::SignatureNotHex => write!(
                f,
                "?{SIGNATURE_PARAMETER}= is not {SIGNATURE_HEX_DIGITS} lower-case hex digits"
            ),
        }
    }
}

impl fmt::Display for SignatureRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SignatureRefusal::Unsigned => write!(
                f,
                "?csp= has no ?{SIGNATURE_PARAMETER}=: this sandbox serves a policy only in a URL the host's backend signed"
            ),
            SignatureRefusal::Malformed(problem) => {
                write!(f, "the signed URL is malformed: {problem}")
            }
            SignatureRefusal::Expired { expires, now } => write!(
                f,
                "the signature expired {} s ago (?{EXPIRES_PARAMETER}={expires}): sign a fresh URL for each page",
                now - expires
            ),
            SignatureRefusal::TooLong {
                lifetime,
                max_lifetime,
            } => write!(
                f,
                "the signed URL is valid for {lifetime} s more, longer than this host entry allows ({max_lifetime} s, policy_max_lifetime): sign with a shorter expiry"
            ),
            SignatureRefusal::Wrong => write!(
                f,
                "the signature does not match ?csp=, ?{EXPIRES_PARAMETER}= and this sandbox's name with any of its keys"
            ),
        }
    }
}

/// The parts of a query a signature covers.
struct SignedParts<'q> {
    csp: &'q str,
    expires_raw: &'q str,
    expires: u64,
    signature: Vec<u8>,
}

impl<'q> SignedParts<'q> {
    fn of(query: &'q PageQuery) -> Result<Option<Self>, SignatureRefusal> {
        let Some(csp) = query.csp() else {
            return Ok(None);
        };
        let Some(signature) = query.signature() else {
            return Err(SignatureRefusal::Unsigned);
        };
        let malformed = SignatureRefusal::Malformed;
        let Some(expires_raw) = query.expires() else {
            return Err(malformed(Malformation::ExpiresMissing));
        };
        let expires =
            parse_expires(expires_raw).ok_or(malformed(Malformation::ExpiresNotUnixTime))?;
        let signature =
            parse_signature(signature).ok_or(malformed(Malformation::SignatureNotHex))?;
        Ok(Some(SignedParts {
            csp,
            expires_raw,
            expires,
            signature,
        }))
    }
}

/// The bytes a signature covers (see the module's documentation).
fn message(sandbox: &str, expires: &str, csp: &str) -> Vec<u8> {
    [DOMAIN, sandbox, expires, csp].join("\n").into_bytes()
}

fn parse_expires(raw: &str) -> Option<u64> {
    let digits =
        (1..=MAX_EXPIRES_DIGITS).contains(&raw.len()) && raw.bytes().all(|b| b.is_ascii_digit());
    digits.then(|| raw.parse().ok()).flatten()
}

fn parse_signature(raw: &str) -> Option<Vec<u8>> {
    let lower = raw.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if raw.len() != SIGNATURE_HEX_DIGITS || !lower {
        return None;
    }
    from_hex(raw)
}

fn key_bytes(hex: &str) -> Result<Vec<u8>, KeyBytesError> {
    let bytes = from_hex(hex).ok_or(KeyBytesError::NotHex)?;
    if bytes.len() < MIN_KEY_BYTES {
        return Err(KeyBytesError::TooShort(bytes.len()));
    }
    if bytes.len() > MAX_KEY_BYTES {
        return Err(KeyBytesError::TooLong(bytes.len()));
    }
    Ok(bytes)
}

fn from_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    hex.as_bytes()
        .chunks(2)
        .map(|pair| {
            let digits = std::str::from_utf8(pair).ok()?;
            u8::from_str_radix(digits, 16).ok()
        })
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Now, in Unix seconds (0 for a clock before 1970, which refuses every signature).
pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
