//! The walk over a TOML document, key by key, with every problem named by file, line and key;
//! the top-level keys, `[tls]` and `[limits]`.

use std::fmt;
use std::net::SocketAddr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::limits::MAX_QUERY_BYTES;

use super::problem::Problem;
use super::{
    CertFiles, Config, DEFAULT_HSTS_MAX_AGE, DEFAULT_WATCH_INTERVAL, HostEntry, Limits,
    MAX_CACHE_MAX_AGE, MAX_HSTS_MAX_AGE, MAX_TIMER, TlsFiles, TlsVersion,
};

/// A host entry and where it was written, for messages about it and about the entries it
/// meets.
pub(super) struct Placed {
    pub(super) entry: HostEntry,
    pub(super) file: Rc<str>,
    /// Its index among the file's `[[hosts]]`.
    pub(super) index: usize,
    /// The line of its `sandbox` (of the entry, if it has none).
    pub(super) line: usize,
}

impl Placed {
    /// How a message about `from` names this entry: `hosts[2]`, and its file if another.
    pub(super) fn named_from(&self, from: &Placed) -> String {
        if self.file == from.file {
            format!("hosts[{}]", self.index)
        } else {
            format!("hosts[{}] in {}", self.index, self.file)
        }
    }
}

pub(super) type Table<'i> = DeTable<'i>;

pub(super) type Value<'i> = Spanned<DeValue<'i>>;

pub(super) struct Walker<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    pub(super) base: &'a Path,
    pub(super) problems: Vec<Problem>,
    pub(super) warnings: Vec<Problem>,
    /// Every file read so far, the main one first: messages are sorted in this order.
    pub(super) files: Vec<String>,
    /// Where each line after the first starts: every entry's line is looked up, so counting
    /// from the start of the text each time would grow with the square of its length.
    pub(super) line_starts: Vec<usize>,
}

