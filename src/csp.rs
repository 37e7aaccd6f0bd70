//! The view policy: `?csp=` JSON in, one validated Content-Security-Policy value out.
//!
//! The inner view frame inherits the proxy page's policy, so this header *is* the view's
//! sandbox. Every declared domain is parsed as a CSP host-source; anything that is not one is
//! dropped with a reason, never passed through: the spec lets a host narrow, never widen.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

/// The four domain lists a server declares in `_meta.ui.csp`, in the spec's spelling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DomainList {
    Connect,
    Resource,
    Frame,
    BaseUri,
}

impl DomainList {
    pub const ALL: [DomainList; 4] = [
        DomainList::Connect,
        DomainList::Resource,
        DomainList::Frame,
        DomainList::BaseUri,
    ];

    /// The key in the `?csp=` JSON object and in `sandbox-resource-ready.params.csp`.
    pub(crate) fn key(self) -> &'static str {
        match self {
            DomainList::Connect => "connectDomains",
            DomainList::Resource => "resourceDomains",
            DomainList::Frame => "frameDomains",
            DomainList::BaseUri => "baseUriDomains",
        }
    }
}

/// What an operator may add, per host, to every view policy of that host: what real views need
/// beyond domains. None is on unless the host's config entry names it (`view_opt_ins`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OptIn {
    /// `worker-src 'self' blob:` (and the resource domains): workers built from a `Blob`, as
    /// map and chart libraries do. Without it, workers fall back to `script-src`, which has no
    /// `blob:`.
    WorkerBlob,
    /// `blob:` in `img-src` and `media-src`: images and media a view makes itself.
    BlobMedia,
    /// `'wasm-unsafe-eval'` in `script-src`: WebAssembly compilation, and not JavaScript `eval`.
    WasmUnsafeEval,
    /// `'unsafe-eval'` in `script-src`: `eval` and `new Function`, which some libraries and
    /// example views (three.js scenes sent as code) build on. A view already runs any inline
    /// script it carries, so eval adds little inside a cross-origin sandbox; but it also runs
    /// strings the view receives (tool input, fetched text) as code, so it stays the operator's
    /// choice.
    UnsafeEval,
    /// `data:` in `script-src`: scripts and modules from `data:` URLs, as pdf.js's worker (in
    /// `@modelcontextprotocol/server-pdf`) imports one. A view already runs any inline script
    /// it carries, so a `data:` script adds little inside a cross-origin sandbox; but like eval
    /// it runs code the view builds from strings it receives, so it stays the operator's choice.
    ScriptData,
}

impl OptIn {
    pub const ALL: [OptIn; 5] = [
        OptIn::WorkerBlob,
        OptIn::BlobMedia,
        OptIn::WasmUnsafeEval,
        OptIn::UnsafeEval,
        OptIn::ScriptData,
    ];

    /// What it adds to a view policy.
    pub fn adds(self) -> &'static str {
        match self {
            OptIn::WorkerBlob => "worker-src 'self' blob:",
            OptIn::BlobMedia => "blob: in img-src and media-src",
            OptIn::WasmUnsafeEval => "'wasm-unsafe-eval' in script-src",
            OptIn::UnsafeEval => "'unsafe-eval' in script-src",
            OptIn::ScriptData => "data: in script-src",
        }
    }

    /// The name in the config file.
    pub fn name(self) -> &'static str {
        match self {
            OptIn::WorkerBlob => "worker-blob",
            OptIn::BlobMedia => "blob-media",
            OptIn::WasmUnsafeEval => "wasm-unsafe-eval",
            OptIn::UnsafeEval => "unsafe-eval",
            OptIn::ScriptData => "script-data",
        }
    }
}

impl std::str::FromStr for OptIn {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        OptIn::ALL
            .into_iter()
            .find(|opt_in| opt_in.name() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = OptIn::ALL.iter().map(|o| o.name()).collect();
                format!(
                    "{name:?} is not a view opt-in (known: {})",
                    known.join(", ")
                )
            })
    }
}

