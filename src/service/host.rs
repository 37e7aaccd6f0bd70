//! One host entry as the service answers for it: the config's entry itself, and what its
//! answers need that is built once per config (its counters, caching, and names).

use std::sync::Arc;

use crate::config::{HostEntry, ViewPolicyOwner};
use crate::metrics::{HostCounters, Metrics};
use crate::origin::Embedder;
use crate::routing::route_key;

use super::caching::Caching;
use super::policy::Signing;

/// A host entry and what its answers share.
#[derive(Debug)]
pub(super) struct Host {
    /// The entry as the config has it.
    pub(super) config: HostEntry,
    pub(super) counters: Arc<HostCounters>,
    pub(super) caching: Caching,
    /// The entry's name in the metrics and the report table (its origin).
    pub(super) name: Arc<str>,
    /// The sandbox name as routed (lower case, the default port left out).
    pub(super) sandbox: Box<str>,
    /// `https` or `http`: how browsers reach this sandbox, for the report endpoint's URL and
    /// the origins of its per-server labels.
    pub(super) scheme: &'static str,
}

impl Host {
    pub(super) fn new(entry: &HostEntry, metrics: &Metrics, tls: bool, default_port: u16) -> Self {
        let name = entry.origin.to_string();
        // An https host page cannot frame an http sandbox (mixed content), so without [tls]
        // a sandbox of an https host is reached through a front end that terminates TLS.
        let https = tls || entry.origin.iter().any(Embedder::is_https);
        Host {
            counters: metrics.entry(&name),
            name: Arc::from(name),
            sandbox: route_key(&entry.sandbox.authority(default_port), default_port).into(),
            scheme: if https { "https" } else { "http" },
            caching: Caching::new(entry.cache_max_age),
            config: entry.clone(),
        }
    }

    /// The host writes its views' policies itself: the header carries none (`view_policy`).
    pub(super) fn writes_view_policies(&self) -> bool {
        self.config.view_policy == ViewPolicyOwner::Host
    }

    /// For a host that signs its policies: its keys, and how long a signed URL may live.
    pub(super) fn signing(&self) -> Option<Signing<'_>> {
        let keys = self.config.policy_keys.as_ref()?;
        Some(Signing {
            keys,
            max_lifetime: self.config.policy_max_lifetime.as_secs(),
        })
    }

    /// The server label of a per-server name: what `served_as` (a route key) has below the
    /// sandbox name. The router took it as one DNS label.
    pub(super) fn label_of<'a>(&self, served_as: &'a str) -> Option<&'a str> {
        served_as
            .strip_suffix(&*self.sandbox)?
            .strip_suffix('.')
            .filter(|label| !label.is_empty())
    }
}
