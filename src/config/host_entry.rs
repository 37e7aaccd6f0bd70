//! One `[[hosts]]` entry and its keys.

use std::rc::Rc;
use std::str::FromStr;
use std::time::Duration;

use toml::de::DeValue;

use crate::csp::{OptIn, OptIns};
use crate::embedders::Embedders;
use crate::origin::{Embedder, SandboxName};
use crate::page_paths::PagePaths;
use crate::sandbox::ViewSandbox;
use crate::signing::PolicyKeys;

use super::features::{ViewFeature, ViewFeatures};
use super::walk::{Keys, Value, Walker, join};
use super::{
    DEFAULT_POLICY_MAX_LIFETIME, HostEntry, MAX_POLICY_MAX_LIFETIME, OpaqueViewStorage,
    RelayMessages, ViewPolicyOwner,
};

/// A host entry and where it was written, for messages about it and about the entries it
/// meets.
pub(super) struct Placed {
    pub(super) entry: HostEntry,
    pub(super) file: Rc<str>,
    /// Its index among the file's `[[hosts]]`.
    pub(super) index: usize,
    /// The line of its `sandbox` (of the entry, if it has none).
    pub(super) line: usize,
}

impl Placed {
    /// How a message about `from` names this entry: `hosts[2]`, and its file if another.
    pub(super) fn named_from(&self, from: &Placed) -> String {
        if self.file == from.file {
            format!("hosts[{}]", self.index)
        } else {
            format!("hosts[{}] in {}", self.index, self.file)
        }
    }
}

/// The keys of one `[[hosts]]` entry.
pub(super) const KEYS: &[&str] = &[
    "origin",
    "sandbox",
    "per_server_subdomains",
    "cache_max_age",
    "view_opt_ins",
    "relay_messages",
    "view_sandbox",
    "view_sandbox_default",
    "view_features",
    "policy_keys",
    "policy_max_lifetime",
    "page_paths",
    "view_policy",
    "csp_reports",
    "opaque_view_storage",
];

/// One origin or pattern of an `origin` list; its error names the value, as for one origin.
struct ListedEmbedder(Embedder);

impl FromStr for ListedEmbedder {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        raw.parse()
            .map(ListedEmbedder)
            .map_err(|e| format!("\"{raw}\": {e}"))
    }
}

/// `relay_messages`: each choice, and what it means for a message when none matches.
const RELAY_MESSAGES: &[(&str, RelayMessages, &str)] = &[
    (
        "json-rpc",
        RelayMessages::JsonRpc,
        "the spec's, the default",
    ),
    (
        "any",
        RelayMessages::Any,
        "a host whose views speak a wire of their own",
    ),
];

/// `opaque_view_storage`: each choice, and what an opaque view's storage then is.
const OPAQUE_VIEW_STORAGE: &[(&str, OpaqueViewStorage, &str)] = &[
    (
        "none",
        OpaqueViewStorage::None,
        "the browser's, which throws for an opaque origin, the default",
    ),
    (
        "memory",
        OpaqueViewStorage::Memory,
        "one in the view's memory, its own, gone with it",
    ),
];

/// `view_policy`: each choice, and what it means.
const VIEW_POLICIES: &[(&str, ViewPolicyOwner, &str)] = &[
    (
        "service",
        ViewPolicyOwner::Service,
        "the page's header carries the view policy, the default",
    ),
    (
        "host",
        ViewPolicyOwner::Host,
        "the host writes it into the view's HTML",
    ),
];

/// The `[[hosts]]` entries of the file being walked; `file` is its name, shared by them.
pub(super) fn host_entries(
    w: &mut Walker<'_>,
    value: &Value<'_>,
    file: &Rc<str>,
    cache_max_age: Duration,
) -> Vec<Placed> {
    let items = match value.get_ref() {
        DeValue::Array(items) if !items.is_empty() => items,
        other => {
            let found = other.type_str();
            let message = format!("must be one or more [[hosts]] tables, not {found}");
            w.error_at(value, "hosts", message);
            return Vec::new();
        }
    };
    let mut placed = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        if let Some(entry) = entry(w, item, index, cache_max_age) {
            let line = w.line(&sandbox_value(item).span());
            let file = file.clone();
            placed.push(Placed {
                entry,
                file,
                index,
                line,
            });
        }
    }
    placed
}

