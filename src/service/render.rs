//! One page built for one query: pinned to its embedder, under the view policy `policy`
//! decided, with the page's header and the relay's settings.

use std::sync::OnceLock;

use http::header::HeaderValue;

use crate::compress::Encoding;
use crate::embedders::EmbedderError;
use crate::page::{PageTemplate, RelaySettings};
use crate::page_query::{PageQuery, QueryError};
use crate::reports::REPORT_PATH;

use super::Entry;
use super::headers::content_security_policy;
use super::page_cache::{Encoded, RenderedPage, page_tag};
use super::policy::{Signature, decide};

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

/// The page of `entry` served as `served_as` (its route key: lower case, the default port left
/// out) for `query`, at `now` (Unix seconds). An error is the `400`'s reason.
pub(super) fn render(
    template: &PageTemplate,
    entry: &Entry,
    served_as: &str,
    query: &PageQuery,
    now: u64,
    max_query_bytes: usize,
) -> Result<RenderedPage, PageError> {
    let origins = entry.origin.pin(query.embedder())?;
    let (policy, signature) = decide(entry, served_as, query, now)?;
    let sandbox = entry.view_sandbox.page_policy();
    // A host that writes its views' policies gets the page framed and sandboxed only; the
    // spec's default, built all the same, is the relay's for a view that came without one.
    let view_policy = (!entry.host_policy).then(|| policy.header());
    // Absolute: WebKit sends no report of a blocked load in a srcdoc or about:blank frame for
    // a relative `report-uri`.
    let report_to = entry
        .reports
        .then(|| format!("{}://{served_as}{REPORT_PATH}", entry.report_scheme));
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
        signed_policies: entry.signing.is_some(),
        host_policy: entry.host_policy,
        policy_refused: refused.as_deref(),
    };
    let body = template.render(&origins, &policy, &relay);
    let tag = page_tag(&body, &csp);
    Ok(RenderedPage {
        brotli: OnceLock::new(),
        gzip: OnceLock::new(),
        page: Encoded::new(body, tag, Encoding::Identity),
        csp,
        tag,
        dropped: policy.dropped,
        embedder: origins.to_string(),
        policy_upgrade: query.is_policy_upgrade(),
        signature,
    })
}
