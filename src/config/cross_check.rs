//! Rules that relate entries: unique sandbox names, no sandbox on a host's own origin, and a
//! warning when the two share a site, each a lookup in an index built once.

use std::collections::HashMap;

use crate::origin::{Embedder, Origin, OriginPattern, site_guess};
use crate::routing::{is_one_label_below, parent_name};

use super::HostEntry;
use super::host_entry::Placed;
use super::walk::Walker;

/// Why `entry`'s sandbox would serve the same origin as `origin`, if it would.
pub(super) fn same_origin_as(entry: &HostEntry, origin: &Origin) -> Option<String> {
    // The scheme browsers see is not known here: without [tls] a load balancer may still
    // serve the sandbox over https. So only ports are compared: no port on either side
    // means each is on its scheme's default, which is the same origin if the schemes agree.
    let same_port = match entry.sandbox.port() {
        Some(port) => {
            let default = match origin.scheme() {
                crate::origin::Scheme::Http => 80,
                crate::origin::Scheme::Https => 443,
            };
            port == origin.port().unwrap_or(default)
        }
        None => origin.port().is_none(),
    };
    let host = entry.sandbox.hostname();
    let same_host = host == origin.hostname()
        || entry.per_server_subdomains && is_one_label_below(origin.hostname(), host);
    // SECURITY: a view served from the host's own origin could reach the host's DOM,
    // cookies and storage: the whole point of the proxy is a different origin.
    (same_host && same_port).then(|| {
        format!(
            "\"{}\" serves the same origin as the host {origin}: the sandbox must be a different origin",
            entry.sandbox
        )
    })
}

/// As `same_origin_as`, for every origin a pattern stands for: no name the sandbox answers may
/// be one of them.
pub(super) fn one_of_pattern(entry: &HostEntry, pattern: &OriginPattern) -> Option<String> {
    let host = entry.sandbox.hostname();
    let same_port = entry.sandbox.port().unwrap_or(443) == pattern.port().unwrap_or(443);
    // SECURITY: a sandbox name that is itself one of the pattern's origins (or whose
    // per-server labels are) would run views on a host page's own origin.
    let same_host = is_one_label_below(host, pattern.suffix())
        || entry.per_server_subdomains && host == pattern.suffix();
    (same_host && same_port).then(|| {
        format!(
            "\"{}\" serves an origin of the host pattern {pattern}: the sandbox must be a different origin",
            entry.sandbox
        )
    })
}

/// Every entry's host origins and patterns, by what the cross-checks look up: a host name, the
/// name one label up, a pattern's name, and a site.
pub(super) struct EmbedderIndex<'h> {
    pub(super) by_host: HashMap<&'h str, Vec<&'h Origin>>,
    pub(super) by_parent_host: HashMap<&'h str, Vec<&'h Origin>>,
    pub(super) patterns_by_suffix: HashMap<&'h str, Vec<&'h OriginPattern>>,
    /// What each site holds, as the messages name it (`https://chat.example.com`,
    /// `host pattern https://*.preview.example.com`).
    pub(super) by_site: HashMap<&'h str, Vec<SiteMember<'h>>>,
}

pub(super) struct SiteMember<'h> {
    pub(super) embedder: &'h Embedder,
    pub(super) shown: String,
    pub(super) loopback: bool,
}

impl<'h> EmbedderIndex<'h> {
    pub(super) fn new(hosts: &'h [Placed]) -> Self {
        let mut index = EmbedderIndex {
            by_host: HashMap::new(),
            by_parent_host: HashMap::new(),
            patterns_by_suffix: HashMap::new(),
            by_site: HashMap::new(),
        };
        for Placed { entry, .. } in hosts {
            for embedder in entry.origin.iter() {
                index.add(embedder);
            }
        }
        index
    }

    fn add(&mut self, embedder: &'h Embedder) {
        let (name, shown) = match embedder {
            Embedder::Exact(origin) => {
                self.by_host
                    .entry(origin.hostname())
                    .or_default()
                    .push(origin);
                if let Some(parent) = parent_name(origin.hostname()) {
                    self.by_parent_host.entry(parent).or_default().push(origin);
                }
                (origin.hostname(), origin.to_string())
            }
            Embedder::Pattern(pattern) => {
                let suffix = pattern.suffix();
                let patterns = self.patterns_by_suffix.entry(suffix).or_default();
                patterns.push(pattern);
                (suffix, format!("pattern {pattern}"))
            }
        };
        let loopback = matches!(embedder, Embedder::Exact(o) if o.is_loopback());
        let member = SiteMember {
            embedder,
            shown,
            loopback,
        };
        let site = self.by_site.entry(site_guess(name)).or_default();
        site.push(member);
    }
}

