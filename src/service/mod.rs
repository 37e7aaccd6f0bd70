//! Request in, response out, for the public listener. A newcomer starts at `front_door`,
//! which composes the rest, one file per step, each visited once on a request's way:
//!
//! - `refusal`: a request refused before it is routed;
//! - `route`: its host entry (`host`, built once per config) and the name it is served as;
//! - `page`: the page, from `page_cache`, or its query read once (`page_query`), its view
//!   policy decided and the page built (`render`; signatures are `policy`'s, the page's header
//!   `csp_header`'s); what is logged about it (`logs`), the form the client accepts (`forms`),
//!   its headers (`headers`) and its caching (`caching`);
//! - `reports`: a CSP report, checked, read and taken.
//!
//! No sockets here. `serve` and the `headers` command both call [`Service::handle_on`], so
//! what `headers` prints is what `serve` sends.

mod caching;
mod csp_header;
mod forms;
mod front_door;
mod headers;
mod host;
mod labels;
mod logs;
mod page;
mod page_cache;
mod policy;
mod refusal;
mod render;
mod reports;
mod route;

use std::sync::Arc;
use std::time::Duration;

use http::Response;
use http::header::HeaderValue;

use crate::body::Body;
use crate::config::Config;
use crate::metrics::{HostCounters, Metrics};
use crate::page::PageTemplate;
use crate::page_query::PageQuery;
use crate::reports::Intake;
use crate::routing::{Routes, route_key};
use crate::signing::unix_now;

use host::Host;
use page_cache::PageCache;
use policy::Signing;

pub use labels::{NoLabel, ViewOrigin};
pub use policy::PolicyVerdict;

pub(crate) use headers::plain_text;

/// A request turned away: the host entry it was for, if any, and its answer. As large as any
/// answer, and returned once per request, as a ready answer is (so not boxed).
type Turned<'s> = (Option<&'s Host>, Response<Body>);

/// What the connection a request arrived on says about it.
#[derive(Clone, Copy, Debug)]
pub enum Transport<'a> {
    /// Plain TCP, or no connection at all (the `headers` command): no server name to check.
    Plain,
    /// TLS, with the server name (SNI) the client asked for, if it sent one.
    Tls {
        /// The name the handshake asked for (SNI), if any.
        server_name: Option<&'a str>,
    },
}

/// The request handler for the public listener, built once per config.
#[derive(Debug)]
pub struct Service {
    hosts: Vec<Host>,
    /// Authority → entry index.
    names: Routes<usize>,
    /// TLS server name (a hostname without port) → entry indices, for the SNI/authority rule.
    /// Several entries may share a name on different ports.
    server_names: Routes<Vec<usize>>,
    unmatched: Arc<HostCounters>,
    tls: bool,
    default_port: u16,
    hsts: Option<HeaderValue>,
    max_query_bytes: usize,
    max_header_bytes: usize,
    page: PageTemplate,
    pages: PageCache,
    /// Shared by every generation: the report table, rates and refusals.
    reports: Arc<Intake>,
    /// How long a report's body may take to arrive.
    report_read_timeout: Duration,
}

impl Service {
    /// A service with metrics of its own (the `headers` command, tests).
    pub fn new(config: &Config) -> Self {
        Self::with_metrics(config, &Metrics::new())
    }

    /// A service that counts into `metrics`, which outlive reloads.
    pub fn with_metrics(config: &Config, metrics: &Metrics) -> Self {
        let default_port = crate::config::default_port(config.tls.is_some());
        let mut hosts = Vec::with_capacity(config.hosts.len());
        let mut names = Routes::default();
        let mut server_names = Routes::<Vec<usize>>::default();
        for (index, entry) in config.hosts.iter().enumerate() {
            hosts.push(Host::new(
                entry,
                metrics,
                config.tls.is_some(),
                default_port,
            ));
            let per_server = entry.per_server_subdomains;
            let authority = entry.sandbox.authority(default_port);
            names.add(&authority, per_server, |slot| *slot = index);
            server_names.add(entry.sandbox.hostname(), per_server, |slot| {
                slot.push(index)
            });
        }
        let hsts = config
            .tls
            .as_ref()
            .filter(|tls| !tls.hsts_max_age.is_zero())
            .map(|tls| hsts_value(tls.hsts_max_age));
        Service {
            hosts,
            names,
            server_names,
            unmatched: metrics.unmatched(),
            tls: config.tls.is_some(),
            default_port,
            hsts,
            max_query_bytes: config.limits.max_query_bytes,
            max_header_bytes: config.limits.max_header_bytes,
            page: PageTemplate::new(),
            pages: PageCache::new(config.limits.page_cache_bytes),
            reports: metrics.reports(),
            report_read_timeout: config.limits.header_read_timeout,
        }
    }

    /// The signature the host entry serving `authority` gives `csp` until `expires` (Unix
    /// seconds), with its first key: what `headers --sign` puts in the URL.
    pub fn sign_policy(
        &self,
        authority: &str,
        csp: &str,
        expires: u64,
    ) -> Result<String, NoSigner> {
        let signing = self.signing_for(authority)?;
        let served_as = route_key(authority, self.default_port);
        Ok(signing.keys.sign(&served_as, expires, csp))
    }

    /// What the host entry serving `authority` makes of a raw query's signature, as a page
    /// requested now would be served.
    pub fn verify_policy(&self, authority: &str, raw_query: &str) -> PolicyVerdict {
        let Ok(signing) = self.signing_for(authority) else {
            return PolicyVerdict::Unsigned;
        };
        match PageQuery::parse(raw_query, self.max_query_bytes) {
            Ok(query) => {
                let served_as = route_key(authority, self.default_port);
                signing.verdict(&served_as, &query, unix_now())
            }
            Err(unreadable) => PolicyVerdict::Unreadable(unreadable),
        }
    }

    fn signing_for(&self, authority: &str) -> Result<Signing<'_>, NoSigner> {
        let index = self
            .host_index(authority)
            .ok_or_else(|| NoSigner::NoHost(authority.to_owned()))?;
        self.hosts[index]
            .signing()
            .ok_or_else(|| NoSigner::Unsigned(authority.to_owned()))
    }
}

/// Why no policy can be signed for a name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NoSigner {
    /// No host entry serves it.
    #[error("no host entry serves {0:?}")]
    NoHost(String),
    /// Its host entry does not sign.
    #[error("the host entry serving {0:?} does not sign its policies (no policy_keys)")]
    Unsigned(String),
}

fn hsts_value(max_age: Duration) -> HeaderValue {
    let value = format!("max-age={}", max_age.as_secs());
    HeaderValue::from_str(&value).expect("max-age=<digits> is visible ASCII")
}
