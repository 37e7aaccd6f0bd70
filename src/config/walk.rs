//! The walk over a TOML document, key by key, with every problem named by file, line and key:
//! the readers every section uses (a string, a path, a duration, a list of names, a choice), and
//! the near-miss speller for unknown keys. What each section's keys are and mean is in the
//! section's own module.

use std::fmt;
use std::net::SocketAddr;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::MAX_CACHE_MAX_AGE;
use super::problem::Problem;

pub(super) type Table<'i> = DeTable<'i>;

pub(super) type Value<'i> = Spanned<DeValue<'i>>;

/// The keys of one table, and the prefix its messages name them by.
pub(super) struct Keys<'t, 'i> {
    pub(super) table: &'t Table<'i>,
    pub(super) prefix: &'t str,
}

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

    /// An optional key of a host entry: `default` when it is absent, else what `parse` makes
    /// of its value (`None`, with the problem reported, when it cannot).
    pub(super) fn optional<T>(
        &mut self,
        at: &Keys<'_, '_>,
        name: &str,
        default: T,
        parse: impl FnOnce(&mut Self, &Value<'_>, &str) -> Option<T>,
    ) -> Option<T> {
        match at.table.get(name) {
            None => Some(default),
            Some(value) => parse(self, value, &join(at.prefix, name)),
        }
    }

    /// One of a few named choices, each with what it means for the message when none matches.
    pub(super) fn choice<T: Copy>(
        &mut self,
        value: &Value<'_>,
        key: &str,
        choices: &[(&str, T, &str)],
    ) -> Option<T> {
        let raw = self.string(value, key)?;
        if let Some((_, choice, _)) = choices.iter().find(|(name, _, _)| *name == raw) {
            return Some(*choice);
        }
        let known: Vec<String> = choices
            .iter()
            .map(|(name, _, meaning)| format!("\"{name}\" ({meaning})"))
            .collect();
        let message = format!("\"{raw}\" is not a choice: {}", known.join(" or "));
        self.error_at(value, key, message);
        None
    }

    /// A list of names, each parsed, then made into one value by a rule over them all.
    pub(super) fn names_into<T: FromStr<Err: std::fmt::Display>, S, E: std::fmt::Display>(
        &mut self,
        value: &Value<'_>,
        key: &str,
        what: &str,
        build: impl FnOnce(Vec<T>) -> Result<S, E>,
    ) -> Option<S> {
        let names = self.names::<T>(value, key, what)?;
        match build(names) {
            Ok(built) => Some(built),
            Err(problem) => {
                self.error_at(value, key, problem.to_string());
                None
            }
        }
    }

    /// A list of names, each parsed; every one that is not known is its own error.
    pub(super) fn names<T: FromStr<Err: std::fmt::Display>>(
        &mut self,
        value: &Value<'_>,
        key: &str,
        what: &str,
    ) -> Option<Vec<T>> {
        let DeValue::Array(items) = value.get_ref() else {
            let found = value.get_ref().type_str();
            self.error_at(value, key, format!("must be a list of {what}, not {found}"));
            return None;
        };
        let mut parsed = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let name = match item.get_ref() {
                DeValue::String(name) => name.parse::<T>().map_err(|e| e.to_string()),
                other => Err(format!("must be a string, not {}", other.type_str())),
            };
            match name {
                Ok(name) => parsed.push(name),
                Err(message) => {
                    self.error_at(item, &format!("{key}[{i}]"), message);
                    ok = false;
                }
            }
        }
        ok.then_some(parsed)
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