impl<'a> Walker<'a> {
    pub(super) fn new(file: &'a str, text: &'a str, base: &'a Path) -> Self {
        Walker {
            file,
            text,
            base,
            problems: Vec::new(),
            warnings: Vec::new(),
            files: vec![file.to_owned()],
            line_starts: text
                .bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(at, _)| at + 1)
                .collect(),
        }
    }

    /// The text as a TOML document, or the problem that it is not one.
    pub(super) fn document(&mut self) -> Option<Spanned<Table<'a>>> {
        match DeTable::parse(self.text) {
            Ok(document) => Some(document),
            Err(e) => {
                let line = e.span().map_or(1, |span| self.line(&span));
                self.problem(line, "", format!("not valid TOML: {}", e.message().trim()));
                None
            }
        }
    }

    /// A problem in another file than the one being walked.
    pub(super) fn problem_in(&mut self, file: &str, line: usize, key: &str, message: String) {
        self.problems.push(Problem {
            file: file.to_owned(),
            line: Some(line),
            key: key.to_owned(),
            message,
        });
    }

    pub(super) fn line(&self, span: &Range<usize>) -> usize {
        // The lines that start at or before the span, plus the first.
        self.line_starts
            .partition_point(|&start| start <= span.start)
            + 1
    }

    pub(super) fn problem(&mut self, line: usize, key: &str, message: String) {
        self.problems.push(Problem {
            file: self.file.to_owned(),
            line: Some(line),
            key: key.to_owned(),
            message,
        });
    }

    pub(super) fn error_at(&mut self, value: &Value<'_>, key: &str, message: String) {
        let line = self.line(&value.span());
        self.problem(line, key, message);
    }

    pub(super) fn warning_in(
        &mut self,
        file: &str,
        line: Option<usize>,
        key: &str,
        message: String,
    ) {
        self.warnings.push(Problem {
            file: file.to_owned(),
            line,
            key: key.to_owned(),
            message,
        });
    }

    /// Reports every key of `table` not in `known`, with the closest known key if one is near.
    pub(super) fn reject_unknown_keys(&mut self, table: &Table<'_>, prefix: &str, known: &[&str]) {
        for (key, _) in table.iter() {
            let name: &str = key.get_ref();
            if known.contains(&name) {
                continue;
            }
            let line = self.line(&key.span());
            let hint = match near_miss(name, known) {
                Some(near) => format!(" — did you mean \"{near}\"?"),
                None => format!(" (known keys: {})", known.join(", ")),
            };
            self.problem(
                line,
                &join(prefix, name),
                format!("is not a known key{hint}"),
            );
        }
    }

    pub(super) fn config(&mut self, doc: &Table<'_>) -> Option<Config> {
        let known = [
            "listen",
            "admin_listen",
            "watch_interval",
            "cache_max_age",
            "tls",
            "acme",
            "hosts",
            "hosts_dir",
            "limits",
        ];
        self.reject_unknown_keys(doc, "", &known);
        let listen = match doc.get("listen") {
            Some(value) => self.socket_addr(value, "listen"),
            None => {
                self.problem(
                    1,
                    "listen",
                    "is missing (for example listen = \"0.0.0.0:8443\")".into(),
                );
                None
            }
        };
        let admin_listen = doc
            .get("admin_listen")
            .and_then(|v| self.socket_addr(v, "admin_listen"));
        let tls = match doc.get("tls") {
            Some(value) => self.tls(value, doc.contains_key("acme")),
            None => None,
        };
        let limits = match doc.get("limits") {
            Some(value) => self.limits(value),
            None => Limits::default(),
        };
        let watch_interval = match doc.get("watch_interval") {
            Some(value) => self.duration(value, "watch_interval", true, MAX_TIMER),
            None => Some(DEFAULT_WATCH_INTERVAL),
        };
        let cache_max_age = match doc.get("cache_max_age") {
            Some(value) => self.cache_max_age(value, "cache_max_age"),
            None => Some(Duration::ZERO),
        };
        let default_port = if doc.contains_key("tls") { 443 } else { 80 };
        let cache_max_age = cache_max_age.unwrap_or_default();
        let hosts_dir = doc.get("hosts_dir").map(|v| (v, self.path(v, "hosts_dir")));
        let file: Rc<str> = Rc::from(self.file);
        let mut placed = match doc.get("hosts") {
            Some(value) => self.host_entries(value, &file, cache_max_age),
            None => Vec::new(),
        };
        let problems_before = self.problems.len();
        if let Some((at, Some(dir))) = &hosts_dir {
            placed.extend(self.tenant_hosts(dir, at, cache_max_age));
        }
        // For tenant files, only when nothing else explains it (an unreadable folder, an entry
        // with an error).
        let tenants_explained = self.problems.len() > problems_before;
        if placed.is_empty() && !doc.contains_key("hosts") && !tenants_explained {
            match &hosts_dir {
                None => self.problem(
                    1,
                    "hosts",
                    "is missing: add at least one [[hosts]] entry".into(),
                ),
                Some((at, Some(dir))) => {
                    let message = format!(
                        "\"{}\" has no [[hosts]] entry in any *.toml file, and neither has this file: add at least one",
                        dir.display()
                    );
                    self.error_at(at, "hosts_dir", message);
                }
                Some((_, None)) => {}
            }
        }
        self.cross_check_hosts(&placed, default_port);
        let hosts: Vec<HostEntry> = placed.into_iter().map(|p| p.entry).collect();
        let acme = match doc.get("acme") {
            Some(value) if !doc.contains_key("tls") => {
                let message = "issues certificates for a TLS listener: add [tls] (its cert and key may then be left out)";
                self.error_at(value, "acme", message.into());
                None
            }
            Some(value) => Some(self.acme(value, &hosts)?),
            None => None,
        };
        Some(Config {
            listen: listen?,
            admin_listen,
            tls,
            acme,
            hosts,
            hosts_dir: hosts_dir.and_then(|(_, dir)| dir),
            limits,
            demo_listen: None,
            watch_interval: watch_interval?,
        })
    }

    pub(super) fn table<'v, 'i>(
        &mut self,
        value: &'v Value<'i>,
        key: &str,
    ) -> Option<&'v Table<'i>> {
        match value.get_ref() {
            DeValue::Table(table) => Some(table),
            other => {
                let found = other.type_str();
                self.error_at(value, key, format!("must be a table, not {found}"));
                None
            }
        }
    }

    pub(super) fn string<'v>(&mut self, value: &'v Value<'_>, key: &str) -> Option<&'v str> {
        match value.get_ref() {
            DeValue::String(s) => Some(s.as_ref()),
            other => {
                let found = other.type_str();
                self.error_at(value, key, format!("must be a string, not {found}"));
                None
            }
        }
    }

    pub(super) fn socket_addr(&mut self, value: &Value<'_>, key: &str) -> Option<SocketAddr> {
        let raw = self.string(value, key)?;
        match raw.parse() {
            Ok(addr) => Some(addr),
            Err(_) => {
                let message = format!(
                    "\"{raw}\" is not ip:port (for example \"0.0.0.0:8443\" or \"[::]:8443\")"
                );
                self.error_at(value, key, message);
                None
            }
        }
    }

    pub(super) fn path(&mut self, value: &Value<'_>, key: &str) -> Option<PathBuf> {
        let raw = self.string(value, key)?;
        if raw.is_empty() {
            self.error_at(value, key, "must name a file".into());
            return None;
        }
        Some(self.base.join(raw))
    }

    pub(super) fn cert_files(
        &mut self,
        table: &Table<'_>,
        at: &Value<'_>,
        prefix: &str,
    ) -> Option<CertFiles> {
        let mut pair = [None, None];
        for (slot, name) in pair.iter_mut().zip(["cert", "key"]) {
            let key = join(prefix, name);
            match table.get(name) {
                Some(value) => *slot = self.path(value, &key),
                None => self.error_at(at, &key, "is missing (a PEM file path)".into()),
            }
        }
        let [cert, key] = pair;
        Some(CertFiles {
            cert: cert?,
            key: key?,
        })
    }

    /// `[tls]`; with `[acme]` its `cert` and `key` may be left out.
    pub(super) fn tls(&mut self, value: &Value<'_>, with_acme: bool) -> Option<TlsFiles> {
        let table = self.table(value, "tls")?;
        self.reject_unknown_keys(
            table,
            "tls",
            &["cert", "key", "extra", "hsts_max_age", "min_version"],
        );
        let files_given = table.contains_key("cert") || table.contains_key("key");
        let mut certificates = Vec::new();
        if files_given || !with_acme {
            certificates.push(self.cert_files(table, value, "tls"));
        }
        if let Some(extra) = table.get("extra") {
            match extra.get_ref() {
                DeValue::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        let prefix = format!("tls.extra[{i}]");
                        if let Some(t) = self.table(item, &prefix) {
                            self.reject_unknown_keys(t, &prefix, &["cert", "key"]);
                            certificates.push(self.cert_files(t, item, &prefix));
                        }
                    }
                }
                other => {
                    let found = other.type_str();
                    let message =
                        format!("must be an array of tables ([[tls.extra]]), not {found}");
                    self.error_at(extra, "tls.extra", message);
                }
            }
        }
        let hsts_max_age = match table.get("hsts_max_age") {
            Some(v) => self.duration(v, "tls.hsts_max_age", true, MAX_HSTS_MAX_AGE)?,
            None => DEFAULT_HSTS_MAX_AGE,
        };
        let min_version = match table.get("min_version") {
            None => TlsVersion::default(),
            Some(v) => match self.string(v, "tls.min_version")? {
                "1.2" => TlsVersion::Tls12,
                "1.3" => TlsVersion::Tls13,
                other => {
                    let message = format!(
                        "\"{other}\" is not a TLS version this service offers: \"1.2\" or \"1.3\""
                    );
                    self.error_at(v, "tls.min_version", message);
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

    pub(super) fn limits(&mut self, value: &Value<'_>) -> Limits {
        let mut limits = Limits::default();
        let Some(table) = self.table(value, "limits") else {
            return limits;
        };
        let durations: [(&str, &mut Duration); 4] = [
            ("handshake_timeout", &mut limits.handshake_timeout),
            ("header_read_timeout", &mut limits.header_read_timeout),
            ("idle_timeout", &mut limits.idle_timeout),
            ("shutdown_grace", &mut limits.shutdown_grace),
        ];
        let mut known: Vec<&str> = durations.iter().map(|(name, _)| *name).collect();
        for (name, slot) in durations {
            if let Some(v) = table.get(name)
                && let Some(d) = self.duration(v, &join("limits", name), false, MAX_TIMER)
            {
                *slot = d;
            }
        }
        let mut streams = limits.h2_max_concurrent_streams as usize;
        let counts: [(&str, &mut usize, usize); 7] = [
            ("max_connections", &mut limits.max_connections, 1 << 24),
            ("max_header_bytes", &mut limits.max_header_bytes, 1 << 20),
            (
                "max_query_bytes",
                &mut limits.max_query_bytes,
                MAX_QUERY_BYTES,
            ),
            ("h2_max_concurrent_streams", &mut streams, 10_000),
            ("max_unsent_bytes", &mut limits.max_unsent_bytes, 1 << 30),
            ("page_cache_bytes", &mut limits.page_cache_bytes, 1 << 34),
            ("h2_cookie_bytes", &mut limits.h2_cookie_bytes, 1 << 24),
        ];
        known.extend(counts.iter().map(|(name, _, _)| *name));
        for (name, slot, max) in counts {
            if let Some(v) = table.get(name)
                && let Some(n) = self.count(v, &join("limits", name), max)
            {
                *slot = n;
            }
        }
        limits.h2_max_concurrent_streams = u32::try_from(streams).unwrap_or(u32::MAX);
        self.reject_unknown_keys(table, "limits", &known);
        limits
    }

    pub(super) fn count(&mut self, value: &Value<'_>, key: &str, max: usize) -> Option<usize> {
        let parsed = match value.get_ref() {
            DeValue::Integer(i) => usize::from_str_radix(i.as_str(), i.radix()).ok(),
            _ => None,
        };
        match parsed {
            Some(n) if (1..=max).contains(&n) => Some(n),
            _ => {
                self.error_at(
                    value,
                    key,
                    format!("must be a whole number from 1 to {max}"),
                );
                None
            }
        }
    }

    /// A duration up to `max`: deadlines and intervals become timers, which a huge value would
    /// overflow; `max` is far above any useful setting.
    pub(super) fn duration(
        &mut self,
        value: &Value<'_>,
        key: &str,
        zero_ok: bool,
        max: Duration,
    ) -> Option<Duration> {
        let raw = self.string(value, key)?;
        match parse_duration(raw) {
            Some(d) if d > max => {
                let message = format!(
                    "\"{raw}\" is longer than the most this key takes, {}s",
                    max.as_secs()
                );
                self.error_at(value, key, message);
                None
            }
            Some(d) if zero_ok || !d.is_zero() => Some(d),
            _ => {
                let message = format!(
                    "\"{raw}\" is not a duration (a whole number with ms, s, m, h or d, like \"10s\")"
                );
                self.error_at(value, key, message);
                None
            }
        }
    }

    /// A page's cache lifetime: whole seconds, since `max-age` counts in them.
    pub(super) fn cache_max_age(&mut self, value: &Value<'_>, key: &str) -> Option<Duration> {
        let age = self.duration(value, key, true, MAX_CACHE_MAX_AGE)?;
        if age.subsec_nanos() != 0 {
            let message =
                "must be whole seconds (Cache-Control: max-age counts in seconds), like \"10m\""
                    .to_owned();
            self.error_at(value, key, message);
            return None;
        }
        Some(age)
    }

    pub(super) fn parsed<T>(
        &mut self,
        table: &Table<'_>,
        at: &Value<'_>,
        prefix: &str,
        name: &str,
    ) -> Option<T>
    where
        T: std::str::FromStr,
        T::Err: fmt::Display,
    {
        let key = join(prefix, name);
        let Some(value) = table.get(name) else {
            self.error_at(at, &key, "is missing".into());
            return None;
        };
        let raw = self.string(value, &key)?;
        match raw.parse() {
            Ok(parsed) => Some(parsed),
            Err(e) => {
                self.error_at(value, &key, format!("\"{raw}\": {e}"));
                None
            }
        }
    }
}

/// The `sandbox` value of a host table, for messages about it; the table if it has none.
pub(super) fn sandbox_value<'v, 'i>(table: &'v Value<'i>) -> &'v Value<'i> {
    match table.get_ref() {
        DeValue::Table(t) => t.get("sandbox").unwrap_or(table),
        _ => table,
    }
}

pub(super) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    }
}

