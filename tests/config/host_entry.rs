//! One `[[hosts]]` entry, key by key: its origins, its sandbox name, caching and what its views get.

use super::*;

#[test]
fn origin_rules_name_the_key_and_line() {
    assert_eq!(
        errors(&host("https://chat.example.com/app", "s.example.net")),
        [
            r#"c.toml:3: hosts[0].origin "https://chat.example.com/app": an origin has no path — did you mean "https://chat.example.com"?"#
        ]
    );
    assert_eq!(
        errors(&host("https://chat.example.com/", "s.example.net")),
        [
            r#"c.toml:3: hosts[0].origin "https://chat.example.com/": an origin has no path — did you mean "https://chat.example.com"?"#
        ]
    );
    let cases = [
        (
            "http://chat.example.com",
            "plain http is only for loopback hosts",
        ),
        (
            "https://chat.example.com?x=1",
            "an origin has no query or fragment",
        ),
        (
            "https://chat.example.com#x",
            "an origin has no query or fragment",
        ),
        (
            "https://me@chat.example.com",
            "an origin has no user name or password",
        ),
        (
            "chat.example.com",
            "an origin starts with http:// or https://",
        ),
        ("https://chat.example.com:0", "the port is not a number"),
    ];
    for (origin, message) in cases {
        let errs = errors(&host(origin, "s.example.net"));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].starts_with("c.toml:3: hosts[0].origin"), "{errs:?}");
        assert!(errs[0].contains(message), "{errs:?}");
    }
    assert!(warnings(&host("http://localhost:3000", "s.example.net")).is_empty());
    assert!(warnings(&host("http://127.0.0.1:3000", "s.example.net")).is_empty());
}

#[test]
fn several_origins_are_a_short_list_each_checked_as_one() {
    let with_origins = |origins: &str, sandbox: &str| {
        format!(
            "listen = \"127.0.0.1:0\"\n[[hosts]]\norigin = {origins}\nsandbox = \"{sandbox}\"\n"
        )
    };
    let text = with_origins(
        r#"["http://localhost:6274", "HTTP://127.0.0.1:6274"]"#,
        "localhost:8443",
    );
    let loaded = Config::parse("c.toml", &text, Path::new("/etc/p")).unwrap();
    assert_eq!(
        loaded.config.hosts[0].origin.to_string(),
        "http://localhost:6274 http://127.0.0.1:6274"
    );
    let cases = [
        (
            "[]",
            "c.toml:3: hosts[0].origin must name at least one origin",
        ),
        (
            r#"["http://localhost:6274", "https://chat.example.com/"]"#,
            r#"c.toml:3: hosts[0].origin[1] "https://chat.example.com/": an origin has no path — did you mean "https://chat.example.com"?"#,
        ),
        (
            r#"["http://localhost:6274", "http://LOCALHOST:6274"]"#,
            r#"c.toml:3: hosts[0].origin lists "http://localhost:6274" twice"#,
        ),
        (
            "[6274]",
            "c.toml:3: hosts[0].origin[0] must be a string, not integer",
        ),
        (
            "6274",
            r#"c.toml:3: hosts[0].origin must be an origin, like "https://chat.example.com", or a list of origins, not integer"#,
        ),
    ];
    for (origins, message) in cases {
        assert_eq!(
            errors(&with_origins(origins, "localhost:8443")),
            [message],
            "{origins}"
        );
    }
    // Every listed origin is held to the sandbox's rules: here the second is the sandbox's own.
    let errs = errors(&with_origins(
        r#"["http://localhost:6274", "http://127.0.0.1:8443"]"#,
        "127.0.0.1:8443",
    ));
    assert!(
        errs[0].contains("serves the same origin as the host http://127.0.0.1:8443"),
        "{errs:?}"
    );
}

#[test]
fn a_host_origin_pattern_is_https_with_one_leftmost_wildcard_and_never_covers_its_sandbox() {
    let ok = host(
        "https://*.preview.example.com:8443",
        "preview.example-sandbox.net",
    );
    let config = parse(&ok);
    assert_eq!(
        config.hosts[0].origin.to_string(),
        "https://*.preview.example.com:8443"
    );
    for (origin, message) in [
        (
            "http://*.preview.localhost",
            "a pattern is https with one wildcard label, leftmost",
        ),
        (
            "https://a.*.example.com",
            "a pattern is https with one wildcard label, leftmost",
        ),
        (
            "https://*.*.example.com",
            "a pattern is https with one wildcard label, leftmost",
        ),
        (
            "https://*.com",
            "a pattern needs at least two labels after \"*.\" (\"com\" would span a whole domain)",
        ),
    ] {
        let errors = errors(&host(origin, "s.example-sandbox.net"));
        assert_eq!(errors.len(), 1, "{origin}: {errors:?}");
        assert!(errors[0].contains(message), "{origin}: {errors:?}");
    }
    // A sandbox one of the pattern's origins could be, directly or through per-server labels.
    let under = errors(&host("https://*.example.com", "sandbox.example.com"));
    assert!(
        under[0].contains("serves an origin of the host pattern https://*.example.com"),
        "{under:?}"
    );
    let labels = errors(&format!(
        "{}per_server_subdomains = true\n",
        host("https://*.example-sandbox.net", "example-sandbox.net")
    ));
    assert!(
        labels[0].contains("serves an origin of the host pattern"),
        "{labels:?}"
    );
    // Sharing the pattern's site is a warning, as for one origin.
    let same_site = warnings(&host(
        "https://*.preview.example.com",
        "sandbox.example.com",
    ));
    assert!(
        same_site[0]
            .contains("is on the same site as the host pattern https://*.preview.example.com"),
        "{same_site:?}"
    );
}

