//! The proxy page: `proxy-page/` stripped and embedded at build time, rendered for one host
//! and one policy.
//!
//! The only per-request text in the page is one JSON document inside a
//! `<script type="application/json">`, escaped so that no string can close that element.

use bytes::{BufMut, Bytes, BytesMut};
use serde_json::{Value, json};

use crate::config::{RelayMessages, ViewFeatures};
use crate::csp::{DomainList, ViewPolicy};
use crate::embedders::Pinned;
use crate::sandbox::{SandboxToken, ViewSandbox};

// The sources in proxy-page/, as build.rs strips them (comments and indentation).
const TEMPLATE: &str = include_str!(concat!(env!("OUT_DIR"), "/sandbox.html"));
pub(crate) const RELAY_JS: &str = include_str!(concat!(env!("OUT_DIR"), "/relay.js"));
const CONFIG_SLOT: &str = "/*SANDBOX_CONFIG*/";
const RELAY_SLOT: &str = "/*RELAY_JS*/";

/// At most this many dropped entries are listed in the page; the count is always exact.
const MAX_DROPPED_LISTED: usize = 50;

/// The page split around its one per-request slot, built once.
#[derive(Clone, Debug)]
pub(crate) struct PageTemplate {
    before: Bytes,
    after: Bytes,
}

impl PageTemplate {
    pub(crate) fn new() -> Self {
        let page = TEMPLATE.replacen(RELAY_SLOT, RELAY_JS, 1);
        // The template is ours and has the slot exactly once; `sandbox_page_has_one_slot`
        // below keeps it so. Without it the page would be served with no config at all.
        let (before, after) = page.split_once(CONFIG_SLOT).unwrap_or((&page, ""));
        PageTemplate {
            before: Bytes::copy_from_slice(before.as_bytes()),
            after: Bytes::copy_from_slice(after.as_bytes()),
        }
    }

    /// The page config a page rendered from this template carries (see `page_config`), or
    /// `None` for bytes that are no such page.
    pub(crate) fn config_of<'p>(&self, page: &'p [u8]) -> Option<&'p [u8]> {
        page.strip_prefix(&self.before[..])?
            .strip_suffix(&self.after[..])
    }

    /// The page for one host origin, with the policy the server applied.
    pub(crate) fn render(
        &self,
        hosts: &Pinned<'_>,
        policy: &ViewPolicy,
        relay: &RelaySettings<'_>,
    ) -> Bytes {
        let config = script_safe_json(&page_config(hosts, policy, relay));
        let mut out = BytesMut::with_capacity(self.before.len() + config.len() + self.after.len());
        out.put_slice(&self.before);
        out.put_slice(config.as_bytes());
        out.put_slice(&self.after);
        out.freeze()
    }
}

/// What the relay does beyond the spec's defaults, as the host entry and limits set it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RelaySettings<'a> {
    /// The longest query the service takes, for the relay's own `?csp=`.
    pub(crate) max_query_bytes: usize,
    pub(crate) messages: RelayMessages,
    /// The sandbox tokens a view may get: the page's header holds no more.
    pub(crate) view_sandbox: &'a ViewSandbox,
    /// The tokens a view gets when the host asks for none; `None`: the spec's default.
    pub(crate) view_sandbox_default: Option<&'a ViewSandbox>,
    /// The browser features every view gets beyond what its host asked for.
    pub(crate) view_features: &'a ViewFeatures,
    /// An opaque view gets a `Storage` in its memory instead of the one that throws.
    pub(crate) memory_storage: bool,
    /// The host signs its policies: the relay never asks for another one itself.
    pub(crate) signed_policies: bool,
    /// Why this page's `?csp=` got the default policy instead, for the relay to say.
    pub(crate) policy_refused: Option<&'a str>,
    /// The host writes its views' policies (`view_policy = "host"`): the header has none.
    pub(crate) host_policy: bool,
}

/// What the relay needs to know: whom to trust, what the header allows, and its settings.
/// Each datum once: the policy itself is the page's header, not repeated here.
fn page_config(hosts: &Pinned<'_>, policy: &ViewPolicy, relay: &RelaySettings<'_>) -> Value {
    let applied = policy.domains.as_ref().map(|domains| {
        let mut lists = serde_json::Map::new();
        for list in DomainList::ALL {
            let sources: Vec<&str> = domains.list(list).iter().map(|s| s.as_str()).collect();
            lists.insert(list.key().to_owned(), json!(sources));
        }
        Value::Object(lists)
    });
    let dropped: Vec<Value> = policy
        .dropped
        .iter()
        .take(MAX_DROPPED_LISTED)
        .map(|d| json!({"list": d.list.key(), "entry": d.entry, "reason": d.reason.to_string()}))
        .collect();
    json!({
        "hostOrigins": hosts.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "applied": applied,
        "dropped": dropped,
        "droppedCount": policy.dropped.len(),
        "maxQueryBytes": relay.max_query_bytes,
        "anyMessages": relay.messages == RelayMessages::Any,
        "viewSandbox": relay.view_sandbox.iter().map(SandboxToken::name).collect::<Vec<_>>(),
        "viewSandboxDefault": relay
            .view_sandbox_default
            .map(|tokens| tokens.iter().map(SandboxToken::name).collect::<Vec<_>>()),
        "viewFeatures": relay.view_features.names().collect::<Vec<_>>(),
        "memoryStorage": relay.memory_storage,
        "signedPolicies": relay.signed_policies,
        "policyRefused": relay.policy_refused,
        // For a host that writes its views' policies: whose it is, and the spec's default (with
        // the host's opt-ins) for a view that came without one.
        "hostPolicy": relay.host_policy,
        "defaultPolicy": relay.host_policy.then(|| policy.header()),
    })
}

/// JSON that is inert inside a `<script>` element: `<`, `>` and `&` become `\u003c`…, so no
/// `</script>` or `<!--` can appear, and U+2028/U+2029 are escaped for old JavaScript parsers.
pub(crate) fn script_safe_json(value: &Value) -> String {
    let raw = value.to_string();
    let mut out = String::with_capacity(raw.len() + 16);
    for c in raw.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_page_has_one_slot() {
        assert_eq!(TEMPLATE.matches(CONFIG_SLOT).count(), 1);
        assert_eq!(TEMPLATE.matches(RELAY_SLOT).count(), 1);
        assert!(
            !RELAY_JS.contains("</script"),
            "the relay is inlined into a <script>"
        );
    }

    #[test]
    fn script_safe_json_cannot_close_its_element() {
        let hostile = json!({"x": "</script><script>alert(1)</script><!-- & \u{2028}"});
        let safe = script_safe_json(&hostile);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'));
        let back: Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, hostile, "escaping must not change the value");
    }
}
