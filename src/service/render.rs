//! One page built for one query: pinned to its embedder, under the view policy `policy`
//! decided, with the page's header and the relay's settings.

use std::sync::OnceLock;

use http::header::HeaderValue;

use crate::compress::Encoding;
use crate::page::{PageTemplate, RelaySettings};
use crate::page_query::PageQuery;

use super::Host;
use super::headers::content_security_policy;
use super::page_cache::{Encoded, RenderedPage, page_tag};
use super::policy::{Signature, decide};

/// The page of `host` served as `served_as` (its route key: lower case, the default port left
/// out) for `query`, at `now` (Unix seconds). An error is the `400`'s reason.
pub(super) fn render(
    template: &PageTemplate,
    host: &Host,
    served_as: &str,
    query: &PageQuery,
    now: u64,
    max_query_bytes: usize,
) -> Result<RenderedPage, String> {
    let origins = host.origin.pin(query.embedder())?;
    let (policy, signature) = decide(host, served_as, query, now).map_err(|e| {
        tracing::debug!(reason = %e, "refused ?csp=");
        e.to_string()
    })?;
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
        max_query_bytes,
        messages: host.relay_messages,
        view_sandbox: &host.view_sandbox,
        view_sandbox_default: host.view_sandbox_default.as_ref(),
        signed_policies: host.signing.is_some(),
        host_policy: host.host_policy,
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
