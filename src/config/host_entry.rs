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

use super::walk::{Placed, Table, Value, Walker, join, sandbox_value};
use super::{
    DEFAULT_POLICY_MAX_LIFETIME, HostEntry, MAX_POLICY_MAX_LIFETIME, RelayMessages, ViewPolicyOwner,
};

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

/// The keys of one host entry's table, and the prefix its messages name them by.
struct Keys<'t, 'i> {
    table: &'t Table<'i>,
    prefix: &'t str,
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

impl<'a> Walker<'a> {
    /// The `[[hosts]]` entries of the file being walked; `file` is its name, shared by them.
    pub(super) fn host_entries(
        &mut self,
        value: &Value<'_>,
        file: &Rc<str>,
        cache_max_age: Duration,
    ) -> Vec<Placed> {
        let items = match value.get_ref() {
            DeValue::Array(items) if !items.is_empty() => items,
            other => {
                let found = other.type_str();
                let message = format!("must be one or more [[hosts]] tables, not {found}");
                self.error_at(value, "hosts", message);
                return Vec::new();
            }
        };
        let mut placed = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            if let Some(entry) = self.host(item, index, cache_max_age) {
                let line = self.line(&sandbox_value(item).span());
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

    pub(super) fn host(
        &mut self,
        value: &Value<'_>,
        index: usize,
        cache_max_age: Duration,
    ) -> Option<HostEntry> {
        let prefix = format!("hosts[{index}]");
        let table = self.table(value, &prefix)?;
        self.reject_unknown_keys(
            table,
            &prefix,
            &[
                "origin",
                "sandbox",
                "per_server_subdomains",
                "cache_max_age",
                "view_opt_ins",
                "relay_messages",
                "view_sandbox",
                "view_sandbox_default",
                "policy_keys",
                "policy_max_lifetime",
                "page_paths",
                "view_policy",
            ],
        );
        let at = Keys {
            table,
            prefix: &prefix,
        };
        let cache_max_age = self.optional(&at, "cache_max_age", cache_max_age, Self::cache_max_age);
        let origin = match table.get("origin") {
            Some(origin) => self.origins(origin, &join(&prefix, "origin")),
            None => {
                self.error_at(value, &join(&prefix, "origin"), "is missing".into());
                None
            }
        };
        let sandbox = self.parsed::<SandboxName>(table, value, &prefix, "sandbox");
        let per_server_subdomains = match table.get("per_server_subdomains") {
            None => false,
            Some(v) => match v.get_ref() {
                DeValue::Boolean(b) => *b,
                other => {
                    let found = other.type_str();
                    let key = join(&prefix, "per_server_subdomains");
                    self.error_at(v, &key, format!("must be true or false, not {found}"));
                    false
                }
            },
        };
        let view_opt_ins = self.optional(&at, "view_opt_ins", OptIns::default(), Self::opt_ins);
        let relay_messages = self.optional(
            &at,
            "relay_messages",
            RelayMessages::default(),
            |w, v, key| w.choice(v, key, RELAY_MESSAGES),
        );
        let view_sandbox = self.optional(
            &at,
            "view_sandbox",
            ViewSandbox::default(),
            Self::view_sandbox,
        );
        let view_sandbox_default = self.optional(&at, "view_sandbox_default", None, |w, v, key| {
            w.view_sandbox_default(v, key, view_sandbox.as_ref())
        });
        let policy_keys = self.optional(&at, "policy_keys", None, |w, v, key| {
            w.policy_keys(v, key).map(Some)
        });
        let policy_max_lifetime = self.optional(
            &at,
            "policy_max_lifetime",
            DEFAULT_POLICY_MAX_LIFETIME,
            |w, v, key| w.duration(v, key, false, MAX_POLICY_MAX_LIFETIME),
        );
        if let (None, Some(at)) = (table.get("policy_keys"), table.get("policy_max_lifetime")) {
            let message =
                "bounds signed URLs, and this host entry signs none (no policy_keys): leave it out"
                    .to_owned();
            self.error_at(at, &join(&prefix, "policy_max_lifetime"), message);
        }
        let page_paths = self.optional(&at, "page_paths", PagePaths::default(), Self::page_paths);
        let view_policy = self.optional(
            &at,
            "view_policy",
            ViewPolicyOwner::default(),
            |w, v, key| w.choice(v, key, VIEW_POLICIES),
        );
        if view_policy == Some(ViewPolicyOwner::Host)
            && let (Some(Some(_)), Some(at)) = (&policy_keys, table.get("policy_keys"))
        {
            let message = "signs ?csp=, which a host entry with view_policy = \"host\" does not use: leave one out".to_owned();
            self.error_at(at, &join(&prefix, "policy_keys"), message);
        }
        Some(HostEntry {
            origin: origin?,
            sandbox: sandbox?,
            per_server_subdomains,
            cache_max_age: cache_max_age?,
            view_opt_ins: view_opt_ins?,
            relay_messages: relay_messages?,
            view_sandbox: view_sandbox?,
            view_sandbox_default: view_sandbox_default?,
            policy_keys: policy_keys?,
            policy_max_lifetime: policy_max_lifetime?,
            page_paths: page_paths?,
            view_policy: view_policy?,
        })
    }

    /// An optional key of a host entry: `default` when it is absent, else what `parse` makes
    /// of its value (`None`, with the problem reported, when it cannot).
    fn optional<T>(
        &mut self,
        at: &Keys<'_, '_>,
        name: &str,
        default: T,
        parse: impl FnOnce(&mut Self, &Value<'_>, &str) -> Option<T>,
    ) -> Option<T> {
        match at.table.get(name) {
            None => Some(default),
            Some(value) => parse(self, value, &join(at.prefix, name)),
        }
    }

    /// One of a few named choices, each with what it means for the message when none matches.
    fn choice<T: Copy>(
        &mut self,
        value: &Value<'_>,
        key: &str,
        choices: &[(&str, T, &str)],
    ) -> Option<T> {
        let raw = self.string(value, key)?;
        if let Some((_, choice, _)) = choices.iter().find(|(name, _, _)| *name == raw) {
            return Some(*choice);
        }
        let known: Vec<String> = choices
            .iter()
            .map(|(name, _, meaning)| format!("\"{name}\" ({meaning})"))
            .collect();
        let message = format!("\"{raw}\" is not a choice: {}", known.join(" or "));
        self.error_at(value, key, message);
        None
    }

    /// A host's view opt-ins: a list of their names, each known.
    pub(super) fn opt_ins(&mut self, value: &Value<'_>, key: &str) -> Option<OptIns> {
        let opt_ins = self.names::<OptIn>(value, key, "view opt-ins, like [\"worker-blob\"]")?;
        Some(OptIns::new(opt_ins))
    }

    /// The sandbox tokens a host's views may get: a list of their names, each known, with
    /// `allow-scripts` among them.
    pub(super) fn view_sandbox(&mut self, value: &Value<'_>, key: &str) -> Option<ViewSandbox> {
        let what = "sandbox tokens, like [\"allow-scripts\", \"allow-forms\"]";
        self.names_into(value, key, what, ViewSandbox::new)
    }

    /// The tokens a host's views get when the host asks for none: sandbox tokens as for
    /// `view_sandbox`, each one `view_sandbox` allows (`ceiling`, when it is valid).
    pub(super) fn view_sandbox_default(
        &mut self,
        value: &Value<'_>,
        key: &str,
        ceiling: Option<&ViewSandbox>,
    ) -> Option<Option<ViewSandbox>> {
        let default = self.view_sandbox(value, key)?;
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
        self.error_at(value, key, message);
        None
    }

    /// Who may frame a host's sandbox: one origin or pattern, or a short list of them.
    fn origins(&mut self, value: &Value<'_>, key: &str) -> Option<Embedders> {
        if let DeValue::String(raw) = value.get_ref() {
            let one = raw.parse::<ListedEmbedder>();
            return match one.and_then(|one| Embedders::new(vec![one.0])) {
                Ok(embedders) => Some(embedders),
                Err(message) => {
                    self.error_at(value, key, message);
                    None
                }
            };
        }
        if !matches!(value.get_ref(), DeValue::Array(_)) {
            let found = value.get_ref().type_str();
            let message = format!(
                "must be an origin, like \"https://chat.example.com\", or a list of origins, not {found}"
            );
            self.error_at(value, key, message);
            return None;
        }
        let what = "origins";
        self.names_into(value, key, what, |listed: Vec<ListedEmbedder>| {
            Embedders::new(listed.into_iter().map(|listed| listed.0).collect())
        })
    }

    /// The paths a host's page answers on: a short list, each a plain path.
    pub(super) fn page_paths(&mut self, value: &Value<'_>, key: &str) -> Option<PagePaths> {
        let what = "paths, like [\"/\", \"/sandbox.html\"]";
        self.names_into(value, key, what, PagePaths::new)
    }

    /// A host's signing keys: one or two, each `env:NAME` or hex.
    pub(super) fn policy_keys(&mut self, value: &Value<'_>, key: &str) -> Option<PolicyKeys> {
        let what = "keys, like [\"env:CHAT_POLICY_KEY\"]";
        self.names_into(value, key, what, PolicyKeys::new)
    }

    /// A list of names, each parsed, then made into one value by a rule over them all.
    pub(super) fn names_into<T: FromStr<Err = String>, S>(
        &mut self,
        value: &Value<'_>,
        key: &str,
        what: &str,
        build: impl FnOnce(Vec<T>) -> Result<S, String>,
    ) -> Option<S> {
        let names = self.names::<T>(value, key, what)?;
        match build(names) {
            Ok(built) => Some(built),
            Err(message) => {
                self.error_at(value, key, message);
                None
            }
        }
    }

    /// A list of names, each parsed; every one that is not known is its own error.
    pub(super) fn names<T: FromStr<Err = String>>(
        &mut self,
        value: &Value<'_>,
        key: &str,
        what: &str,
    ) -> Option<Vec<T>> {
        let DeValue::Array(items) = value.get_ref() else {
            let found = value.get_ref().type_str();
            self.error_at(value, key, format!("must be a list of {what}, not {found}"));
            return None;
        };
        let mut parsed = Vec::with_capacity(items.len());
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let name = match item.get_ref() {
                DeValue::String(name) => name.parse::<T>(),
                other => Err(format!("must be a string, not {}", other.type_str())),
            };
            match name {
                Ok(name) => parsed.push(name),
                Err(message) => {
                    self.error_at(item, &format!("{key}[{i}]"), message);
                    ok = false;
                }
            }
        }
        ok.then_some(parsed)
    }
}
