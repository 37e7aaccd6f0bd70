//! What must hold of the CSP report reader, for the property tests (tests/properties.rs) and
//! the fuzz target (fuzz/fuzz_targets/reports.rs): any bytes are read without a panic, and
//! whatever is kept is a directive of CSP's and an origin or a keyword, never more of the URL;
//! a report built from known parts keeps exactly what a reference reduction of those parts
//! says.
#![allow(dead_code)]

use mcp_sandbox_proxy::read_report;
use serde_json::json;

/// The directives a report may be counted under: CSP 3's fetch, document and navigation
/// directives, written out here apart from the service's list.
pub const DIRECTIVES: &[&str] = &[
    "default-src",
    "script-src",
    "script-src-elem",
    "script-src-attr",
    "style-src",
    "style-src-elem",
    "style-src-attr",
    "img-src",
    "font-src",
    "connect-src",
    "media-src",
    "object-src",
    "frame-src",
    "child-src",
    "worker-src",
    "manifest-src",
    "fenced-frame-src",
    "base-uri",
    "form-action",
    "frame-ancestors",
    "trusted-types",
    "require-trusted-types-for",
    "webrtc",
];

/// What a report may keep in place of an origin.
pub const KEYWORDS: &[&str] = &[
    "inline",
    "eval",
    "wasm-eval",
    "trusted-types-policy",
    "trusted-types-sink",
    "self",
    "data",
    "blob",
    "filesystem",
    "about",
    "javascript",
    "mediastream",
    "other",
];

/// The media types the endpoint reads.
pub const MEDIA_TYPES: [&str; 2] = ["application/csp-report", "application/reports+json"];

/// Any body under either media type: read without a panic, the same way twice, and what is
/// kept is clean (see [`assert_kept_is_clean`]).
pub fn check_body(media_type: &str, body: &[u8]) {
    let first = read_report(media_type.as_bytes(), body);
    let second = read_report(media_type.as_bytes(), body);
    assert_eq!(first, second, "the same body read two ways");
    if let Ok(kept) = first {
        assert!(
            !kept.is_empty(),
            "a body taken names at least one violation"
        );
        assert!(kept.len() <= 32, "at most 32 violations from one body");
        for (directive, blocked) in &kept {
            assert_kept_is_clean(directive, blocked);
        }
    }
}

/// A kept directive is one of CSP's (or `other`), and a kept blocked value is a keyword or an
/// origin as the URL standard serializes it: nothing of a path, query, fragment or user.
pub fn assert_kept_is_clean(directive: &str, blocked: &str) {
    assert!(
        directive == "other" || DIRECTIVES.contains(&directive),
        "directive {directive:?}"
    );
    if KEYWORDS.contains(&blocked) {
        return;
    }
    let url = url::Url::parse(blocked).unwrap_or_else(|_| panic!("{blocked:?} is no URL"));
    assert!(
        matches!(url.scheme(), "http" | "https" | "ws" | "wss"),
        "{blocked:?}: a scheme with no origin"
    );
    assert_eq!(url.origin().ascii_serialization(), blocked, "not an origin");
    assert!(
        blocked.len() <= 280,
        "an origin longer than a DNS name allows"
    );
}

/// A URL built from parts, and what a report of it must keep.
#[derive(Debug, Clone)]
pub struct BlockedUrl {
    pub scheme: &'static str,
    /// `user:password@`, or nothing: never kept.
    pub user: String,
    pub host: String,
    pub port: Option<u16>,
    /// Path, query and fragment: what must never be kept.
    pub rest: String,
}

impl BlockedUrl {
    pub fn text(&self) -> String {
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        format!(
            "{}://{}{}{port}{}",
            self.scheme, self.user, self.host, self.rest
        )
    }

    /// The reference reduction: the scheme and host in lower case, the port unless it is the
    /// scheme's default.
    pub fn origin(&self) -> String {
        let scheme = self.scheme.to_ascii_lowercase();
        let default = match scheme.as_str() {
            "http" | "ws" => 80,
            _ => 443,
        };
        let port = match self.port {
            Some(p) if p != default => format!(":{p}"),
            _ => String::new(),
        };
        format!("{scheme}://{}{port}", self.host.to_ascii_lowercase())
    }
}

