//! `[acme]`: certificates for the sandbox names, issued and renewed by an ACME (RFC 8555) CA.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;

use toml::de::DeValue;

use super::walk::{Table, Value, Walker};
use super::{CertFiles, HostEntry};
use crate::origin::is_dns_name;

/// The keys of `[acme]`.
pub(super) const KEYS: &[&str] = &[
    "directory",
    "ca_roots",
    "contact",
    "terms_of_service_agreed",
    "account_key",
    "state_dir",
    "names",
    "challenge",
    "http01_listen",
];

/// Let's Encrypt's production directory; its staging one is in docs/operations.md.
const LETS_ENCRYPT: &str = "https://acme-v02.api.letsencrypt.org/directory";

/// The most names one config asks certificates for: one order each, and Let's Encrypt allows
/// 300 new orders per account every three hours.
const MAX_NAMES: usize = 100;

/// Where the CA bundles of common systems are, tried in order when `ca_roots` is not set.
pub(crate) const SYSTEM_CA_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// What `[acme]` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcmeSettings {
    /// The CA's directory URL (https).
    pub(crate) directory: String,
    /// The roots the directory's own TLS is checked against; `None`: the system's bundle.
    pub(crate) ca_roots: Option<PathBuf>,
    /// `mailto:` URLs the CA may write to about the account.
    pub(crate) contact: Vec<Contact>,
    /// The account's credentials (its private key among them), created on the first order.
    pub(crate) account_key: PathBuf,
    /// Where issued certificates and their keys are kept.
    pub(crate) state_dir: PathBuf,
    /// The names to get a certificate for, one certificate each.
    pub(crate) names: Vec<AcmeName>,
    pub(crate) challenge: Challenge,
}

impl AcmeSettings {
    /// Where the certificate for `name` lives: `<state_dir>/certs/<name>.crt` and `.key`.
    pub(crate) fn cert_files(&self, name: &AcmeName) -> CertFiles {
        let dir = self.state_dir.join("certs");
        CertFiles {
            cert: dir.join(format!("{name}.crt")),
            key: dir.join(format!("{name}.key")),
        }
    }

    /// The certificates issued so far: the names whose chain and key are both on disk.
    pub(crate) fn issued_files(&self) -> impl Iterator<Item = CertFiles> + '_ {
        self.names
            .iter()
            .map(|name| self.cert_files(name))
            .filter(|files| files.cert.is_file() && files.key.is_file())
    }

    /// Every file `[acme]` may write for its names, present or not: a reload watches them.
    pub(crate) fn watched_files(&self) -> impl Iterator<Item = PathBuf> + '_ {
        self.names.iter().flat_map(|name| {
            let files = self.cert_files(name);
            [files.cert, files.key]
        })
    }
}

/// How the CA checks that this service answers for a name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Challenge {
    /// TLS-ALPN-01 (RFC 8737): answered on the public TLS listener, port 443 as the CA dials it.
    TlsAlpn01,
    /// HTTP-01: answered on a plain listener of its own, port 80 as the CA dials it.
    Http01 { listen: SocketAddr },
}

impl Challenge {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Challenge::TlsAlpn01 => "tls-alpn-01",
            Challenge::Http01 { .. } => "http-01",
        }
    }
}

/// A name a certificate is issued for: a lower-case DNS name with at least two labels, not a
/// wildcard (that needs DNS-01), not an IP address and not a loopback name (no CA issues those).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AcmeName(String);

impl AcmeName {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AcmeName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for AcmeName {
    type Err = String;

