//! `[tls]`: the certificates the public listener serves, and its TLS settings.

use toml::de::DeValue;

use super::walk::{Table, Value, Walker, join};
use super::{CertFiles, DEFAULT_HSTS_MAX_AGE, MAX_HSTS_MAX_AGE, TlsFiles, TlsVersion};

/// The keys of `[tls]`.
pub(super) const KEYS: &[&str] = &["cert", "key", "extra", "hsts_max_age", "min_version"];

/// The keys of each `[[tls.extra]]`.
pub(super) const EXTRA_KEYS: &[&str] = &["cert", "key"];

fn cert_files(
    w: &mut Walker<'_>,
    table: &Table<'_>,
    at: &Value<'_>,
    prefix: &str,
) -> Option<CertFiles> {
    let mut pair = [None, None];
    for (slot, name) in pair.iter_mut().zip(["cert", "key"]) {
        let key = join(prefix, name);
        match table.get(name) {
            Some(value) => *slot = w.path(value, &key),
            None => w.error_at(at, &key, "is missing (a PEM file path)".into()),
        }
    }
    let [cert, key] = pair;
    Some(CertFiles {
        cert: cert?,
        key: key?,
    })
}

/// `[tls]`; with `[acme]` its `cert` and `key` may be left out.
pub(super) fn tls(w: &mut Walker<'_>, value: &Value<'_>, with_acme: bool) -> Option<TlsFiles> {
    let table = w.table(value, "tls")?;
    w.reject_unknown_keys(table, "tls", KEYS);
    let files_given = table.contains_key("cert") || table.contains_key("key");
    let mut certificates = Vec::new();
    if files_given || !with_acme {
        certificates.push(cert_files(w, table, value, "tls"));
    }
    if let Some(extra) = table.get("extra") {
        match extra.get_ref() {
            DeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let prefix = format!("tls.extra[{i}]");
                    if let Some(t) = w.table(item, &prefix) {
                        w.reject_unknown_keys(t, &prefix, EXTRA_KEYS);
                        certificates.push(cert_files(w, t, item, &prefix));
                    }
                }
            }
            other => {
                let found = other.type_str();
                let message = format!("must be an array of tables ([[tls.extra]]), not {found}");
                w.error_at(extra, "tls.extra", message);
            }
        }
    }
    let hsts_max_age = match table.get("hsts_max_age") {
        Some(v) => w.duration(v, "tls.hsts_max_age", true, MAX_HSTS_MAX_AGE)?,
        None => DEFAULT_HSTS_MAX_AGE,
    };
    let min_version = match table.get("min_version") {
        None => TlsVersion::default(),
        Some(v) => match w.string(v, "tls.min_version")? {
            "1.2" => TlsVersion::Tls12,
            "1.3" => TlsVersion::Tls13,
            other => {
                let message = format!(
                    "\"{other}\" is not a TLS version this service offers: \"1.2\" or \"1.3\""
                );
                w.error_at(v, "tls.min_version", message);
                return None;
            }
        },
    };
    Some(TlsFiles {
        certificates: certificates.into_iter().collect::<Option<_>>()?,
        hsts_max_age,
        min_version,
    })
}
