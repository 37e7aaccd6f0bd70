//! Names that decide who may frame what: the host page's `Origin` and the proxy's `SandboxName`.
//!
//! Both are parsed once, at the config edge; everything downstream takes these types, so an
//! origin with a path or a sandbox name with upper-case letters never reaches a header.

use std::fmt;
use std::net::Ipv4Addr;
use std::str::FromStr;

/// The scheme of a host page's origin. Only the two a browser page can have are accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Scheme {
    Http,
    Https,
}

impl Scheme {
    fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }
}

/// A web origin as a browser serialises it: `scheme://host[:port]`, lower case, no default port.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    scheme: Scheme,
    host: String,
    port: Option<u16>,
}

/// Why a string is not a usable host origin. Each variant says what would be right.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginError {
    #[error("an origin starts with http:// or https://")]
    Scheme,
    #[error("an origin has no path — did you mean \"{0}\"?")]
    Path(String),
    #[error("an origin has no query or fragment — did you mean \"{0}\"?")]
    QueryOrFragment(String),
    #[error("an origin has no user name or password — did you mean \"{0}\"?")]
    Userinfo(String),
    #[error("the host part is not a DNS name or IPv4 address: {0}")]
    Host(String),
    #[error("the port is not a number from 1 to 65535")]
    Port,
    #[error(
        "plain http is only for loopback hosts (localhost, *.localhost, 127.0.0.0/8) — did you mean \"{0}\"?"
    )]
    InsecureRemote(String),
    #[error(
        "a pattern is https with one wildcard label, leftmost, like \"https://*.preview.example.com\""
    )]
    Pattern,
    #[error("a pattern needs at least two labels after \"*.\" (\"{0}\" would span a whole domain)")]
    PatternTooWide(String),
}

impl Origin {
    pub(crate) fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The DNS name or IP address, lower case, without the port.
    pub(crate) fn hostname(&self) -> &str {
        &self.host
    }

    pub(crate) fn port(&self) -> Option<u16> {
        self.port
    }

    /// Whether the host is a loopback name, where plain http is still a secure context.
    pub(crate) fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }
}

impl FromStr for Origin {
    type Err = OriginError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let lower = raw.trim().to_ascii_lowercase();
        let (scheme, rest) = if let Some(rest) = lower.strip_prefix("https://") {
            (Scheme::Https, rest)
        } else if let Some(rest) = lower.strip_prefix("http://") {
            (Scheme::Http, rest)
        } else {
            return Err(OriginError::Scheme);
        };
        let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        let suggestion = || format!("{}://{}", scheme.as_str(), authority);
        if let Some(at) = authority.rfind('@') {
            let without = format!("{}://{}", scheme.as_str(), &authority[at + 1..]);
            return Err(OriginError::Userinfo(without));
        }
        match rest[authority_end..].chars().next() {
            Some('/') => return Err(OriginError::Path(suggestion())),
            Some(_) => return Err(OriginError::QueryOrFragment(suggestion())),
            None => {}
        }
        let (host, port) = split_host_port(authority).map_err(|_| OriginError::Port)?;
        if !is_dns_name(host) {
            return Err(OriginError::Host(host.to_owned()));
        }
        let port = port.filter(|p| *p != scheme.default_port());
        let origin = Origin {
            scheme,
            host: host.to_owned(),
            port,
        };
        // SECURITY: an http origin off loopback can be impersonated by anyone on the path, and
        // the browser would let that impostor frame the proxy.
        if scheme == Scheme::Http && !origin.is_loopback() {
            let https = Origin {
                scheme: Scheme::Https,
                ..origin
            };
            return Err(OriginError::InsecureRemote(https.to_string()));
        }
        Ok(origin)
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme.as_str(), self.host)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

/// Who may frame a host entry's sandbox: one origin, or a pattern of preview or staging
/// origins (`https://*.preview.example.com`), each page then pinned to its own exact origin.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Embedder {
    Exact(Origin),
    Pattern(OriginPattern),
}

/// `https://*.<suffix>[:port]`: every origin one DNS label below `suffix`, https only.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OriginPattern {
    /// At least two labels, so that a pattern never spans a whole top-level domain.
    suffix: String,
    port: Option<u16>,
}

impl OriginPattern {
    /// Whether `origin` is one of this pattern's: https, the same port, one label below.
    pub fn matches(&self, origin: &Origin) -> bool {
        origin.scheme == Scheme::Https
            && origin.port == self.port
            && origin
                .host
                .split_once('.')
                .is_some_and(|(label, rest)| rest == self.suffix && is_dns_label(label))
    }

    /// The name the pattern's origins are one label below.
    pub(crate) fn suffix(&self) -> &str {
        &self.suffix
    }

    pub(crate) fn port(&self) -> Option<u16> {
        self.port
    }
}