    fn from_str(name: &str) -> Result<Self, String> {
        if name.starts_with("*.") {
            return Err(format!(
                "\"{name}\": a wildcard needs a DNS-01 challenge, which is not built in (docs/operations.md: ACME with per-server subdomains)"
            ));
        }
        if name.parse::<std::net::IpAddr>().is_ok() {
            return Err(format!("\"{name}\": an IP address, not a DNS name"));
        }
        if name == "localhost" || name.ends_with(".localhost") {
            return Err(format!(
                "\"{name}\": no CA issues certificates for loopback names"
            ));
        }
        if !is_dns_name(name) || !name.contains('.') {
            return Err(format!(
                "\"{name}\" is not a lower-case DNS name of two labels or more"
            ));
        }
        Ok(AcmeName(name.to_owned()))
    }
}

/// A contact URL for the account: `mailto:` and an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Contact(String);

impl Contact {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for Contact {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, String> {
        let address = raw.strip_prefix("mailto:").ok_or_else(|| {
            format!("\"{raw}\" is not a mailto: URL (for example \"mailto:ops@example.com\")")
        })?;
        let well_formed = address.split_once('@').is_some_and(|(user, domain)| {
            !user.is_empty() && is_dns_name(&domain.to_ascii_lowercase()) && domain.contains('.')
        }) && !address.contains([',', ' ', '<', '>']);
        if !well_formed {
            return Err(format!("\"{raw}\": the address is not user@domain"));
        }
        Ok(Contact(raw.to_owned()))
    }
}

/// `[acme]`; `hosts` give the default names (every sandbox name a CA can issue for).
pub(super) fn acme(
    w: &mut Walker<'_>,
    value: &Value<'_>,
    hosts: &[HostEntry],
) -> Option<AcmeSettings> {
    let table = w.table(value, "acme")?;
    w.reject_unknown_keys(table, "acme", KEYS);
    terms_agreed(w, table, value)?;
    let directory = match table.get("directory") {
        Some(v) => directory(w, v)?,
        None => LETS_ENCRYPT.to_owned(),
    };
    let ca_roots = match table.get("ca_roots") {
        Some(v) => Some(w.path(v, "acme.ca_roots")?),
        None => None,
    };
    let contact = match table.get("contact") {
        Some(v) => w.names::<Contact>(v, "acme.contact", "mailto: URLs")?,
        None => Vec::new(),
    };
    let state_dir = match table.get("state_dir") {
        Some(v) => w.path(v, "acme.state_dir")?,
        None => {
            let message = "is missing: the folder issued certificates and keys are kept in (for example \"/var/lib/mcp-sandbox-proxy/acme\")";
            w.error_at(value, "acme.state_dir", message.into());
            return None;
        }
    };
    let account_key = match table.get("account_key") {
        Some(v) => w.path(v, "acme.account_key")?,
        None => state_dir.join("account.json"),
    };
    let names = acme_names(w, table, value, hosts)?;
    let challenge = challenge(w, table, value)?;
    Some(AcmeSettings {
        directory,
        ca_roots,
        contact,
        account_key,
        state_dir,
        names,
        challenge,
    })
}

fn terms_agreed(w: &mut Walker<'_>, table: &Table<'_>, at: &Value<'_>) -> Option<()> {
    let key = "acme.terms_of_service_agreed";
    match table
        .get("terms_of_service_agreed")
        .map(|v| (v, v.get_ref()))
    {
        Some((_, DeValue::Boolean(true))) => Some(()),
        Some((v, DeValue::Boolean(false))) | Some((v, _)) => {
            let message = "must be true: the CA issues only to accounts that agree to its terms (read them at the directory's meta.termsOfService)";
            w.error_at(v, key, message.into());
            None
        }
        None => {
            let message =
                "is missing: read the CA's terms, then set terms_of_service_agreed = true";
            w.error_at(at, key, message.into());
            None
        }
    }
}

fn directory(w: &mut Walker<'_>, value: &Value<'_>) -> Option<String> {
    let raw = w.string(value, "acme.directory")?;
    match url::Url::parse(raw) {
        Ok(url) if url.scheme() == "https" && url.host().is_some() => Some(raw.to_owned()),
        _ => {
            let message = format!(
                "\"{raw}\" is not an https URL (ACME directories are served over https; Let's Encrypt's is \"{LETS_ENCRYPT}\")"
            );
            w.error_at(value, "acme.directory", message);
            None
        }
    }
}

/// `names`, or every sandbox name a CA can issue for; never empty, never repeated.
fn acme_names(
    w: &mut Walker<'_>,
    table: &Table<'_>,
    at: &Value<'_>,
    hosts: &[HostEntry],
) -> Option<Vec<AcmeName>> {
    let key = "acme.names";
    let (names, written) = match table.get("names") {
        Some(v) => (w.names::<AcmeName>(v, key, "DNS names")?, Some(v)),
        None => (default_names(hosts), None),
    };
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    let complaint = if names.is_empty() {
        Some(match written {
            Some(_) => "must list at least one name".to_owned(),
            None => "no sandbox name can have a certificate from a CA (each is a loopback name or an IP address): list the names".to_owned(),
        })
    } else if unique.len() != names.len() {
        Some("lists a name twice".to_owned())
    } else if names.len() > MAX_NAMES {
        Some(format!(
            "asks for {} certificates; at most {MAX_NAMES} (one order each, within the CA's rate limits)",
            names.len()
        ))
    } else {
        None
    };
    match complaint {
        Some(message) => {
            w.error_at(written.unwrap_or(at), key, message);
            None
        }
        None => Some(names),
    }
}

fn challenge(w: &mut Walker<'_>, table: &Table<'_>, at: &Value<'_>) -> Option<Challenge> {
    let listen = table
        .get("http01_listen")
        .map(|v| (v, w.socket_addr(v, "acme.http01_listen")));
    let kind = match table.get("challenge") {
        Some(v) => Some((v, w.string(v, "acme.challenge")?)),
        None => None,
    };
    match (kind, listen) {
        (None | Some((_, "tls-alpn-01")), None) => Some(Challenge::TlsAlpn01),
        (Some((_, "http-01")), Some((_, Some(listen)))) => Some(Challenge::Http01 { listen }),
        (Some((_, "http-01")), None) => {
            let message = "\"http-01\" needs http01_listen, the plain listener the CA reaches on port 80 (for example \"0.0.0.0:80\")";
            w.error_at(
                table.get("challenge").unwrap_or(at),
                "acme.challenge",
                message.into(),
            );
            None
        }
        (None | Some((_, "tls-alpn-01")), Some((v, _))) => {
            let message = "is only for challenge = \"http-01\"";
            w.error_at(v, "acme.http01_listen", message.into());
            None
        }
        (Some((v, other)), _) if other != "http-01" => {
            let message = format!(
                "\"{other}\" is not a challenge this service answers: \"tls-alpn-01\" (the default) or \"http-01\" (DNS-01 is not built in)"
            );
            w.error_at(v, "acme.challenge", message);
            None
        }
        _ => None,
    }
}

/// Every configured sandbox host a CA can issue for, in config order, each once.
fn default_names(hosts: &[HostEntry]) -> Vec<AcmeName> {
    let mut names: Vec<AcmeName> = Vec::new();
    for host in hosts {
        if let Ok(name) = host.sandbox.hostname().parse::<AcmeName>()
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_lets_encrypt_every_public_sandbox_name_and_the_state_folder() {
        let text = r#"listen = "0.0.0.0:443"
[tls]
[acme]
terms_of_service_agreed = true
state_dir = "state"
[[hosts]]
origin = "https://chat.example.com"
sandbox = "chat.sandbox.example"
[[hosts]]
origin = "https://studio.example.com"
sandbox = "studio.sandbox.example"
per_server_subdomains = true
[[hosts]]
origin = "http://localhost:8080"
sandbox = "localhost:8081"
"#;
        let loaded = crate::config::Config::parse("c.toml", text, std::path::Path::new("/etc/p"))
            .expect("loads");
        let acme = loaded.config.acme.expect("[acme]");
        assert_eq!(acme.directory, LETS_ENCRYPT);
        assert_eq!(acme.challenge, Challenge::TlsAlpn01);
        assert_eq!(acme.state_dir, PathBuf::from("/etc/p/state"));
        assert_eq!(acme.account_key, PathBuf::from("/etc/p/state/account.json"));
        let names: Vec<_> = acme.names.iter().map(AcmeName::as_str).collect();
        assert_eq!(names, ["chat.sandbox.example", "studio.sandbox.example"]);
        assert!(loaded.config.tls.expect("[tls]").certificates.is_empty());
        assert_eq!(
            acme.cert_files(&acme.names[0]).cert,
            PathBuf::from("/etc/p/state/certs/chat.sandbox.example.crt")
        );
    }

    #[test]
    fn names_are_what_a_ca_issues_for() {
        assert!("chat.sandbox.example".parse::<AcmeName>().is_ok());
        for refused in [
            "*.studio.sandbox.example",
            "localhost",
            "a.localhost",
            "127.0.0.1",
            "::1",
            "single",
            "Upper.example",
            "bad_label.example",
        ] {
            assert!(refused.parse::<AcmeName>().is_err(), "{refused}");
        }
    }

    #[test]
    fn contacts_are_mailto_addresses() {
        assert!("mailto:ops@example.com".parse::<Contact>().is_ok());
        for refused in [
            "ops@example.com",
            "mailto:",
            "mailto:@example.com",
            "mailto:ops@localhost",
            "mailto:a@example.com,b@example.com",
        ] {
            assert!(refused.parse::<Contact>().is_err(), "{refused}");
        }
    }
}
