//! Invariants shared by the property tests (tests/properties.rs) and the fuzz targets (fuzz/):
//! each takes an input, runs the code under test, and panics with the reason when a rule breaks.
// Each fuzz target includes this file for the one check it needs.
#![allow(dead_code)]

use mcp_sandbox_proxy::{
    Config, Declared, HostSource, OptIns, Service, ViewPolicy, policy_for_query,
};

/// The words the template itself writes; everything else in a policy must be a host-source.
const TEMPLATE_WORDS: &[&str] = &["'none'", "'self'", "'unsafe-inline'", "data:"];
const DIRECTIVES: &[&str] = &[
    "default-src",
    "script-src",
    "style-src",
    "connect-src",
    "img-src",
    "font-src",
    "media-src",
    "frame-src",
    "object-src",
    "base-uri",
];

/// A built policy holds nothing the rules drop: every source is a valid host-source written as
/// its own canonical form, every directive is the template's, and the text is header-safe.
pub fn assert_policy_is_clean(policy: &ViewPolicy, input: &str) {
    let header = policy.header();
    assert!(
        header.bytes().all(|b| b == b' ' || b.is_ascii_graphic()),
        "not visible ASCII: {header:?} from {input:?}"
    );
    for directive in header.split("; ") {
        let mut words = directive.split(' ');
        let name = words.next().unwrap_or_default();
        assert!(
            DIRECTIVES.contains(&name),
            "directive {name:?} from {input:?}"
        );
        for word in words {
            if TEMPLATE_WORDS.contains(&word) {
                continue;
            }
            let source: HostSource = word
                .parse()
                .unwrap_or_else(|_| panic!("{word:?} is not a host-source (from {input:?})"));
            assert_eq!(source.as_str(), word, "not canonical (from {input:?})");
        }
    }
}

/// `?csp=` in, policy out: no panic, clean, and the same input gives the same bytes.
pub fn check_query(query: &str) {
    let first = policy_for_query(query, 16 * 1024, &OptIns::default());
    let second = policy_for_query(query, 16 * 1024, &OptIns::default());
    match (&first, &second) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.header(), b.header(), "same query, other bytes: {query:?}");
            assert_eq!(a.dropped, b.dropped);
            assert_policy_is_clean(a, query);
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => panic!("same query, other outcome: {query:?}"),
    }
}

/// A JSON declaration in, policy out: no panic, clean, deterministic.
pub fn check_json(json: &str) {
    if let Ok(declared) = Declared::from_json(json) {
        let a = ViewPolicy::from_declared(&declared, &OptIns::default());
        let b = ViewPolicy::from_declared(&declared, &OptIns::default());
        assert_eq!(a.header(), b.header());
        assert_policy_is_clean(&a, json);
    }
}

/// Config text in: no panic; a refusal names at least one problem, each with the file's name.
pub fn check_config(text: &str) {
    match Config::parse("fuzz.toml", text, std::path::Path::new("/")) {
        Ok(loaded) => assert!(!loaded.config.hosts.is_empty(), "a config serves a host"),
        Err(e) => {
            assert!(!e.problems.is_empty(), "a refusal says why");
            for problem in &e.problems {
                assert!(problem.to_string().starts_with("fuzz.toml"), "{problem}");
            }
        }
    }
}

/// One host entry of a generated config: `sandbox` name and whether it serves labels.
pub struct Site {
    pub name: String,
    pub per_server: bool,
}

/// Routing never matches a name outside the config: an authority that gets a page is a
/// configured sandbox name, or one DNS label below one that serves labels.
pub fn check_routing(sites: &[Site], authorities: &[Vec<u8>]) {
    let mut text = String::from("listen = \"127.0.0.1:0\"\n");
    for (i, site) in sites.iter().enumerate() {
        text.push_str(&format!(
            "[[hosts]]\norigin = \"https://host{i}.example.com\"\nsandbox = \"{}\"\nper_server_subdomains = {}\n",
            site.name, site.per_server
        ));
    }
    // Generated entries may be invalid or collide: only a config that loads is routed.
    let Ok(loaded) = Config::parse("fuzz.toml", &text, std::path::Path::new("/")) else {
        return;
    };
    let service = Service::new(&loaded.config);
    for authority in authorities {
        let Ok(request) = http::Request::get("/")
            .header(http::header::HOST, authority.as_slice())
            .body(())
        else {
            continue;
        };
        if service.handle(&request).status() != http::StatusCode::OK {
            continue;
        }
        let asked = String::from_utf8_lossy(authority).to_ascii_lowercase();
        let asked = without_default_port(&asked);
        let configured = sites.iter().any(|site| {
            let name = canonical_port(&site.name);
            let name = without_default_port(&name);
            asked == name
                || site.per_server
                    && asked.split_once('.').is_some_and(|(label, parent)| {
                        parent == name
                            && !label.is_empty()
                            && label.len() <= 63
                            && label
                                .bytes()
                                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                            && !label.starts_with('-')
                            && !label.ends_with('-')
                    })
        });
        assert!(
            configured,
            "{asked:?} got a page but names no configured sandbox"
        );
    }
}

/// A configured name as the service reads it: its port is a number, so `:060` is `:60`.
fn canonical_port(name: &str) -> String {
    match name.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => {
            match port.parse::<u16>() {
                Ok(port) => format!("{host}:{port}"),
                Err(_) => name.to_owned(),
            }
        }
        _ => name.to_owned(),
    }
}

/// The default port (80: these configs have no TLS) names the same origin, however written.
fn without_default_port(authority: &str) -> &str {
    match authority.rsplit_once(':') {
        Some((host, port))
            if port.bytes().all(|b| b.is_ascii_digit()) && port.parse::<u16>() == Ok(80) =>
        {
            host
        }
        _ => authority,
    }
}
