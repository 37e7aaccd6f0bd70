//! What a page's query decides: the origins it is pinned to (`embedder`), its view policy
//! (`csp`, for a host that signs only with a valid signature), and the relay's marker.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use http::header::HeaderValue;

use crate::compress::Encoding;
use crate::csp::{QueryError, ViewPolicy, default_for_query, policy_for_query};
use crate::embedders::{EMBEDDER_PARAMETER, Embedders, Pinned};
use crate::page::{RelaySettings, UPGRADE_PARAMETER};
use crate::routing::route_key;
use crate::signing::{PolicyKeys, Refused, Signed, unix_now};

use super::headers::content_security_policy;
use super::page_cache::{Encoded, RenderedPage, page_tag};
use super::{Host, Service};

/// A host entry's signing keys. SECURITY: a signature must be verified over the name the page
/// is served on (a per-server label included), never the entry's: signed for the entry's name,
/// one URL got its policy on every label, so a view on one server's origin could load another
/// server's signed policy and reach that server's domains.
#[derive(Debug)]
pub(super) struct Signing {
    pub(super) keys: PolicyKeys,
    /// Seconds a signed URL may still be valid for (`policy_max_lifetime`).
    pub(super) max_lifetime: u64,
}

/// What a host entry that signs its policies makes of a page's query (see `verify_policy`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyVerdict {
    /// No host entry that signs serves the name: every valid `?csp=` is served.
    Unsigned,
    /// The query has no `csp`: the spec's default policy, which needs no signature.
    NothingDeclared,
    /// Signed by the host, valid until `expires` (Unix seconds).
    Signed { expires: u64 },
    /// The spec's default policy instead of the declared one, and why.
    Refused(String),
}

/// Where a page's view policy came from, as far as signatures go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Signature {
    /// The host does not sign, or the query declares nothing: there was nothing to verify.
    NotChecked,
    /// The declared policy, signed by the host, until its expiry.
    Valid(Signed),
    /// The spec's default policy instead of the declared one.
    Refused(Refused),
}

/// Whether the relay asked for this page: it reloads its own page once, marked so, when a
/// resource declares domains that the served policy lacks.
pub(super) fn is_policy_upgrade(query: &str) -> bool {
    url::form_urlencoded::parse(query.as_bytes())
        .any(|(key, value)| key == UPGRADE_PARAMETER && value == "1")
}

/// The origins a page is pinned to: the host entry's exact ones, or the one an `embedder`
/// parameter names, which must be one of them or of its patterns (see `Embedders::pin`).
pub(super) fn embedder_for<'e>(
    embedders: &'e Embedders,
    query: &str,
) -> Result<Pinned<'e>, String> {
    let named = url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == EMBEDDER_PARAMETER)
        .map(|(_, value)| value);
    embedders.pin(named.as_deref())
}

pub(super) fn refused_query(e: &QueryError) -> String {
    tracing::debug!(reason = %e, "refused ?csp=");
    e.to_string()
}

impl Signing {
    fn verify(&self, served_as: &str, query: &str, now: u64) -> Result<Option<Signed>, Refused> {
        self.keys.verify(served_as, query, now, self.max_lifetime)
    }
}

