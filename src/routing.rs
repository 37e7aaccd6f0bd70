//! Which host entry a name belongs to: the name itself, or, for an entry that serves
//! per-server subdomains, any name one DNS label below it. One rule, for the requests the
//! service routes (authority, TLS server name) and for the loader's overlap check.

use std::borrow::Cow;
use std::collections::HashMap;

use crate::origin::is_dns_label;

/// Names (lower case, default port left out) → what is routed to them.
#[derive(Debug)]
pub(crate) struct Routes<V> {
    exact: HashMap<String, V>,
    /// Names that serve per-server subdomains: a name one label below routes here.
    parents: HashMap<String, V>,
}

impl<V> Default for Routes<V> {
    fn default() -> Self {
        Routes {
            exact: HashMap::new(),
            parents: HashMap::new(),
        }
    }
}

impl<V: Default> Routes<V> {
    /// Lets `add` change what `name` routes to, and, when the name serves per-server
    /// subdomains, what every name one label below it routes to.
    pub(crate) fn add(&mut self, name: &str, per_server: bool, add: impl Fn(&mut V)) {
        if per_server {
            add(self.parents.entry(name.to_owned()).or_default());
        }
        add(self.exact.entry(name.to_owned()).or_default());
    }
}

impl<V> Routes<V> {
    /// What `name` routes to: the exact name first, then the name one label up.
    pub(crate) fn lookup(&self, name: &str) -> Option<&V> {
        if let Some(found) = self.exact.get(name) {
            return Some(found);
        }
        self.parents.get(parent_name(name)?)
    }
}

/// The name one DNS label up, when the first label is a DNS label (`a.b.c` → `b.c`).
pub(crate) fn parent_name(name: &str) -> Option<&str> {
    name.split_once('.')
        .filter(|(label, _)| is_dns_label(label))
        .map(|(_, parent)| parent)
}

/// Whether `name` is exactly one DNS label below `parent`.
pub(crate) fn is_one_label_below(name: &str, parent: &str) -> bool {
    parent_name(name) == Some(parent)
}

/// A request's authority as routes are keyed: lower case, the default port left out.
pub(crate) fn route_key(authority: &str, default_port: u16) -> Cow<'_, str> {
    match lower_case(authority) {
        Cow::Borrowed(name) => Cow::Borrowed(strip_port(name, default_port)),
        Cow::Owned(name) => Cow::Owned(strip_port(&name, default_port).to_owned()),
    }
}

/// Lower case, allocating only when there is an upper-case letter (browsers send lower case).
pub(crate) fn lower_case(name: &str) -> Cow<'_, str> {
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(name.to_ascii_lowercase())
    } else {
        Cow::Borrowed(name)
    }
}

/// The authority without its port when the port is the default one, written in digits only
/// (`u16`'s parser would also take `+80`, which no authority is).
fn strip_port(authority: &str, default_port: u16) -> &str {
    match authority.rsplit_once(':') {
        Some((host, port))
            if port.bytes().all(|b| b.is_ascii_digit()) && port.parse() == Ok(default_port) =>
        {
            host
        }
        _ => authority,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_routes_exactly_or_one_label_below_a_per_server_name() {
        let mut routes = Routes::<usize>::default();
        routes.add("chat.sandbox.test", false, |v| *v = 1);
        routes.add("studio.sandbox.test", true, |v| *v = 2);
        assert_eq!(routes.lookup("chat.sandbox.test"), Some(&1));
        assert_eq!(routes.lookup("a.chat.sandbox.test"), None);
        assert_eq!(routes.lookup("studio.sandbox.test"), Some(&2));
        assert_eq!(routes.lookup("weather.studio.sandbox.test"), Some(&2));
        assert_eq!(routes.lookup("a.b.studio.sandbox.test"), None);
        assert_eq!(routes.lookup("-a.studio.sandbox.test"), None);
    }

    #[test]
    fn keys_are_lower_case_without_the_default_port() {
        assert_eq!(route_key("Chat.Sandbox.Test:443", 443), "chat.sandbox.test");
        assert_eq!(
            route_key("chat.sandbox.test:8443", 443),
            "chat.sandbox.test:8443"
        );
        assert_eq!(
            route_key("chat.sandbox.test:+443", 443),
            "chat.sandbox.test:+443"
        );
        assert!(is_one_label_below("a.b.c", "b.c"));
        assert!(!is_one_label_below("a.b.c", "c"));
    }
}