/// What a generated report says was blocked.
#[derive(Debug, Clone)]
pub enum Blocked {
    Url(BlockedUrl),
    /// A keyword, or a URL of a scheme with no origin, and the keyword that must be kept.
    Word(String, &'static str),
    /// Any text: what is kept follows from the URL standard's parser (the `url` crate) and
    /// CSP's keywords, by [`reduce`].
    Unknown(String),
}

/// The reference reduction of any reported text: a keyword CSP reports instead of a URL, the
/// origin of an http(s) or ws(s) URL, the scheme of another URL if it is a keyword, else
/// `other`.
pub fn reduce(text: &str) -> String {
    let keyword = |word: &str| {
        KEYWORDS
            .iter()
            .find(|k| **k != "other" && k.eq_ignore_ascii_case(word))
            .map(|k| (*k).to_owned())
    };
    if let Some(word) = keyword(text) {
        return word;
    }
    let Ok(url) = url::Url::parse(text) else {
        return "other".to_owned();
    };
    match url.scheme() {
        "http" | "https" | "ws" | "wss" => {
            let origin = url.origin().ascii_serialization();
            if origin == "null" || origin.len() > 280 {
                "other".to_owned()
            } else {
                origin
            }
        }
        scheme => keyword(scheme).unwrap_or_else(|| "other".to_owned()),
    }
}

impl Blocked {
    fn reported(&self) -> String {
        match self {
            Blocked::Url(url) => url.text(),
            Blocked::Word(text, _) | Blocked::Unknown(text) => text.clone(),
        }
    }

    fn kept(&self) -> String {
        match self {
            Blocked::Url(url) => url.origin(),
            Blocked::Word(_, kept) => (*kept).to_owned(),
            Blocked::Unknown(text) => reduce(text),
        }
    }
}

/// One violation as a browser would report it.
#[derive(Debug, Clone)]
pub struct Report {
    pub directive: String,
    pub blocked: Blocked,
}

impl Report {
    /// The directive the service must count it under: the first word (CSP 2 reports the
    /// whole directive), if CSP defines it.
    fn counted(&self) -> String {
        let first = self.directive.split_ascii_whitespace().next().unwrap_or("");
        let lower = first.to_ascii_lowercase();
        if DIRECTIVES.contains(&lower.as_str()) {
            lower
        } else {
            "other".to_owned()
        }
    }
}

/// `report-uri`'s body: one report, with what browsers send beside what is kept (the
/// document's URL and a sample, which must never be kept).
pub fn csp_report_body(report: &Report, secret: &str) -> String {
    json!({"csp-report": {
        "document-uri": format!("https://sandbox.example/?csp={secret}"),
        "referrer": "",
        "violated-directive": report.directive,
        "effective-directive": report.directive,
        "original-policy": "default-src 'none'",
        "disposition": "enforce",
        "blocked-uri": report.blocked.reported(),
        "script-sample": secret,
        "status-code": 0,
    }})
    .to_string()
}

/// The Reporting API's body: a batch, with a report of another type among them.
pub fn reports_body(reports: &[Report], secret: &str) -> String {
    let mut batch: Vec<serde_json::Value> = reports
        .iter()
        .map(|report| {
            json!({"type": "csp-violation", "age": 0, "url": format!("https://sandbox.example/{secret}"),
                "body": {"effectiveDirective": report.directive, "blockedURL": report.blocked.reported(),
                    "documentURL": format!("https://sandbox.example/?{secret}"), "sample": secret,
                    "disposition": "enforce", "statusCode": 200}})
        })
        .collect();
    batch.insert(0, json!({"type": "deprecation", "body": {"id": secret}}));
    serde_json::Value::Array(batch).to_string()
}

/// Generated reports, sent in both shapes: exactly the reference's directives and origins are
/// kept, in order, and `secret` (in every path, query, sample and document URL) never is.
pub fn check_reports(reports: &[Report], secret: &str) {
    let expected: Vec<(String, String)> = reports
        .iter()
        .map(|r| (r.counted(), r.blocked.kept()))
        .collect();
    let mut bodies = vec![(MEDIA_TYPES[1], reports_body(reports, secret))];
    if let [one] = reports {
        bodies.push((MEDIA_TYPES[0], csp_report_body(one, secret)));
    }
    for (media_type, body) in bodies {
        let kept = read_report(media_type.as_bytes(), body.as_bytes())
            .unwrap_or_else(|e| panic!("{body} refused: {e}"));
        let kept: Vec<(String, String)> =
            kept.into_iter().map(|(d, b)| (d.to_owned(), b)).collect();
        assert_eq!(kept, expected, "{media_type}: {body}");
        for (directive, blocked) in &kept {
            assert_kept_is_clean(directive, blocked);
            assert!(!blocked.contains(secret), "{secret:?} kept from {body}");
        }
    }
}