impl Service {
    /// The page for host `index` served as `served_as` (its route key: lower case, the default
    /// port left out) and a raw query, from the cache or built and cached.
    pub(super) fn rendered(
        &self,
        index: usize,
        served_as: &str,
        query: &str,
    ) -> Result<Arc<RenderedPage>, String> {
        let now = unix_now();
        let host = &self.hosts[index];
        // A signature's verdict depends on the name served, so a signing host's pages are
        // kept per name; every other host's are shared by its names.
        let cache_key = match host.signing {
            Some(_) => Cow::Owned(format!("{served_as}\n{query}")),
            None => Cow::Borrowed(query),
        };
        if let Some(page) = self.pages.get(index, &cache_key)
            && page.is_valid_at(now)
        {
            return Ok(page);
        }
        let origins = embedder_for(&host.origin, query)?;
        let (policy, signature) = self.policy(host, served_as, query, now)?;
        let sandbox = host.view_sandbox.page_policy();
        // A host that writes its views' policies gets the page framed and sandboxed only; the
        // spec's default, built all the same, is the relay's for a view that came without one.
        let view_policy = (!host.host_policy).then(|| policy.header());
        let csp = content_security_policy(view_policy, &origins, &sandbox);
        let Ok(csp) = HeaderValue::from_str(&csp) else {
            // Unreachable: every source in the policy passed `HostSource`, which admits
            // visible ASCII only. Refuse rather than send a page without its policy.
            return Err("the declared domains cannot form a header".to_owned());
        };
        let refused = match &signature {
            Signature::Refused(refused) => Some(refused.to_string()),
            Signature::NotChecked | Signature::Valid(_) => None,
        };
        let relay = RelaySettings {
            max_query_bytes: self.max_query_bytes,
            messages: host.relay_messages,
            view_sandbox: &host.view_sandbox,
            view_sandbox_default: host.view_sandbox_default.as_ref(),
            signed_policies: host.signing.is_some(),
            host_policy: host.host_policy,
            policy_refused: refused.as_deref(),
        };
        let body = self.page.render(&origins, &policy, &relay);
        let tag = page_tag(&body, &csp);
        let page = Arc::new(RenderedPage {
            brotli: OnceLock::new(),
            gzip: OnceLock::new(),
            page: Encoded::new(body, tag, Encoding::Identity),
            csp,
            tag,
            dropped: policy.dropped,
            embedder: origins.to_string(),
            policy_upgrade: is_policy_upgrade(query),
            signature,
        });
        self.pages.insert(index, &cache_key, &page);
        Ok(page)
    }

    /// The view policy of a query: the declared one; for a host that signs its policies, the
    /// declared one only with a valid signature, and the spec's default otherwise.
    pub(super) fn policy(
        &self,
        host: &Host,
        served_as: &str,
        query: &str,
        now: u64,
    ) -> Result<(ViewPolicy, Signature), String> {
        if host.host_policy {
            // `?csp=` is not this host's way: its views carry their own policy.
            let policy = default_for_query(query, self.max_query_bytes, &host.opt_ins)
                .map_err(|e| refused_query(&e))?;
            return Ok((policy, Signature::NotChecked));
        }
        let verdict = host
            .signing
            .as_ref()
            .map(|signing| signing.verify(served_as, query, now));
        let signature = match verdict {
            None | Some(Ok(None)) => Signature::NotChecked,
            Some(Ok(Some(signed))) => Signature::Valid(signed),
            Some(Err(refused)) => {
                let policy = default_for_query(query, self.max_query_bytes, &host.opt_ins)
                    .map_err(|e| refused_query(&e))?;
                return Ok((policy, Signature::Refused(refused)));
            }
        };
        let policy = policy_for_query(Some(query), self.max_query_bytes, &host.opt_ins)
            .map_err(|e| refused_query(&e))?;
        Ok((policy, signature))
    }

    /// The signature the host entry serving `authority` gives `csp` until `expires` (Unix
    /// seconds), with its first key: what `headers --sign` puts in the URL.
    pub fn sign_policy(&self, authority: &str, csp: &str, expires: u64) -> Result<String, String> {
        let signing = self.signing_for(authority)?;
        let served_as = route_key(authority, self.default_port);
        Ok(signing.keys.sign(&served_as, expires, csp))
    }

    /// What the host entry serving `authority` makes of `query`'s signature, as a page
    /// requested now would be served.
    pub fn verify_policy(&self, authority: &str, query: &str) -> PolicyVerdict {
        let Ok(signing) = self.signing_for(authority) else {
            return PolicyVerdict::Unsigned;
        };
        let served_as = route_key(authority, self.default_port);
        match signing.verify(&served_as, query, unix_now()) {
            Ok(None) => PolicyVerdict::NothingDeclared,
            Ok(Some(signed)) => PolicyVerdict::Signed {
                expires: signed.expires,
            },
            Err(refused) => PolicyVerdict::Refused(refused.to_string()),
        }
    }

    fn signing_for(&self, authority: &str) -> Result<&Signing, String> {
        let index = self
            .route(authority)
            .ok_or_else(|| format!("no host entry serves {authority:?}"))?;
        self.hosts[index].signing.as_ref().ok_or_else(|| {
            format!(
                "the host entry serving {authority:?} does not sign its policies (no policy_keys)"
            )
        })
    }
}