/// The opt-ins of one host, each at most once.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct OptIns(BTreeSet<OptIn>);

impl OptIns {
    pub fn new(opt_ins: impl IntoIterator<Item = OptIn>) -> Self {
        OptIns(opt_ins.into_iter().collect())
    }

    pub fn has(&self, opt_in: OptIn) -> bool {
        self.0.contains(&opt_in)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = OptIn> + '_ {
        self.0.iter().copied()
    }

    /// Their names, comma-separated, as in the config file.
    pub fn names(&self) -> String {
        self.iter().map(OptIn::name).collect::<Vec<_>>().join(", ")
    }

    /// What each adds to the policy, for `check`.
    pub fn describe(&self) -> String {
        self.iter()
            .map(|o| format!("{} ({})", o.name(), o.adds()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Entries longer than this are dropped: no real origin needs more, and it bounds the header.
const MAX_ENTRY_BYTES: usize = 255;

/// A CSP host-source that is safe to put in a directive: `[scheme://]host[:port][/path]`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostSource(String);

impl HostSource {
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
    Empty,
    TooLong,
    NonAscii,
    Whitespace,
    Control,
    Semicolon,
    Comma,
    Quoted,
    SchemeOnly,
    SchemeNotAllowed,
    PlainOffLoopback,
    Userinfo,
    Query,
    Fragment,
    WildcardAlone,
    WildcardTooWide,
    WildcardMisplaced,
    BadHost,
    BadPort,
    BadPath,
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

/// One entry the policy builder refused, kept for the log, the metrics and the page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dropped {
    pub list: DomainList,
    pub entry: String,
    pub reason: DropReason,
}

/// The validated domains a view may use: sorted, deduplicated host-sources per list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Domains {
    connect: BTreeSet<HostSource>,
    resource: BTreeSet<HostSource>,
    frame: BTreeSet<HostSource>,
    base_uri: BTreeSet<HostSource>,
}

impl Domains {
    pub(crate) fn list(&self, list: DomainList) -> &BTreeSet<HostSource> {
        match list {
            DomainList::Connect => &self.connect,
            DomainList::Resource => &self.resource,
            DomainList::Frame => &self.frame,
            DomainList::BaseUri => &self.base_uri,
        }
    }

    fn list_mut(&mut self, list: DomainList) -> &mut BTreeSet<HostSource> {
        match list {
            DomainList::Connect => &mut self.connect,
            DomainList::Resource => &mut self.resource,
            DomainList::Frame => &mut self.frame,
            DomainList::BaseUri => &mut self.base_uri,
        }
    }
}

/// The policy a view runs under, and what was refused on the way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewPolicy {
    /// `None` when the request carried no `?csp=`: the spec's restrictive default applies.
    pub domains: Option<Domains>,
    pub dropped: Vec<Dropped>,
    header: String,
}

/// The spec's policy for a resource that declares no domains at all.
pub const DEFAULT_POLICY: &str = "default-src 'none'; script-src 'self' 'unsafe-inline'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; \
     connect-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'self'";

impl ViewPolicy {
    /// The policy when no `?csp=` was given: the spec's default, with the host's opt-ins.
    pub fn spec_default(opt_ins: &OptIns) -> Self {
        let header = if opt_ins.is_empty() {
            DEFAULT_POLICY.to_owned()
        } else {
            template(&Domains::default(), opt_ins, true)
        };
        ViewPolicy {
            domains: None,
            dropped: Vec::new(),
            header,
        }
    }

    /// Validates each declared entry and builds the spec's template from what survives, with
    /// the host's opt-ins.
    pub fn from_declared(declared: &Declared, opt_ins: &OptIns) -> Self {
        let mut domains = Domains::default();
        let mut dropped = Vec::new();
        for (list, entries) in &declared.lists {
            for entry in entries {
                match entry.parse::<HostSource>() {
                    Ok(source) => {
                        domains.list_mut(*list).insert(source);
                    }
                    Err(reason) => dropped.push(Dropped {
                        list: *list,
                        entry: entry.clone(),
                        reason,
                    }),
                }
            }
        }
        let header = template(&domains, opt_ins, false);
        ViewPolicy {
            domains: Some(domains),
            dropped,
            header,
        }
    }

    /// The policy a `csp` parameter declares: the spec's default when there is none, the
    /// validated template when there is.
    pub fn declared_by(csp: Option<&str>, opt_ins: &OptIns) -> Result<Self, DeclarationError> {
        match csp {
            None => Ok(ViewPolicy::spec_default(opt_ins)),
            Some(json) => Ok(ViewPolicy::from_declared(
                &Declared::from_json(json)?,
                opt_ins,
            )),
        }
    }

    /// The `Content-Security-Policy` value for the page (and so for the view).
    pub fn header(&self) -> &str {
        &self.header
    }
}

/// The spec's template, filled in, with the host's opt-ins. Directive order is fixed; domains
/// are sorted. `spec_default`: the policy for a resource that declares nothing (no `font-src`,
/// `connect-src 'none'`), which with no opt-in is exactly [`DEFAULT_POLICY`].
fn template(d: &Domains, opt_ins: &OptIns, spec_default: bool) -> String {
    let mut out = String::with_capacity(512);
    let mut directive =
        |name: &str, fixed: &[&str], sources: &BTreeSet<HostSource>, empty: &str| {
            if !out.is_empty() {
                out.push_str("; ");
            }
            out.push_str(name);
            let empty = if sources.is_empty() { empty } else { "" };
            for word in fixed.iter().chain([&empty]) {
                if !word.is_empty() {
                    out.push(' ');
                    out.push_str(word);
                }
            }
            for source in sources {
                out.push(' ');
                out.push_str(source.as_str());
            }
        };
    let none = BTreeSet::new();
    let eval = if opt_ins.has(OptIn::UnsafeEval) {
        "'unsafe-eval'"
    } else {
        ""
    };
    let wasm = if opt_ins.has(OptIn::WasmUnsafeEval) {
        "'wasm-unsafe-eval'"
    } else {
        ""
    };
    let data = if opt_ins.has(OptIn::ScriptData) {
        "data:"
    } else {
        ""
    };
    let blob = if opt_ins.has(OptIn::BlobMedia) {
        "blob:"
    } else {
        ""
    };
    let workers = opt_ins.has(OptIn::WorkerBlob);
    if spec_default {
        // The spec's own order (see DEFAULT_POLICY), the opt-ins in their places.
        directive("default-src", &["'none'"], &none, "");
        directive(
            "script-src",
            &["'self'", "'unsafe-inline'", eval, wasm, data],
            &none,
            "",
        );
        directive("style-src", &["'self'", "'unsafe-inline'"], &none, "");
        directive("img-src", &["'self'", "data:", blob], &none, "");
        directive("media-src", &["'self'", "data:", blob], &none, "");
        if workers {
            directive("worker-src", &["'self'", "blob:"], &none, "");
        }
        directive("connect-src", &["'none'"], &none, "");
        directive("object-src", &["'none'"], &none, "");
        directive("frame-src", &[], &none, "'none'");
        directive("base-uri", &[], &none, "'self'");
        return out;
    }
    directive("default-src", &["'none'"], &none, "");
    directive(
        "script-src",
        &["'self'", "'unsafe-inline'", eval, wasm, data],
        &d.resource,
        "",
    );
    directive("style-src", &["'self'", "'unsafe-inline'"], &d.resource, "");
    directive("connect-src", &["'self'"], &d.connect, "");
    directive("img-src", &["'self'", "data:", blob], &d.resource, "");
    directive("font-src", &["'self'"], &d.resource, "");
    directive("media-src", &["'self'", "data:", blob], &d.resource, "");
    if workers {
        directive("worker-src", &["'self'", "blob:"], &d.resource, "");
    }
    directive("frame-src", &[], &d.frame, "'none'");
    directive("object-src", &["'none'"], &none, "");
    directive("base-uri", &[], &d.base_uri, "'self'");
    out
}

/// The `?csp=` JSON, type-checked but not yet validated entry by entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Declared {
    lists: Vec<(DomainList, Vec<String>)>,
}

/// Why a declaration (the `csp` parameter's JSON) cannot be read at all. The page is answered
/// with `400` and this text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeclarationError {
    #[error("csp is not valid JSON: {0}")]
    Json(String),
    #[error("csp must be a JSON object, not {0}")]
    NotAnObject(&'static str),
    #[error("csp.{key} must be an array of strings, not {found}")]
    NotAnArray {
        key: &'static str,
        found: &'static str,
    },
    #[error("csp.{key}[{index}] must be a string, not {found}")]
    NotAString {
        key: &'static str,
        index: usize,
        found: &'static str,
    },
}

/// JSON text with each `\uXXXX` escape of an unpaired UTF-16 surrogate replaced by
/// `\ufffd`. JavaScript's `JSON.stringify` writes lone surrogates that way, and serde_json
/// refuses them; as U+FFFD the entry holding one is dropped as non-ASCII, and the rest of the
/// declaration still applies.
fn without_lone_surrogates(json: &str) -> Cow<'_, str> {
    let bytes = json.as_bytes();
    let unit_at = |i: usize| -> Option<u16> {
        let escape = bytes.get(i..i + 6)?;
        if escape[0] != b'\\' || escape[1] != b'u' {
            return None;
        }
        u16::from_str_radix(std::str::from_utf8(&escape[2..]).ok()?, 16).ok()
    };
    let is_high = |unit: u16| (0xD800..0xDC00).contains(&unit);
    let is_low = |unit: u16| (0xDC00..0xE000).contains(&unit);
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = unit_at(i) else {
            i += 2; // any other escape, `\\` included, is two bytes
            continue;
        };
        let paired = is_high(unit) && unit_at(i + 6).is_some_and(is_low);
        if paired {
            i += 12;
        } else if is_high(unit) || is_low(unit) {
            let out = out.get_or_insert_with(|| String::with_capacity(json.len()));
            out.push_str(&json[copied..i]);
            out.push_str("\\ufffd");
            i += 6;
            copied = i;
        } else {
            i += 6;
        }
    }
    match out {
        None => Cow::Borrowed(json),
        Some(mut out) => {
            out.push_str(&json[copied..]);
            Cow::Owned(out)
        }
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl Declared {
    /// Type-checks the JSON object. Unknown keys are ignored (a newer spec may add lists;
    /// ignoring them can only narrow), `null` counts as absent.
    pub fn from_json(json: &str) -> Result<Self, DeclarationError> {
        let json = without_lone_surrogates(json);
        let value: Value =
            serde_json::from_str(&json).map_err(|e| DeclarationError::Json(e.to_string()))?;
        let Value::Object(object) = value else {
            return Err(DeclarationError::NotAnObject(json_type(&value)));
        };
        let mut lists = Vec::new();
        for list in DomainList::ALL {
            let key = list.key();
            let entries = match object.get(key) {
                None | Some(Value::Null) => continue,
                Some(Value::Array(items)) => items,
                Some(other) => {
                    return Err(DeclarationError::NotAnArray {
                        key,
                        found: json_type(other),
                    });
                }
            };
            let mut strings = Vec::with_capacity(entries.len());
            for (index, item) in entries.iter().enumerate() {
                match item {
                    Value::String(s) => strings.push(s.clone()),
                    other => {
                        return Err(DeclarationError::NotAString {
                            key,
                            index,
                            found: json_type(other),
                        });
                    }
                }
            }
            lists.push((list, strings));
        }
        Ok(Declared { lists })
    }

    /// Builds a declaration from lists directly, without JSON.
    pub fn from_lists(lists: Vec<(DomainList, Vec<String>)>) -> Self {
        Declared { lists }
    }
}