impl FromStr for Embedder {
    type Err = OriginError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        if !raw.contains('*') {
            return raw.parse().map(Embedder::Exact);
        }
        let lower = raw.trim().to_ascii_lowercase();
        // SECURITY: a pattern over plain http would let anyone on the path of any preview frame
        // the sandbox; one wildcard label, leftmost, is all a preview deployment needs.
        let Some(rest) = lower.strip_prefix("https://*.") else {
            return Err(OriginError::Pattern);
        };
        if rest.contains('*') {
            return Err(OriginError::Pattern);
        }
        let origin: Origin = format!("https://{rest}").parse()?;
        if !origin.host.contains('.') || origin.host.parse::<Ipv4Addr>().is_ok() {
            return Err(OriginError::PatternTooWide(origin.host));
        }
        Ok(Embedder::Pattern(OriginPattern {
            suffix: origin.host,
            port: origin.port,
        }))
    }
}

impl fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "https://*.{}", self.suffix)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

impl Embedder {
    /// Whether its pages are https: a pattern's always are.
    pub(crate) fn is_https(&self) -> bool {
        match self {
            Embedder::Exact(origin) => origin.scheme() == Scheme::Https,
            Embedder::Pattern(_) => true,
        }
    }
}

impl fmt::Display for Embedder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Embedder::Exact(origin) => origin.fmt(f),
            Embedder::Pattern(pattern) => pattern.fmt(f),
        }
    }
}

/// The name (`host[:port]`) under which requests for one host entry arrive at the proxy.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SandboxName {
    host: String,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SandboxNameError {
    #[error("a sandbox name is lower case — did you mean \"{0}\"?")]
    NotLowerCase(String),
    #[error(
        "a sandbox name is host[:port], without scheme, path or wildcard — did you mean \"{0}\"?"
    )]
    NotAName(String),
    #[error("not a DNS name: {0}")]
    Host(String),
    #[error("the port is not a number from 1 to 65535")]
    Port,
}

impl SandboxName {
    /// The DNS name or IP address, lower case, without the port.
    pub(crate) fn hostname(&self) -> &str {
        &self.host
    }

    pub(crate) fn port(&self) -> Option<u16> {
        self.port
    }

    pub(crate) fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }

    /// The authority a request carries for this name, with `default_port` left out as
    /// browsers leave it out.
    pub(crate) fn authority(&self, default_port: u16) -> String {
        match self.port {
            Some(port) if port != default_port => format!("{}:{port}", self.host),
            _ => self.host.clone(),
        }
    }
}

impl FromStr for SandboxName {
    type Err = SandboxNameError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        if raw.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(SandboxNameError::NotLowerCase(raw.to_ascii_lowercase()));
        }
        if let Some((_, rest)) = raw.split_once("://") {
            let name = rest.split(['/', '?', '#']).next().unwrap_or_default();
            return Err(SandboxNameError::NotAName(name.to_owned()));
        }
        if raw.contains(['/', '?', '#', '@', '*']) {
            let name = raw.split(['/', '?', '#']).next().unwrap_or_default();
            return Err(SandboxNameError::NotAName(
                name.trim_start_matches("*.").to_owned(),
            ));
        }
        let (host, port) = split_host_port(raw).map_err(|_| SandboxNameError::Port)?;
        if !is_dns_name(host) {
            return Err(SandboxNameError::Host(host.to_owned()));
        }
        Ok(SandboxName {
            host: host.to_owned(),
            port,
        })
    }
}

impl fmt::Display for SandboxName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.host)?;
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

/// Splits `host[:port]`; the port, when present, must be 1–65535.
pub(crate) fn split_host_port(authority: &str) -> Result<(&str, Option<u16>), ()> {
    match authority.rsplit_once(':') {
        None => Ok((authority, None)),
        Some((host, port)) => {
            let all_digits = !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
            match port.parse::<u16>() {
                Ok(p) if all_digits && p != 0 => Ok((host, Some(p))),
                _ => Err(()),
            }
        }
    }
}

/// One DNS label: `[a-z0-9-]{1,63}`, not starting or ending with `-`.
pub(crate) fn is_dns_label(label: &str) -> bool {
    let bytes = label.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first() != Some(&b'-')
        && bytes.last() != Some(&b'-')
}

/// A lower-case DNS name (or dotted IPv4 address): labels of [`is_dns_label`], at most 253 bytes.
/// A name whose last label is all digits must be a canonical dotted-quad IPv4 address: browsers
/// rewrite forms like `127.1` or `2130706433` to `127.0.0.1`, so those could never match.
pub(crate) fn is_dns_name(name: &str) -> bool {
    let labels_ok = !name.is_empty() && name.len() <= 253 && name.split('.').all(is_dns_label);
    let numeric_tail = name
        .rsplit('.')
        .next()
        .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()));
    labels_ok
        && (!numeric_tail
            || name
                .parse::<Ipv4Addr>()
                .is_ok_and(|ip| ip.to_string() == name))
}

