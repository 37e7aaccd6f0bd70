//! The admin listener's table of reported violations: the most frequent (host entry, server
//! label, page or view, directive, blocked origin), with counts and when each was first and
//! last seen.
//!
//! Its memory is capped: at most [`TABLE_ENTRIES`] rows, each of bounded size (a label is one
//! DNS label, a blocked origin at most 280 bytes, the host entry's name shared with the
//! config). The eviction rule: a row not yet in a full table replaces the row with the fewest
//! reports, the least recently seen of those. So a flood of distinct origins churns only the
//! rows seen least, and a row seen more often than the flood's rows stays.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::blocked::Blocked;
use super::directive::DIRECTIVES;

/// The most rows the table holds.
pub const TABLE_ENTRIES: usize = 1000;

/// Which policy a report is of: the page's own (`frame-ancestors`, `sandbox`) or the view's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Source {
    Page,
    View,
}

impl Source {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Source::Page => "page",
            Source::View => "view",
        }
    }

    /// The query value a policy's `report-uri` carries.
    pub(crate) fn from_query(query: Option<&str>) -> Source {
        match query {
            Some("from=page") => Source::Page,
            _ => Source::View,
        }
    }
}

/// What one row counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    /// The host entry's name in the metrics (its origin).
    pub(crate) host: Arc<str>,
    /// The server label of a per-server name, if the report was sent to one.
    pub(crate) label: Option<Box<str>>,
    pub(crate) source: Source,
    /// An index into `DIRECTIVES`.
    pub(crate) directive: usize,
    pub(crate) blocked: Blocked,
}

/// One row as the table shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    pub(crate) key: Key,
    pub(crate) count: u64,
    /// Unix seconds.
    pub(crate) first_seen: u64,
    pub(crate) last_seen: u64,
}

#[derive(Debug)]
struct Seen {
    count: u64,
    first_seen: u64,
    last_seen: u64,
}

/// The table, shared by every generation of the config: reports outlive reloads.
#[derive(Debug)]
pub(crate) struct ReportTable {
    rows: Mutex<Rows>,
    capacity: usize,
}

#[derive(Debug, Default)]
struct Rows {
    seen: HashMap<Key, Seen>,
    evicted: u64,
}

impl Default for ReportTable {
    fn default() -> Self {
        ReportTable::with_capacity(TABLE_ENTRIES)
    }
}

impl ReportTable {
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        ReportTable {
            rows: Mutex::new(Rows::default()),
            capacity: capacity.max(1),
        }
    }

    /// Counts one report of `key` at `now` (Unix seconds).
    pub(crate) fn record(&self, key: Key, now: u64) {
        let mut rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(seen) = rows.seen.get_mut(&key) {
            seen.count += 1;
            seen.last_seen = seen.last_seen.max(now);
            return;
        }
        if rows.seen.len() >= self.capacity {
            // A scan of at most `capacity` rows, only for a new row in a full table: the
            // endpoint's rate limit bounds how often that happens.
            let evict = rows
                .seen
                .iter()
                .min_by_key(|(_, seen)| (seen.count, seen.last_seen))
                .map(|(key, _)| key.clone());
            if let Some(evict) = evict {
                rows.seen.remove(&evict);
                rows.evicted += 1;
            }
        }
        let seen = Seen {
            count: 1,
            first_seen: now,
            last_seen: now,
        };
        rows.seen.insert(key, seen);
    }

    /// Every row, the most reported first (then the most recent, then by key), and how many
    /// rows were evicted since the service started.
    pub(crate) fn rows(&self) -> (Vec<Row>, u64) {
        let rows = self.rows.lock().unwrap_or_else(PoisonError::into_inner);
        let mut out: Vec<Row> = rows
            .seen
            .iter()
            .map(|(key, seen)| Row {
                key: key.clone(),
                count: seen.count,
                first_seen: seen.first_seen,
                last_seen: seen.last_seen,
            })
            .collect();
        out.sort_by(|a, b| {
            (b.count, b.last_seen)
                .cmp(&(a.count, a.last_seen))
                .then_with(|| sort_key(&a.key).cmp(&sort_key(&b.key)))
        });
        (out, rows.evicted)
    }
}

