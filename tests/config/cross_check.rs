//! Rules between entries: unique and non-overlapping sandbox names, never the host's own origin, a warning for its site.

use super::*;

#[test]
fn sandbox_names_are_unique() {
    let text = format!(
        "{}[[hosts]]\norigin = \"https://b.example.com\"\nsandbox = \"s.example.net\"\n",
        host("https://a.example.com", "s.example.net")
    );
    assert_eq!(
        errors(&text),
        [r#"c.toml:7: hosts[1].sandbox "s.example.net" is already the sandbox of hosts[0]"#]
    );
}

#[test]
fn per_server_names_may_not_overlap_another_sandbox() {
    let text = format!(
        "{}per_server_subdomains = true\n[[hosts]]\norigin = \"https://b.example.com\"\nsandbox = \"x.s.example.net\"\n",
        host("https://a.example.com", "s.example.net")
    );
    let errs = errors(&text);
    assert!(
        errs[0].contains("overlaps the sandbox \"s.example.net\" of hosts[0]"),
        "{errs:?}"
    );
}

#[test]
fn same_origin_sandbox_is_an_error() {
    let errs = errors(&host("http://localhost:8080", "localhost:8080"));
    assert!(
        errs[0].contains("serves the same origin as the host http://localhost:8080"),
        "{errs:?}"
    );
    let tls = format!(
        "{}[tls]\ncert = \"c\"\nkey = \"k\"\n",
        host("https://chat.example.com", "chat.example.com")
    );
    assert!(errors(&tls)[0].contains("same origin"));
    // A per-server label can land on the host's own name.
    let text = format!(
        "{}per_server_subdomains = true\n[tls]\ncert = \"c\"\nkey = \"k\"\n",
        host("https://chat.example.com", "example.com")
    );
    assert!(
        errors(&text)[0].contains("same origin"),
        "{:?}",
        errors(&text)
    );
    // Different port: a different origin, allowed.
    assert!(warnings(&host("http://localhost:8080", "localhost:8081")).is_empty());
}

#[test]
fn same_origin_is_an_error_even_without_tls() {
    // Behind a TLS-terminating load balancer the browser sees https although [tls] is absent.
    for sandbox in ["chat.example.com", "chat.example.com:443"] {
        let errs = errors(&host("https://chat.example.com", sandbox));
        assert!(
            errs[0].contains("serves the same origin as the host https://chat.example.com"),
            "{sandbox}: {errs:?}"
        );
    }
    let text = format!(
        "{}per_server_subdomains = true\n",
        host("https://abc.sandbox.example.org", "sandbox.example.org")
    );
    assert!(
        errors(&text)[0].contains("same origin"),
        "{:?}",
        errors(&text)
    );
}

#[test]
fn same_site_sandbox_is_a_warning_that_explains() {
    let w = warnings(&host("https://chat.example.com", "sandbox.example.com"));
    assert_eq!(w.len(), 1);
    assert!(w[0].starts_with("c.toml:4: hosts[0].sandbox"), "{w:?}");
    assert!(
        w[0].contains("same site") && w[0].contains("registrable domain"),
        "{w:?}"
    );
    assert!(
        warnings(&host(
            "https://chat.example.com",
            "chat.example-sandbox.net"
        ))
        .is_empty()
    );
}

#[test]
fn a_sandbox_on_the_site_of_many_hosts_gets_one_warning_that_counts_them() {
    let text = format!(
        "{}{}{}",
        host("https://a.example.com", "sandbox.example.com"),
        "[[hosts]]\norigin = \"https://b.example.com\"\nsandbox = \"s.example-sandbox.net\"\n",
        "[[hosts]]\norigin = \"https://c.example.com\"\nsandbox = \"t.example-sandbox.net\"\n",
    );
    let warnings = warnings(&text);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains(
            "\"sandbox.example.com\" is on the same site as the host https://a.example.com (and 2 more host(s) on it) (example.com)"
        ),
        "{warnings:?}"
    );
}
