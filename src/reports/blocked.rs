//! What a report blocked, reduced to what an operator needs: an origin, or the keyword CSP
//! reports instead of a URL.
//!
//! SECURITY: a blocked URL may carry a user's data in its path, query or fragment (a view
//! that sends what it read to a server it may not reach), so nothing but the origin must be
//! kept; a URL that has none (`data:`, `blob:`) is kept as its scheme.

use url::Url;

/// The keywords CSP 3 reports in place of a URL, and the schemes kept as keywords.
const KEYWORDS: [&str; 12] = [
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
];

/// The longest origin kept: a DNS name is at most 253 bytes, with scheme and port 280.
const MAX_ORIGIN: usize = 280;

/// What was blocked, as kept.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Blocked {
    /// `scheme://host[:port]`, as the URL standard serializes an origin (lower case,
    /// punycode, the default port left out).
    Origin(Box<str>),
    /// A keyword of [`KEYWORDS`], or `other` for anything that is neither.
    Keyword(&'static str),
}

impl Blocked {
    /// The blocked resource a report names, reduced.
    pub(crate) fn reduce(reported: &str) -> Blocked {
        if let Some(keyword) = keyword(reported) {
            return Blocked::Keyword(keyword);
        }
        let Ok(url) = Url::parse(reported) else {
            return Blocked::Keyword("other");
        };
        match url.scheme() {
            "http" | "https" | "ws" | "wss" => {
                let origin = url.origin().ascii_serialization();
                if origin.len() > MAX_ORIGIN || origin == "null" {
                    return Blocked::Keyword("other");
                }
                Blocked::Origin(origin.into())
            }
            scheme => Blocked::Keyword(keyword(scheme).unwrap_or("other")),
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        match self {
            Blocked::Origin(origin) => origin,
            Blocked::Keyword(keyword) => keyword,
        }
    }
}

fn keyword(word: &str) -> Option<&'static str> {
    KEYWORDS
        .iter()
        .copied()
        .find(|k| k.eq_ignore_ascii_case(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_is_kept_as_its_origin_and_never_its_path_or_query() {
        for (reported, kept) in [
            (
                "https://api.example.com/v1/users?token=secret#x",
                "https://api.example.com",
            ),
            (
                "https://user:pw@API.Example.COM:443/p",
                "https://api.example.com",
            ),
            ("https://example.com:8443/p", "https://example.com:8443"),
            (
                "wss://live.example.com/socket?id=1",
                "wss://live.example.com",
            ),
            ("http://127.0.0.1:9/x.png?q", "http://127.0.0.1:9"),
            ("https://bücher.example/", "https://xn--bcher-kva.example"),
        ] {
            assert_eq!(Blocked::reduce(reported).as_str(), kept, "{reported}");
        }
    }

    #[test]
    fn keywords_and_schemes_without_an_origin_are_kept_as_a_keyword() {
        for (reported, kept) in [
            ("inline", "inline"),
            ("eval", "eval"),
            ("wasm-eval", "wasm-eval"),
            ("data", "data"),
            ("data:image/png;base64,AAAA", "data"),
            ("blob:https://sandbox.example/1234-5678", "blob"),
            ("blob", "blob"),
            ("about:blank", "about"),
            ("javascript:alert(1)", "javascript"),
            ("ftp://files.example.com/secret", "other"),
            ("", "other"),
            ("not a url", "other"),
            ("file:///etc/passwd", "other"),
        ] {
            assert_eq!(Blocked::reduce(reported).as_str(), kept, "{reported:?}");
        }
    }
}
