//! One `[[hosts]]` entry and its keys.

use std::rc::Rc;
use std::str::FromStr;
use std::time::Duration;

use toml::de::DeValue;

use crate::csp::{OptIn, OptIns};
use crate::origin::{Embedder, SandboxName};
use crate::page_paths::PagePaths;
use crate::sandbox::ViewSandbox;
use crate::signing::PolicyKeys;

use super::walk::{Placed, Value, Walker, join, sandbox_value};
use super::{HostEntry, RelayMessages, ViewPolicyOwner};

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
                "page_paths",
                "view_policy",
            ],
        );
        let cache_max_age = match table.get("cache_max_age") {
            Some(v) => self.cache_max_age(v, &join(&prefix, "cache_max_age")),
            None => Some(cache_max_age),
        };
        let origin = self.parsed::<Embedder>(table, value, &prefix, "origin");
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
        let view_opt_ins = match table.get("view_opt_ins") {
            None => Some(OptIns::default()),
            Some(v) => self.opt_ins(v, &join(&prefix, "view_opt_ins")),
        };
        let relay_messages = match table.get("relay_messages") {
            None => Some(RelayMessages::default()),
            Some(v) => self.relay_messages(v, &join(&prefix, "relay_messages")),
        };
        let view_sandbox = match table.get("view_sandbox") {
            None => Some(ViewSandbox::default()),
            Some(v) => self.view_sandbox(v, &join(&prefix, "view_sandbox")),
        };
        let view_sandbox_default = match table.get("view_sandbox_default") {
            None => Some(None),
            Some(v) => {
                let key = join(&prefix, "view_sandbox_default");
                self.view_sandbox_default(v, &key, view_sandbox.as_ref())
            }
        };
        let policy_keys = match table.get("policy_keys") {
            None => Some(None),
            Some(v) => self.policy_keys(v, &join(&prefix, "policy_keys")).map(Some),
        };
        let page_paths = match table.get("page_paths") {
            None => Some(PagePaths::default()),
            Some(v) => self.page_paths(v, &join(&prefix, "page_paths")),
        };
        let view_policy = match table.get("view_policy") {
            None => Some(ViewPolicyOwner::default()),
            Some(v) => self.view_policy(v, &join(&prefix, "view_policy")),
        };
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
            page_paths: page_paths?,
            view_policy: view_policy?,
        })
    }

    pub(super) fn view_policy(&mut self, value: &Value<'_>, key: &str) -> Option<ViewPolicyOwner> {
        match self.string(value, key)? {
            "service" => Some(ViewPolicyOwner::Service),
            "host" => Some(ViewPolicyOwner::Host),
            other => {
                let message = format!(
                    "\"{other}\" is not a choice: \"service\" (the page's header carries the view policy, the default) or \"host\" (the host writes it into the view's HTML)"
                );
                self.error_at(value, key, message);
                None
            }
        }
    }

    pub(super) fn relay_messages(&mut self, value: &Value<'_>, key: &str) -> Option<RelayMessages> {
        match self.string(value, key)? {
            "json-rpc" => Some(RelayMessages::JsonRpc),
            "any" => Some(RelayMessages::Any),
            other => {
                let message = format!(
                    "\"{other}\" is not a choice: \"json-rpc\" (the spec's, the default) or \"any\" (a host whose views speak a wire of their own)"
                );
                self.error_at(value, key, message);
                None
            }
        }
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
