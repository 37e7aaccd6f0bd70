//! One page built for one query: pinned to its embedder, under the view policy decided here,
//! with the page's header and the relay's settings, and the tag its forms' `ETag`s start from.

use bytes::Bytes;
use http::header::HeaderValue;

use crate::config::OpaqueViewStorage;
use crate::csp::Dropped;
use crate::csp::ViewPolicy;
use crate::embedders::EmbedderError;
use crate::page::{PageTemplate, RelaySettings};
use crate::page_query::{PageQuery, QueryError};
use crate::reports::REPORT_PATH;

use super::csp_header::content_security_policy;
use super::forms::Forms;
use super::host::Host;
use super::policy::Signature;

/// Why a page cannot be served: its `400`, with this text.
#[derive(Debug, thiserror::Error)]
pub(super) enum PageError {
    #[error(transparent)]
    Embedder(#[from] EmbedderError),
    #[error(transparent)]
    Query(#[from] QueryError),
    /// Unreachable: every source in a policy passed `HostSource`, which admits visible ASCII
    /// only. Refused rather than a page sent without its policy.
    #[error("the declared domains cannot form a header")]
    Header,
}

/// The page of `host` served as `served_as` (its route key: lower case, the default port left
/// out) for `query`, at `now` (Unix seconds). An error is the `400`'s reason.
pub(super) fn render(
    template: &PageTemplate,
    host: &Host,
    served_as: &str,
    query: &PageQuery,
    now: u64,
    max_query_bytes: usize,
) -> Result<RenderedPage, PageError> {
    let entry = &host.config;
    let origins = entry.origin.pin(query.embedder())?;
    let (policy, signature) = decide(host, served_as, query, now)?;
    let sandbox = entry.view_sandbox.page_policy();
    // A host that writes its views' policies gets the page framed and sandboxed only; the
    // spec's default, built all the same, is the relay's for a view that came without one.
    let view_policy = (!host.writes_view_policies()).then(|| policy.header());
    // Absolute: WebKit sends no report of a blocked load in a srcdoc or about:blank frame for
    // a relative `report-uri`.
    let report_to = entry
        .csp_reports
        .then(|| format!("{}://{served_as}{REPORT_PATH}", host.scheme));
    let csp = content_security_policy(view_policy, &origins, &sandbox, report_to.as_deref());
    let Ok(csp) = HeaderValue::from_str(&csp) else {
        return Err(PageError::Header);
    };
    let refused = match &signature {
        Signature::Refused(refused) => Some(refused.to_string()),
        Signature::NotChecked | Signature::Valid(_) => None,
    };
    let relay = RelaySettings {
        max_query_bytes,
        messages: entry.relay_messages,
        view_sandbox: &entry.view_sandbox,
        view_sandbox_default: entry.view_sandbox_default.as_ref(),
        view_features: &entry.view_features,
        memory_storage: entry.opaque_view_storage == OpaqueViewStorage::Memory,
        signed_policies: entry.policy_keys.is_some(),
        host_policy: host.writes_view_policies(),
        policy_refused: refused.as_deref(),
    };
    let body = template.render(&origins, &policy, &relay);
    let tag = page_tag(&body, &csp);
    Ok(RenderedPage {
        body,
        forms: Forms::default(),
        csp,
        tag,
        dropped: policy.dropped,
        embedder: origins.to_string(),
        policy_upgrade: query.is_policy_upgrade(),
        signature,
    })
}

/// The view policy of a page of `host` served as `served_as` (its route key) for `query`, at
/// `now`, and what its signature was found to be: the declared one; for a host that signs its
/// policies, only with a valid signature; for a host that writes its views' policies itself,
/// none but the spec's default, kept for the relay.
fn decide(
    host: &Host,
    served_as: &str,
    query: &PageQuery,
    now: u64,
) -> Result<(ViewPolicy, Signature), QueryError> {
    let strict;
    let opt_ins = if query.is_strict() {
        strict = host.config.view_opt_ins.strict();
        &strict
    } else {
        &host.config.view_opt_ins
    };
    if host.writes_view_policies() {
        // `?csp=` is not this host's way: its views carry their own policy.
        return Ok((ViewPolicy::spec_default(opt_ins), Signature::NotChecked));
    }
    let signature = match host.signing() {
        None => Signature::NotChecked,
        Some(signing) => match signing.verify(served_as, query, now) {
            Ok(None) => Signature::NotChecked,
            Ok(Some(signed)) => Signature::Valid(signed),
            Err(refused) => Signature::Refused(refused),
        },
    };
    if let Signature::Refused(_) = signature {
        return Ok((ViewPolicy::spec_default(opt_ins), signature));
    }
    Ok((query.view_policy(opt_ins)?, signature))
}

/// A page and the headers that depend on its query, built once; its forms (`forms`) are made
/// the first time a client accepts one, and kept with it.
#[derive(Debug)]
pub(super) struct RenderedPage {
    pub(super) body: Bytes,
    pub(super) forms: Forms,
    /// Two policies in one header, `<view policy>, frame-ancestors <host origin>`: see
    /// `content_security_policy`.
    pub(super) csp: HeaderValue,
    /// Names the page's bytes and policy: the base of every form's `ETag`.
    pub(super) tag: u64,
    pub(super) dropped: Vec<Dropped>,
    /// The origins allowed to frame this page (`frame-ancestors`), as browsers serialize
    /// them, separated by spaces.
    pub(super) embedder: String,
    /// The query marks the relay asking for its page again (see `PageQuery::is_policy_upgrade`).
    pub(super) policy_upgrade: bool,
    pub(super) signature: Signature,
}

/// What a page's answer depends on besides its coding: the page (which holds the relay, the
/// host origin and the view policy) and its `Content-Security-Policy`. Any change to either
/// gives a new tag, so a cache that revalidates never keeps a stale page. The hash is stable
/// for a given build, so replicas of one release agree behind a shared cache; a tag that
/// differs between releases costs one full answer, never a wrong one.
fn page_tag(body: &[u8], csp: &HeaderValue) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    body.hash(&mut hasher);
    csp.as_bytes().hash(&mut hasher);
    hasher.finish()
}