/// A whole number followed by `ms`, `s`, `m`, `h` or `d`.
pub(super) fn parse_duration(raw: &str) -> Option<Duration> {
    let digits_end = raw.find(|c: char| !c.is_ascii_digit())?;
    let (number, unit) = raw.split_at(digits_end);
    let n: u64 = number.parse().ok()?;
    let seconds = match unit {
        "ms" => return Some(Duration::from_millis(n)),
        "s" => 1,
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        _ => return None,
    };
    n.checked_mul(seconds).map(Duration::from_secs)
}

/// The known key closest to `name`, if it is a likely typo of it.
pub(super) fn near_miss<'k>(name: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (edit_distance(name, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Some(Duration::from_secs(10)));
        assert_eq!(parse_duration("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(
            parse_duration("365d"),
            Some(Duration::from_secs(31_536_000))
        );
        for bad in ["", "10", "s", "1.5s", "-1s", "10 s", "10sec"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn near_misses() {
        let known = ["listen", "admin_listen", "tls", "hosts", "limits"];
        assert_eq!(near_miss("lisen", &known), Some("listen"));
        assert_eq!(near_miss("host", &known), Some("hosts"));
        assert_eq!(near_miss("admin-listen", &known), Some("admin_listen"));
        assert_eq!(near_miss("certificates", &known), None);
    }
}