/// Whether `entry`'s sandbox is refused for `embedder` (then a same-site warning would add nothing).
pub(super) fn refused(entry: &HostEntry, embedder: &Embedder) -> bool {
    match embedder {
        Embedder::Exact(origin) => same_origin_as(entry, origin).is_some(),
        Embedder::Pattern(pattern) => one_of_pattern(entry, pattern).is_some(),
    }
}

/// Rules that relate entries: unique names, no sandbox on a host's own origin, and a
/// warning when the two share a site. Each is a lookup in a map built once, so the cost
/// grows with the number of entries rather than its square (platforms run one entry per
/// tenant). A problem is reported at the later entry, naming the earliest one it meets.
pub(super) fn cross_check_hosts(w: &mut Walker<'_>, hosts: &[Placed], default_port: u16) {
    let authorities: Vec<String> = hosts
        .iter()
        .map(|placed| placed.entry.sandbox.authority(default_port))
        .collect();
    let embedders = EmbedderIndex::new(hosts);
    // The earlier entries: by name, the per-server ones by name, and by the name one label up.
    let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(hosts.len());
    let mut per_server: HashMap<&str, usize> = HashMap::new();
    let mut by_parent: HashMap<&str, usize> = HashMap::with_capacity(hosts.len());
    for (n, placed) in hosts.iter().enumerate() {
        let entry = &placed.entry;
        let authority = authorities[n].as_str();
        let key = format!("hosts[{}].sandbox", placed.index);
        let parent = parent_name(authority);
        if let Some(&m) = by_name.get(authority) {
            let message = format!(
                "\"{authority}\" is already the sandbox of {}",
                hosts[m].named_from(placed)
            );
            w.problem_in(&placed.file, placed.line, &key, message);
        } else {
            let overlapping = parent
                .and_then(|parent| per_server.get(parent))
                .or_else(|| {
                    by_parent
                        .get(authority)
                        .filter(|_| entry.per_server_subdomains)
                });
            if let Some(&m) = overlapping {
                let message = format!(
                    "\"{authority}\" overlaps the sandbox \"{}\" of {} through per-server subdomains: a request could mean either",
                    authorities[m],
                    hosts[m].named_from(placed)
                );
                w.problem_in(&placed.file, placed.line, &key, message);
            }
        }
        by_name.entry(authority).or_insert(n);
        if entry.per_server_subdomains {
            per_server.entry(authority).or_insert(n);
        }
        if let Some(parent) = parent {
            by_parent.entry(parent).or_insert(n);
        }
        check_sandbox_against_embedders(w, placed, &embedders, &key);
    }
}

/// The sandbox of `entry` against every host origin and pattern that could be its origin
/// or share its site, found by lookups. A same-site warning names the first such host and
/// counts the others, so that a thousand tenants on one site make one line, not a thousand.
pub(super) fn check_sandbox_against_embedders(
    w: &mut Walker<'_>,
    placed: &Placed,
    embedders: &EmbedderIndex<'_>,
    key: &str,
) {
    let entry = &placed.entry;
    let host = entry.sandbox.hostname();
    let mut candidates: Vec<&Origin> = embedders.by_host.get(host).cloned().unwrap_or_default();
    if entry.per_server_subdomains
        && let Some(below) = embedders.by_parent_host.get(host)
    {
        candidates.extend(below);
    }
    for origin in candidates {
        if let Some(message) = same_origin_as(entry, origin) {
            w.problem_in(&placed.file, placed.line, key, message);
        }
    }
    let mut patterns: Vec<&OriginPattern> = parent_name(host)
        .and_then(|parent| embedders.patterns_by_suffix.get(parent))
        .cloned()
        .unwrap_or_default();
    if entry.per_server_subdomains
        && let Some(at_name) = embedders.patterns_by_suffix.get(host)
    {
        patterns.extend(at_name);
    }
    for pattern in patterns {
        if let Some(message) = one_of_pattern(entry, pattern) {
            w.problem_in(&placed.file, placed.line, key, message);
        }
    }
    let site = site_guess(host);
    // Not warned about: a loopback host for a loopback sandbox, and a host whose origin
    // this sandbox was just refused for.
    let loopback = entry.sandbox.is_loopback();
    let others: Vec<&str> = embedders
        .by_site
        .get(site)
        .into_iter()
        .flatten()
        .filter(|e| !(loopback && e.loopback))
        .filter(|e| !refused(entry, e.embedder))
        .map(|e| e.shown.as_str())
        .collect();
    if let Some(first) = others.first() {
        let more = match others.len() - 1 {
            0 => String::new(),
            n => format!(" (and {n} more host(s) on it)"),
        };
        let message = format!(
            "\"{}\" is on the same site as the host {first}{more} ({site}): browsers share SameSite cookies and some storage partitions within a site; a sandbox on its own registrable domain isolates views from the host completely",
            entry.sandbox
        );
        w.warning_in(&placed.file, Some(placed.line), key, message);
    }
}