#[test]
fn sandbox_rules() {
    let cases = [
        (
            "Sandbox.Example.Net",
            "is lower case — did you mean \"sandbox.example.net\"?",
        ),
        (
            "https://sandbox.example.net",
            "without scheme, path or wildcard — did you mean \"sandbox.example.net\"?",
        ),
        ("sandbox.example.net/x", "without scheme"),
        ("*.sandbox.example.net", "without scheme"),
        ("sand_box.example.net", "not a DNS name"),
        ("sandbox.example.net:99999", "port"),
    ];
    for (sandbox, message) in cases {
        let errs = errors(&host("https://chat.example.com", sandbox));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with("c.toml:4: hosts[0].sandbox"),
            "{errs:?}"
        );
        assert!(errs[0].contains(message), "{errs:?} lacks {message}");
    }
}

#[test]
fn numeric_host_forms_browsers_rewrite_are_refused() {
    for origin in [
        "https://127.1",
        "https://2130706433",
        "http://127.000.0.1:8080",
    ] {
        let errs = errors(&host(origin, "s.example.net"));
        assert!(errs[0].contains("hosts[0].origin"), "{origin}: {errs:?}");
    }
    assert!(errors(&host("https://a.example.com", "127.1:8081"))[0].contains("hosts[0].sandbox"));
    assert!(warnings(&host("http://127.0.0.1:8080", "127.0.0.1:8081")).is_empty());
}

#[test]
fn cache_max_age_is_off_by_default_set_for_the_file_and_overridden_per_host() {
    let off = parse(&host("https://chat.example.com", "chat.sandbox.test"));
    assert_eq!(off.hosts[0].cache_max_age, Duration::ZERO);

    let text = format!(
        "cache_max_age = \"10m\"\n{}{}{}",
        host("https://chat.example.com", "chat.sandbox.test"),
        "[[hosts]]\norigin = \"https://b.example.com\"\nsandbox = \"b.sandbox.test\"\ncache_max_age = \"0s\"\n",
        "[[hosts]]\norigin = \"https://c.example.com\"\nsandbox = \"c.sandbox.test\"\ncache_max_age = \"1h\"\n",
    );
    let config = parse(&text);
    let ages: Vec<u64> = config
        .hosts
        .iter()
        .map(|h| h.cache_max_age.as_secs())
        .collect();
    assert_eq!(ages, [600, 0, 3600]);
}

#[test]
fn cache_max_age_takes_whole_seconds_up_to_a_day() {
    for (value, message) in [
        ("1500ms", "must be whole seconds"),
        ("2d", "longer than the most this key takes, 86400s"),
        ("soon", "is not a duration"),
    ] {
        let text = format!(
            "cache_max_age = \"{value}\"\n{}",
            host("https://chat.example.com", "chat.sandbox.test")
        );
        let errors = errors(&text);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].starts_with("c.toml:1: cache_max_age ") && errors[0].contains(message),
            "{value}: {errors:?}"
        );
        let per_host = format!(
            "{}cache_max_age = \"{value}\"\n",
            host("https://chat.example.com", "chat.sandbox.test")
        );
        let errors = self::errors(&per_host);
        assert!(
            errors[0].starts_with("c.toml:5: hosts[0].cache_max_age ")
                && errors[0].contains(message),
            "{value}: {errors:?}"
        );
    }
}

#[test]
fn page_paths_are_plain_paths_each_once() {
    let base = host("https://chat.example.com", "chat.sandbox.test");
    let cases = [
        ("[]", "hosts[0].page_paths must hold a path"),
        ("\"/\"", "hosts[0].page_paths must be a list of paths"),
        ("[\"/a\", \"/a\"]", "hosts[0].page_paths names \"/a\" twice"),
        (
            "[\"sandbox\"]",
            "hosts[0].page_paths[0] \"sandbox\" does not start with \"/\"",
        ),
        ("[\"/a?b\"]", "hosts[0].page_paths[0] \"/a?b\" holds '?'"),
        (
            "[\"/a/../b\"]",
            "hosts[0].page_paths[0] \"/a/../b\" has an empty, \".\" or \"..\" segment",
        ),
        (
            "[\"/ok\", 7]",
            "hosts[0].page_paths[1] must be a string, not integer",
        ),
    ];
    for (value, expected) in cases {
        let found = errors(&format!("{base}page_paths = {value}\n"));
        assert_eq!(found.len(), 1, "{value}: {found:?}");
        assert!(found[0].contains(expected), "{value}: {found:?}");
    }
}
