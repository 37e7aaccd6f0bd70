//! The files a config names besides itself, read without validating: what a reload watches.

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};

use super::walk::{Table, Value};

/// The files a config names besides itself: what a reload must watch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct References {
    /// Every certificate and key file.
    pub(crate) certificates: Vec<PathBuf>,
    pub(crate) hosts_dir: Option<PathBuf>,
}

/// The files config text at `path` names, read without validating it: a reload looks at
/// these to see what changed, and the reload itself then validates everything. `None` if the
/// text is not TOML.
pub(crate) fn references_in(path: &Path, text: &str) -> Option<References> {
    let base = path.parent().unwrap_or(Path::new("."));
    let document = DeTable::parse(text).ok()?;
    let doc = document.get_ref();
    let string_at = |table: &Table<'_>, key: &str| match table.get(key).map(|v| v.get_ref()) {
        Some(DeValue::String(s)) if !s.is_empty() => Some(base.join(s.as_ref())),
        _ => None,
    };
    let mut certificates = Vec::new();
    for tls in tables_in(doc.get("tls")) {
        for pair in std::iter::once(tls).chain(tables_in(tls.get("extra"))) {
            certificates.extend(string_at(pair, "cert"));
            certificates.extend(string_at(pair, "key"));
        }
    }
    Some(References {
        certificates,
        hosts_dir: string_at(doc, "hosts_dir"),
    })
}

/// A table, or each table of an array of them; nothing for any other value.
pub(super) fn tables_in<'v, 'i>(value: Option<&'v Value<'i>>) -> Vec<&'v Table<'i>> {
    match value.map(|v| v.get_ref()) {
        Some(DeValue::Table(table)) => vec![table],
        Some(DeValue::Array(items)) => items
            .iter()
            .filter_map(|item| match item.get_ref() {
                DeValue::Table(table) => Some(table),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}