pub(super) fn entry(
    w: &mut Walker<'_>,
    value: &Value<'_>,
    index: usize,
    cache_max_age: Duration,
) -> Option<HostEntry> {
    let prefix = format!("hosts[{index}]");
    let table = w.table(value, &prefix)?;
    w.reject_unknown_keys(table, &prefix, KEYS);
    let at = Keys {
        table,
        prefix: &prefix,
    };
    let cache_max_age = w.optional(&at, "cache_max_age", cache_max_age, Walker::cache_max_age);
    let origin = match table.get("origin") {
        Some(origin) => origins(w, origin, &join(&prefix, "origin")),
        None => {
            w.error_at(value, &join(&prefix, "origin"), "is missing".into());
            None
        }
    };
    let sandbox = w.parsed::<SandboxName>(table, value, &prefix, "sandbox");
    let per_server_subdomains = flag(w, &at, "per_server_subdomains", false);
    let csp_reports = flag(w, &at, "csp_reports", true);
    let view_opt_ins = w.optional(&at, "view_opt_ins", OptIns::default(), opt_ins);
    let relay_messages = w.optional(
        &at,
        "relay_messages",
        RelayMessages::default(),
        |w, v, key| w.choice(v, key, RELAY_MESSAGES),
    );
    let view_sandbox = w.optional(&at, "view_sandbox", ViewSandbox::default(), view_sandbox);
    let view_sandbox_default = w.optional(&at, "view_sandbox_default", None, |w, v, key| {
        view_sandbox_default(w, v, key, view_sandbox.as_ref())
    });
    let view_features = w.optional(
        &at,
        "view_features",
        ViewFeatures::default(),
        |w, v, key| {
            let what = "browser features, like [\"fullscreen\"]";
            w.names::<ViewFeature>(v, key, what).map(ViewFeatures::new)
        },
    );
    let policy_keys = w.optional(&at, "policy_keys", None, |w, v, key| {
        policy_keys(w, v, key).map(Some)
    });
    let policy_max_lifetime = w.optional(
        &at,
        "policy_max_lifetime",
        DEFAULT_POLICY_MAX_LIFETIME,
        |w, v, key| w.duration(v, key, false, MAX_POLICY_MAX_LIFETIME),
    );
    if let (None, Some(at)) = (table.get("policy_keys"), table.get("policy_max_lifetime")) {
        let message =
            "bounds signed URLs, and this host entry signs none (no policy_keys): leave it out"
                .to_owned();
        w.error_at(at, &join(&prefix, "policy_max_lifetime"), message);
    }
    let page_paths = w.optional(&at, "page_paths", PagePaths::default(), page_paths);
    let view_policy = w.optional(
        &at,
        "view_policy",
        ViewPolicyOwner::default(),
        |w, v, key| w.choice(v, key, VIEW_POLICIES),
    );
    if view_policy == Some(ViewPolicyOwner::Host)
        && let (Some(Some(_)), Some(at)) = (&policy_keys, table.get("policy_keys"))
    {
        let message = "signs ?csp=, which a host entry with view_policy = \"host\" does not use: leave one out".to_owned();
        w.error_at(at, &join(&prefix, "policy_keys"), message);
    }
    let opaque_view_storage = w.optional(
        &at,
        "opaque_view_storage",
        OpaqueViewStorage::default(),
        |w, v, key| w.choice(v, key, OPAQUE_VIEW_STORAGE),
    );
    Some(HostEntry {
        origin: origin?,
        sandbox: sandbox?,
        per_server_subdomains,
        cache_max_age: cache_max_age?,
        view_opt_ins: view_opt_ins?,
        relay_messages: relay_messages?,
        view_sandbox: view_sandbox?,
        view_sandbox_default: view_sandbox_default?,
        view_features: view_features?,
        policy_keys: policy_keys?,
        policy_max_lifetime: policy_max_lifetime?,
        page_paths: page_paths?,
        view_policy: view_policy?,
        csp_reports,
        opaque_view_storage: opaque_view_storage?,
    })
}