/// `localhost`, `*.localhost` and 127.0.0.0/8: names browsers treat as loopback and as
/// secure contexts even over plain http.
fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<Ipv4Addr>().is_ok_and(|ip| ip.is_loopback())
}

/// The last two labels of a name: never narrower than its registrable domain, so two names
/// that differ here are certainly cross-site (two names that agree here may still be
/// cross-site under a public suffix like `github.io`; a warning then errs on the side of
/// speaking up).
pub(crate) fn site_guess(host: &str) -> &str {
    if host.parse::<Ipv4Addr>().is_ok() {
        return host;
    }
    let mut dots = host.rmatch_indices('.');
    dots.next();
    match dots.next() {
        Some((i, _)) => &host[i + 1..],
        None => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_is_serialised_like_a_browser() {
        let cases = [
            ("https://chat.example.com", "https://chat.example.com"),
            ("HTTPS://Chat.Example.COM", "https://chat.example.com"),
            ("https://chat.example.com:443", "https://chat.example.com"),
            (
                "https://chat.example.com:8443",
                "https://chat.example.com:8443",
            ),
            ("http://localhost:8080", "http://localhost:8080"),
            ("http://host.localhost", "http://host.localhost"),
            ("http://127.0.0.2:3000", "http://127.0.0.2:3000"),
        ];
        for (raw, want) in cases {
            let origin: Origin = raw.parse().unwrap_or_else(|e| panic!("{raw}: {e}"));
            assert_eq!(origin.to_string(), want, "{raw}");
        }
    }

    #[test]
    fn origin_rejects_everything_but_an_origin() {
        let cases = [
            ("chat.example.com", OriginError::Scheme),
            ("ftp://chat.example.com", OriginError::Scheme),
            (
                "https://chat.example.com/",
                OriginError::Path("https://chat.example.com".into()),
            ),
            (
                "https://chat.example.com/app",
                OriginError::Path("https://chat.example.com".into()),
            ),
            (
                "https://chat.example.com?x",
                OriginError::QueryOrFragment("https://chat.example.com".into()),
            ),
            (
                "https://u:p@chat.example.com",
                OriginError::Userinfo("https://chat.example.com".into()),
            ),
            ("https://chat.example.com:0", OriginError::Port),
            ("https://chat.example.com:", OriginError::Port),
            ("https://chat.example.com:99999", OriginError::Port),
            (
                "https://*.example.com",
                OriginError::Host("*.example.com".into()),
            ),
            ("https://", OriginError::Host("".into())),
            (
                "http://chat.example.com",
                OriginError::InsecureRemote("https://chat.example.com".into()),
            ),
        ];
        for (raw, want) in cases {
            assert_eq!(raw.parse::<Origin>(), Err(want), "{raw}");
        }
    }

    #[test]
    fn sandbox_name_is_a_lower_case_dns_name_with_optional_port() {
        let name: SandboxName = "chat.sandbox.example.net".parse().unwrap();
        assert_eq!(name.authority(443), "chat.sandbox.example.net");
        let name: SandboxName = "localhost:8081".parse().unwrap();
        assert_eq!(name.authority(80), "localhost:8081");
        let name: SandboxName = "sandbox.test:443".parse().unwrap();
        assert_eq!(name.authority(443), "sandbox.test");

        let bad = [
            (
                "Chat.Sandbox.Net",
                SandboxNameError::NotLowerCase("chat.sandbox.net".into()),
            ),
            (
                "https://chat.sandbox.net/",
                SandboxNameError::NotAName("chat.sandbox.net".into()),
            ),
            (
                "*.sandbox.net",
                SandboxNameError::NotAName("sandbox.net".into()),
            ),
            ("sandbox.net:x", SandboxNameError::Port),
            ("-bad.net", SandboxNameError::Host("-bad.net".into())),
            ("a..net", SandboxNameError::Host("a..net".into())),
        ];
        for (raw, want) in bad {
            assert_eq!(raw.parse::<SandboxName>(), Err(want), "{raw}");
        }
    }

    #[test]
    fn site_guess_is_never_narrower_than_the_registrable_domain() {
        assert_eq!(site_guess("chat.sandbox.example.net"), "example.net");
        assert_eq!(site_guess("example.net"), "example.net");
        assert_eq!(site_guess("localhost"), "localhost");
        assert_eq!(site_guess("127.0.0.1"), "127.0.0.1");
        // Errs towards "same site" under multi-label suffixes, so the warning is never missed.
        assert_eq!(site_guess("a.example.co.uk"), site_guess("b.other.co.uk"));
    }
}
