//! The file's top-level keys, and the order its sections are read in: `[tls]` and `[limits]`,
//! then the host entries (the file's, then its `hosts_dir`'s), checked against each other,
//! then `[acme]`, which takes its default names from them.

use std::rc::Rc;
use std::time::Duration;

use super::walk::{Table, Walker};
use super::{Config, DEFAULT_WATCH_INTERVAL, HostEntry, Limits, MAX_TIMER};
use super::{acme, cross_check, host_entry, limits, tenants, tls};

/// The keys of the file's top level.
pub(super) const KEYS: &[&str] = &[
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

/// The whole file: its top-level keys, each section read by its own module.
pub(super) fn config(w: &mut Walker<'_>, doc: &Table<'_>) -> Option<Config> {
    w.reject_unknown_keys(doc, "", KEYS);
    let listen = match doc.get("listen") {
        Some(value) => w.socket_addr(value, "listen"),
        None => {
            w.problem(
                1,
                "listen",
                "is missing (for example listen = \"0.0.0.0:8443\")".into(),
            );
            None
        }
    };
    let admin_listen = doc
        .get("admin_listen")
        .and_then(|v| w.socket_addr(v, "admin_listen"));
    let tls = match doc.get("tls") {
        Some(value) => tls::tls(w, value, doc.contains_key("acme")),
        None => None,
    };
    let limits = match doc.get("limits") {
        Some(value) => limits::limits(w, value),
        None => Limits::default(),
    };
    let watch_interval = match doc.get("watch_interval") {
        Some(value) => w.duration(value, "watch_interval", true, MAX_TIMER),
        None => Some(DEFAULT_WATCH_INTERVAL),
    };
    let cache_max_age = match doc.get("cache_max_age") {
        Some(value) => w.cache_max_age(value, "cache_max_age"),
        None => Some(Duration::ZERO),
    };
    let default_port = super::default_port(doc.contains_key("tls"));
    let cache_max_age = cache_max_age.unwrap_or_default();
    let hosts_dir = doc.get("hosts_dir").map(|v| (v, w.path(v, "hosts_dir")));
    let file: Rc<str> = Rc::from(w.file);
    let mut placed = match doc.get("hosts") {
        Some(value) => host_entry::host_entries(w, value, &file, cache_max_age),
        None => Vec::new(),
    };
    let problems_before = w.problems.len();
    if let Some((at, Some(dir))) = &hosts_dir {
        placed.extend(tenants::tenant_hosts(w, dir, at, cache_max_age));
    }
    // For tenant files, only when nothing else explains it (an unreadable folder, an entry
    // with an error).
    let tenants_explained = w.problems.len() > problems_before;
    if placed.is_empty() && !doc.contains_key("hosts") && !tenants_explained {
        match &hosts_dir {
            None => w.problem(
                1,
                "hosts",
                "is missing: add at least one [[hosts]] entry".into(),
            ),
            Some((at, Some(dir))) => {
                let message = format!(
                    "\"{}\" has no [[hosts]] entry in any *.toml file, and neither has this file: add at least one",
                    dir.display()
                );
                w.error_at(at, "hosts_dir", message);
            }
            Some((_, None)) => {}
        }
    }
    cross_check::cross_check_hosts(w, &placed, default_port);
    let hosts: Vec<HostEntry> = placed.into_iter().map(|p| p.entry).collect();
    let acme = match doc.get("acme") {
        Some(value) if !doc.contains_key("tls") => {
            let message = "issues certificates for a TLS listener: add [tls] (its cert and key may then be left out)";
            w.error_at(value, "acme", message.into());
            None
        }
        Some(value) => Some(acme::acme(w, value, &hosts)?),
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