/// A `true` or `false` key, `default` when absent; anything else is a problem, and the default.
fn flag(w: &mut Walker<'_>, at: &Keys<'_, '_>, name: &str, default: bool) -> bool {
    let Some(v) = at.table.get(name) else {
        return default;
    };
    match v.get_ref() {
        DeValue::Boolean(b) => *b,
        other => {
            let found = other.type_str();
            let key = join(at.prefix, name);
            w.error_at(v, &key, format!("must be true or false, not {found}"));
            default
        }
    }
}

/// A host's view opt-ins: a list of their names, each known.
pub(super) fn opt_ins(w: &mut Walker<'_>, value: &Value<'_>, key: &str) -> Option<OptIns> {
    let opt_ins = w.names::<OptIn>(value, key, "view opt-ins, like [\"worker-blob\"]")?;
    Some(OptIns::new(opt_ins))
}

/// The sandbox tokens a host's views may get: a list of their names, each known, with
/// `allow-scripts` among them.
pub(super) fn view_sandbox(
    w: &mut Walker<'_>,
    value: &Value<'_>,
    key: &str,
) -> Option<ViewSandbox> {
    let what = "sandbox tokens, like [\"allow-scripts\", \"allow-forms\"]";
    w.names_into(value, key, what, ViewSandbox::new)
}

/// The tokens a host's views get when the host asks for none: sandbox tokens as for
/// `view_sandbox`, each one `view_sandbox` allows (`ceiling`, when it is valid).
pub(super) fn view_sandbox_default(
    w: &mut Walker<'_>,
    value: &Value<'_>,
    key: &str,
    ceiling: Option<&ViewSandbox>,
) -> Option<Option<ViewSandbox>> {
    let default = view_sandbox(w, value, key)?;
    let ceiling = ceiling?;
    let outside: Vec<&str> = default
        .iter()
        .filter(|token| !ceiling.has(*token))
        .map(|token| token.name())
        .collect();
    if outside.is_empty() {
        return Some(Some(default));
    }
    let message = format!(
        "holds {}, which view_sandbox (\"{ceiling}\") does not allow: a default is within the ceiling",
        outside.join(", ")
    );
    w.error_at(value, key, message);
    None
}

/// Who may frame a host's sandbox: one origin or pattern, or a short list of them.
fn origins(w: &mut Walker<'_>, value: &Value<'_>, key: &str) -> Option<Embedders> {
    if let DeValue::String(raw) = value.get_ref() {
        let one = raw.parse::<ListedEmbedder>();
        let listed = one.and_then(|one| Embedders::new(vec![one.0]).map_err(|e| e.to_string()));
        return match listed {
            Ok(embedders) => Some(embedders),
            Err(message) => {
                w.error_at(value, key, message);
                None
            }
        };
    }
    if !matches!(value.get_ref(), DeValue::Array(_)) {
        let found = value.get_ref().type_str();
        let message = format!(
            "must be an origin, like \"https://chat.example.com\", or a list of origins, not {found}"
        );
        w.error_at(value, key, message);
        return None;
    }
    let what = "origins";
    w.names_into(value, key, what, |listed: Vec<ListedEmbedder>| {
        Embedders::new(listed.into_iter().map(|listed| listed.0).collect())
    })
}

/// The paths a host's page answers on: a short list, each a plain path.
pub(super) fn page_paths(w: &mut Walker<'_>, value: &Value<'_>, key: &str) -> Option<PagePaths> {
    let what = "paths, like [\"/\", \"/sandbox.html\"]";
    w.names_into(value, key, what, PagePaths::new)
}

/// A host's signing keys: one or two, each `env:NAME` or hex.
pub(super) fn policy_keys(w: &mut Walker<'_>, value: &Value<'_>, key: &str) -> Option<PolicyKeys> {
    let what = "keys, like [\"env:CHAT_POLICY_KEY\"]";
    w.names_into(value, key, what, PolicyKeys::new)
}

/// The `sandbox` value of a host table, for messages about it; the table if it has none.
pub(super) fn sandbox_value<'v, 'i>(table: &'v Value<'i>) -> &'v Value<'i> {
    match table.get_ref() {
        DeValue::Table(t) => t.get("sandbox").unwrap_or(table),
        _ => table,
    }
}