/// The table as `/csp-reports` serves it: every row, the most reported first, with what
/// bounds it. Times are Unix seconds.
pub(crate) fn table_json(table: &ReportTable) -> String {
    let (rows, evicted) = table.rows();
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            serde_json::json!({
                "host": &*row.key.host,
                "label": row.key.label.as_deref(),
                "from": row.key.source.as_str(),
                "directive": DIRECTIVES[row.key.directive],
                "blocked": row.key.blocked.as_str(),
                "count": row.count,
                "first_seen": row.first_seen,
                "last_seen": row.last_seen,
            })
        })
        .collect();
    let table = serde_json::json!({
        "advisory": "counts of CSP violation reports browsers sent; anyone can send one",
        "capacity": table.capacity,
        "evicted": evicted,
        "eviction": "a new row in a full table replaces the row with the fewest reports, the least recently seen of those",
        "reports": rows,
    });
    let mut out = table.to_string();
    out.push('\n');
    out
}

fn sort_key(key: &Key) -> (&str, Option<&str>, Source, usize, &Blocked) {
    (
        &key.host,
        key.label.as_deref(),
        key.source,
        key.directive,
        &key.blocked,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(blocked: &str) -> Key {
        Key {
            host: Arc::from("https://chat.example.com"),
            label: None,
            source: Source::View,
            directive: 9,
            blocked: Blocked::reduce(blocked),
        }
    }

    #[test]
    fn a_repeated_report_is_one_row_with_its_count_and_times() {
        let table = ReportTable::with_capacity(4);
        table.record(key("https://a.example/1"), 10);
        table.record(key("https://a.example/2?x"), 20);
        let (rows, evicted) = table.rows();
        assert_eq!(evicted, 0);
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (rows[0].count, rows[0].first_seen, rows[0].last_seen),
            (2, 10, 20)
        );
        assert_eq!(rows[0].key.blocked.as_str(), "https://a.example");
    }

    #[test]
    fn a_flood_of_distinct_maximal_rows_stays_within_the_cap() {
        let table = ReportTable::default();
        let label = "l".repeat(63);
        let host = "h".repeat(240);
        let flood = 20 * TABLE_ENTRIES;
        for n in 0..flood {
            let blocked = format!("https://{n:0>12}{host}.example:65535/path?query={n}");
            let mut key = key(&blocked);
            key.label = Some(label.as_str().into());
            key.source = [Source::Page, Source::View][n % 2];
            table.record(key, n as u64);
        }
        let (rows, evicted) = table.rows();
        assert_eq!(rows.len(), TABLE_ENTRIES);
        assert_eq!(evicted, (flood - TABLE_ENTRIES) as u64);
        // Each row holds at most a label and an origin of bounded size: the table's bytes are
        // capped whatever was sent.
        let bytes: usize = rows
            .iter()
            .map(|r| r.key.label.as_deref().map_or(0, str::len) + r.key.blocked.as_str().len())
            .sum();
        assert!(bytes <= TABLE_ENTRIES * (63 + 280), "{bytes} bytes");
        assert!(rows.iter().all(|r| !r.key.blocked.as_str().contains('?')));
    }

    #[test]
    fn a_full_table_evicts_the_least_seen_row_and_keeps_the_frequent_one() {
        let table = ReportTable::with_capacity(3);
        for now in 0..5 {
            table.record(key("https://frequent.example"), now);
        }
        for (now, n) in (10..).zip(0..100) {
            table.record(key(&format!("https://flood{n}.example")), now);
        }
        let (rows, evicted) = table.rows();
        assert_eq!(rows.len(), 3);
        assert_eq!(evicted, 98);
        assert_eq!(rows[0].key.blocked.as_str(), "https://frequent.example");
        assert_eq!(rows[0].count, 5);
        // The newest flood rows are kept: the older ones went first.
        assert!(
            rows[1..]
                .iter()
                .all(|r| r.key.blocked.as_str().starts_with("https://flood9"))
        );
    }
}
