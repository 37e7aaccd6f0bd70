//! The config loader: each rule of config.md, with the message an operator sees.

use std::path::Path;
use std::time::Duration;

use mcp_sandbox_proxy::{Config, EMBEDDED_DEFAULT};

fn errors(text: &str) -> Vec<String> {
    match Config::parse("c.toml", text, Path::new("/etc/p")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.problems.iter().map(|p| p.to_string()).collect(),
    }
}

fn warnings(text: &str) -> Vec<String> {
    match Config::parse("c.toml", text, Path::new("/etc/p")) {
        Ok(loaded) => loaded.warnings.iter().map(|p| p.to_string()).collect(),
        Err(e) => panic!("refused:\n{e}"),
    }
}

const LISTEN: &str = "listen = \"127.0.0.1:8443\"\n";

fn host(origin: &str, sandbox: &str) -> String {
    format!("{LISTEN}[[hosts]]\norigin = \"{origin}\"\nsandbox = \"{sandbox}\"\n")
}

#[test]
fn the_documented_example_and_the_embedded_default_load() {
    let example = std::fs::read_to_string("config/example.toml").unwrap();
    let loaded = Config::parse(
        "example.toml",
        &example,
        Path::new("/etc/mcp-sandbox-proxy"),
    )
    .unwrap();
    assert_eq!(loaded.config.hosts.len(), 2);
    assert!(loaded.config.hosts[0].per_server_subdomains);
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let tls = loaded.config.tls.unwrap();
    assert_eq!(
        tls.certificates[0].cert,
        Path::new("/etc/mcp-sandbox-proxy/tls/tls.crt")
    );

    let default = Config::embedded_default().unwrap();
    assert_eq!(default.config.listen.to_string(), "127.0.0.1:8081");
    assert_eq!(
        default.config.hosts[0].origin.to_string(),
        "http://localhost:8080"
    );
    assert_eq!(
        default.config.demo_listen.unwrap().to_string(),
        "127.0.0.1:8080"
    );
    assert!(
        default.warnings.is_empty(),
        "loopback development default: {:?}",
        default.warnings
    );
    assert!(EMBEDDED_DEFAULT.contains("localhost:8081"));
    let file = Config::parse("d.toml", EMBEDDED_DEFAULT, Path::new(".")).unwrap();
    assert_eq!(
        file.config.demo_listen, None,
        "the demo belongs to the embedded default only"
    );
}

#[test]
fn defaults_for_limits_and_relative_paths() {
    let text = format!(
        "{}[tls]\ncert = \"tls/c.pem\"\nkey = \"tls/k.pem\"\n",
        host("https://a.example.com", "s.example.net")
    );
    let config = Config::parse("c.toml", &text, Path::new("/etc/p"))
        .unwrap()
        .config;
    assert_eq!(config.limits.handshake_timeout, Duration::from_secs(10));
    assert_eq!(config.limits.max_connections, 1024);
    assert_eq!(config.limits.max_unsent_bytes, 256 * 1024);
    assert_eq!(config.limits.page_cache_bytes, 16 * 1024 * 1024);
    assert_eq!(config.limits.h2_cookie_bytes, 32 * 1024);
    let tls = config.tls.unwrap();
    assert_eq!(tls.certificates[0].key, Path::new("/etc/p/tls/k.pem"));
    assert_eq!(tls.hsts_max_age, Duration::from_secs(31_536_000));
}

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
fn unknown_keys_are_errors_with_the_near_miss() {
    let text = format!(
        "{}per_server_subdomain = true\n",
        host("https://a.example.com", "s.example.net")
    );
    assert_eq!(
        errors(&text),
        [
            r#"c.toml:5: hosts[0].per_server_subdomain is not a known key — did you mean "per_server_subdomains"?"#
        ]
    );
    let text = format!(
        "lisen = \"0.0.0.0:1\"\n{}",
        host("https://a.example.com", "s.example.net")
    );
    assert!(
        errors(&text)
            .contains(&r#"c.toml:1: lisen is not a known key — did you mean "listen"?"#.to_owned())
    );
    let text = format!(
        "{}[limits]\nidle_timeot = \"5s\"\n",
        host("https://a.example.com", "s.example.net")
    );
    assert_eq!(
        errors(&text),
        [r#"c.toml:6: limits.idle_timeot is not a known key — did you mean "idle_timeout"?"#]
    );
    let text = format!(
        "{}[tls]\ncert = \"c\"\nkey = \"k\"\ncertificate = \"x\"\n",
        host("https://a.example.com", "s.example.net")
    );
    assert!(errors(&text)[0].contains("tls.certificate is not a known key"));
    let text = format!(
        "{}colour = \"blue\"\n",
        host("https://a.example.com", "s.example.net")
    );
    assert!(errors(&text)[0].contains(
        "(known keys: origin, sandbox, per_server_subdomains, cache_max_age, view_opt_ins, relay_messages, view_sandbox, view_sandbox_default, policy_keys, policy_max_lifetime, page_paths, view_policy)"
    ));
}

#[test]
fn limits_are_checked() {
    let base = host("https://a.example.com", "s.example.net");
    let cases = [
        (
            "idle_timeout = \"soon\"",
            "limits.idle_timeout \"soon\" is not a duration",
        ),
        (
            "idle_timeout = 10",
            "limits.idle_timeout must be a string, not integer",
        ),
        ("shutdown_grace = \"0s\"", "is not a duration"),
        (
            "max_connections = 0",
            "limits.max_connections must be a whole number from 1",
        ),
        ("max_connections = -5", "must be a whole number"),
        (
            "max_query_bytes = \"big\"",
            "limits.max_query_bytes must be a whole number",
        ),
        // Beyond it, a request line could hold a target longer than hyper takes (65 534).
        (
            "max_query_bytes = 61439",
            "limits.max_query_bytes must be a whole number from 1 to 61438",
        ),
    ];
    for (line, message) in cases {
        let errs = errors(&format!("{base}[limits]\n{line}\n"));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].starts_with("c.toml:6: "), "{errs:?}");
        assert!(errs[0].contains(message), "{errs:?} lacks {message}");
    }
    let ok = format!(
        "{base}[limits]\nidle_timeout = \"90s\"\nmax_query_bytes = 4096\nheader_read_timeout = \"500ms\"\n"
    );
    let limits = Config::parse("c.toml", &ok, Path::new("."))
        .unwrap()
        .config
        .limits;
    assert_eq!(limits.idle_timeout, Duration::from_secs(90));
    assert_eq!(limits.max_query_bytes, 4096);
    assert_eq!(limits.header_read_timeout, Duration::from_millis(500));
}

#[test]
fn structural_errors() {
    assert_eq!(
        errors(""),
        [
            "c.toml:1: listen is missing (for example listen = \"0.0.0.0:8443\")",
            "c.toml:1: hosts is missing: add at least one [[hosts]] entry"
        ]
    );
    assert_eq!(
        errors(&format!("{LISTEN}hosts = []\n")),
        ["c.toml:2: hosts must be one or more [[hosts]] tables, not array"]
    );
    assert_eq!(
        errors(
            "listen = \"localhost:80\"\n[[hosts]]\norigin = \"https://a.example.com\"\nsandbox = \"s.example.net\"\n"
        ),
        [
            "c.toml:1: listen \"localhost:80\" is not ip:port (for example \"0.0.0.0:8443\" or \"[::]:8443\")"
        ]
    );
    let errs = errors(&format!(
        "{LISTEN}[[hosts]]\norigin = \"https://a.example.com\"\n"
    ));
    assert_eq!(errs, ["c.toml:2: hosts[0].sandbox is missing"]);
    let errs = errors(&format!(
        "{}[tls]\ncert = \"c.pem\"\n",
        host("https://a.example.com", "s.example.net")
    ));
    assert_eq!(errs, ["c.toml:5: tls.key is missing (a PEM file path)"]);
    let errs = errors("listen = \n");
    assert!(errs[0].starts_with("c.toml:1: not valid TOML"), "{errs:?}");
    let errs = errors(&format!(
        "{}per_server_subdomains = \"yes\"\n",
        host("https://a.example.com", "s.example.net")
    ));
    assert_eq!(
        errs,
        ["c.toml:5: hosts[0].per_server_subdomains must be true or false, not string"]
    );
}

#[test]
fn every_problem_is_reported_at_once_in_line_order() {
    let text = "listen = \"nope\"\n[[hosts]]\norigin = \"http://a.example.com\"\nsandbox = \"S.net\"\nextra = 1\n";
    let errs = errors(text);
    assert_eq!(errs.len(), 4, "{errs:?}");
    let lines: Vec<&str> = errs.iter().map(|e| e.split(':').nth(1).unwrap()).collect();
    assert_eq!(lines, ["1", "3", "4", "5"]);
}

#[test]
fn unreadable_file_is_named() {
    let err = Config::load(Path::new("/nonexistent/c.toml")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("/nonexistent/c.toml: cannot read the config file"),
        "{err}"
    );
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
fn messages_name_the_entry_in_the_file_even_after_a_bad_one() {
    let text = format!(
        "{LISTEN}[[hosts]]\norigin = \"nope\"\nsandbox = \"a.example.net\"\n\
         [[hosts]]\norigin = \"https://b.example.com\"\nsandbox = \"s.example.net\"\n\
         [[hosts]]\norigin = \"https://c.example.com\"\nsandbox = \"s.example.net\"\n"
    );
    let errs = errors(&text);
    assert!(
        errs.contains(
            &r#"c.toml:10: hosts[2].sandbox "s.example.net" is already the sandbox of hosts[1]"#
                .to_owned()
        ),
        "{errs:?}"
    );
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
fn the_readme_config_is_valid() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let start = readme.find("```toml\n").expect("the README shows a config") + "```toml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let loaded = Config::parse("README.md", &readme[start..end], Path::new("/etc/p"));
    let loaded = loaded.unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn durations_are_bounded() {
    let base = host("https://a.example.com", "s.example.net");
    let errs = errors(&format!(
        "{base}[limits]\nidle_timeout = \"99999999999d\"\n"
    ));
    assert!(
        errs[0].contains(
            "limits.idle_timeout \"99999999999d\" is longer than the most this key takes, 86400s"
        ),
        "{errs:?}"
    );
    let errs = errors(&format!("watch_interval = \"2d\"\n{base}"));
    assert!(errs[0].contains("watch_interval"), "{errs:?}");
    assert!(warnings(&format!("{base}[limits]\nidle_timeout = \"1d\"\n")).is_empty());
}

#[test]
fn cache_max_age_is_off_by_default_set_for_the_file_and_overridden_per_host() {
    let parse = |text: &str| {
        Config::parse("c.toml", text, Path::new("/"))
            .unwrap()
            .config
    };
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
fn view_opt_ins_are_off_by_default_and_only_known_names_are_taken() {
    use mcp_sandbox_proxy::{OptIn, OptIns};
    let parse = |text: &str| {
        Config::parse("c.toml", text, Path::new("/"))
            .unwrap()
            .config
    };
    let off = parse(&host("https://chat.example.com", "chat.sandbox.test"));
    assert_eq!(off.hosts[0].view_opt_ins, OptIns::default());
    let on = parse(&format!(
        "{}view_opt_ins = [\"wasm-unsafe-eval\", \"worker-blob\", \"worker-blob\"]\n",
        host("https://chat.example.com", "chat.sandbox.test")
    ));
    assert_eq!(
        on.hosts[0].view_opt_ins,
        OptIns::new([OptIn::WorkerBlob, OptIn::WasmUnsafeEval])
    );
    for (value, message) in [
        (
            "[\"worker-blob\", \"unsafe-eval-please\"]",
            "c.toml:5: hosts[0].view_opt_ins[1] \"unsafe-eval-please\" is not a view opt-in (known: worker-blob, blob-media, wasm-unsafe-eval, unsafe-eval, script-data)",
        ),
        (
            "[1]",
            "c.toml:5: hosts[0].view_opt_ins[0] must be a string, not integer",
        ),
        (
            "\"worker-blob\"",
            "c.toml:5: hosts[0].view_opt_ins must be a list of view opt-ins, like [\"worker-blob\"], not string",
        ),
    ] {
        let text = format!(
            "{}view_opt_ins = {value}\n",
            host("https://chat.example.com", "chat.sandbox.test")
        );
        assert_eq!(errors(&text), [message], "{value}");
    }
}

#[test]
fn a_host_origin_pattern_is_https_with_one_leftmost_wildcard_and_never_covers_its_sandbox() {
    let ok = host(
        "https://*.preview.example.com:8443",
        "preview.example-sandbox.net",
    );
    let config = Config::parse("c.toml", &ok, Path::new("/")).unwrap().config;
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

/// A config folder with `main` as c.toml and each `(name, text)` in its `hosts.d`.
fn tenant_folder(main: &str, tenants: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.toml"), main).unwrap();
    std::fs::create_dir(dir.path().join("hosts.d")).unwrap();
    for (name, text) in tenants {
        std::fs::write(dir.path().join("hosts.d").join(name), text).unwrap();
    }
    dir
}

fn tenant(origin: &str, sandbox: &str) -> String {
    format!("[[hosts]]\norigin = \"{origin}\"\nsandbox = \"{sandbox}\"\n")
}

#[test]
fn a_hosts_dir_adds_every_toml_file_in_it_by_name() {
    let main = format!("{LISTEN}hosts_dir = \"hosts.d\"\n");
    let dir = tenant_folder(
        &main,
        &[
            ("b.toml", &tenant("https://b.example.com", "b.sandbox.test")),
            ("a.toml", &tenant("https://a.example.com", "a.sandbox.test")),
            // Not tenant files: another extension, an editor's temporary copy.
            (
                "c.toml.bak",
                &tenant("https://c.example.com", "c.sandbox.test"),
            ),
            (
                ".d.toml",
                &tenant("https://d.example.com", "d.sandbox.test"),
            ),
        ],
    );
    let loaded = Config::load(&dir.path().join("c.toml")).unwrap();
    let sandboxes: Vec<String> = loaded
        .config
        .hosts
        .iter()
        .map(|h| h.origin.to_string())
        .collect();
    assert_eq!(
        sandboxes,
        ["https://a.example.com", "https://b.example.com"]
    );
}

#[test]
fn a_bad_tenant_file_refuses_the_whole_config_naming_its_file_and_line() {
    let main = format!(
        "{LISTEN}hosts_dir = \"hosts.d\"\n{}",
        &host("https://main.example.com", "main.sandbox.test")[LISTEN.len()..]
    );
    let dir = tenant_folder(
        &main,
        &[
            ("a.toml", &tenant("https://a.example.com", "a.sandbox.test")),
            (
                "b.toml",
                "# tenant b\n[[hosts]]\norigin = \"https://b.example.com/\"\nsandbox = \"b.sandbox.test\"\n",
            ),
            ("c.toml", "listen = \"0.0.0.0:1\"\n"),
            // The same sandbox as the main file's entry.
            (
                "d.toml",
                &tenant("https://d.example.com", "main.sandbox.test"),
            ),
            ("e.toml", "[[hosts]\n"),
        ],
    );
    let folder = dir.path().join("hosts.d");
    let at = |name: &str| folder.join(name).display().to_string();
    let errs: Vec<String> = match Config::load(&dir.path().join("c.toml")) {
        Ok(_) => panic!("a bad tenant file was accepted"),
        Err(e) => e.problems.iter().map(|p| p.to_string()).collect(),
    };
    let main_file = dir.path().join("c.toml").display().to_string();
    assert_eq!(errs.len(), 4, "{errs:#?}");
    assert!(
        errs[0].starts_with(&format!(
            "{}:3: hosts[0].origin \"https://b.example.com/\": an origin has no path",
            at("b.toml")
        )),
        "{errs:#?}"
    );
    assert_eq!(
        errs[1],
        format!(
            "{}:1: listen is not allowed in a tenant file: it holds [[hosts]] entries only, and everything else belongs in the main config",
            at("c.toml")
        )
    );
    assert_eq!(
        errs[2],
        format!(
            "{}:3: hosts[0].sandbox \"main.sandbox.test\" is already the sandbox of hosts[0] in {main_file}",
            at("d.toml")
        )
    );
    assert!(
        errs[3].starts_with(&format!("{}:1: not valid TOML", at("e.toml"))),
        "{errs:#?}"
    );
}

#[test]
fn a_hosts_dir_must_exist_and_some_file_must_hold_a_host() {
    let main = format!("{LISTEN}hosts_dir = \"hosts.d\"\n");
    let missing = tempfile::tempdir().unwrap();
    std::fs::write(missing.path().join("c.toml"), &main).unwrap();
    let errs = Config::load(&missing.path().join("c.toml")).unwrap_err();
    assert_eq!(errs.problems.len(), 1, "one error explains it: {errs}");
    let message = errs.to_string();
    assert!(
        message.contains(":2: hosts_dir cannot read the folder") && message.contains("hosts.d"),
        "{message}"
    );

    let empty = tenant_folder(&main, &[("a.toml", "# nobody yet\n")]);
    let path = empty.path().join("c.toml");
    let message = Config::load(&path).unwrap_err().to_string();
    assert!(
        message.contains(":2: hosts_dir ")
            && message.contains("has no [[hosts]] entry in any *.toml file"),
        "{message}"
    );

    // With a host in the main file, an empty tenant file is only a warning.
    let with_host = format!(
        "{main}{}",
        &host("https://main.example.com", "main.sandbox.test")[LISTEN.len()..]
    );
    let dir = tenant_folder(&with_host, &[("a.toml", "# nobody yet\n")]);
    let loaded = Config::load(&dir.path().join("c.toml")).unwrap();
    let warned: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warned,
        [format!(
            "{}: has no [[hosts]] entry: it adds nothing",
            dir.path().join("hosts.d").join("a.toml").display()
        )]
    );
}

#[test]
fn relay_messages_is_json_rpc_unless_the_operator_says_any() {
    let loaded = Config::parse(
        "c.toml",
        &format!(
            "{}relay_messages = \"any\"\n",
            host("https://a.example.com", "a.sandbox.test")
        ),
        Path::new("/etc/p"),
    )
    .unwrap();
    assert_eq!(
        loaded.config.hosts[0].relay_messages,
        mcp_sandbox_proxy::RelayMessages::Any
    );
    let default = Config::parse(
        "c.toml",
        &host("https://a.example.com", "a.sandbox.test"),
        Path::new("/etc/p"),
    )
    .unwrap();
    assert_eq!(
        default.config.hosts[0].relay_messages,
        mcp_sandbox_proxy::RelayMessages::JsonRpc
    );
    assert_eq!(
        errors(&format!(
            "{}relay_messages = \"mcp-ui\"\n",
            host("https://a.example.com", "a.sandbox.test")
        )),
        [
            "c.toml:5: hosts[0].relay_messages \"mcp-ui\" is not a choice: \"json-rpc\" (the spec's, the default) or \"any\" (a host whose views speak a wire of their own)"
        ]
    );
}

#[test]
fn the_local_development_config_loads_without_warnings() {
    let loaded = Config::load(Path::new("config/local.toml")).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let host = &loaded.config.hosts[0];
    assert_eq!(host.origin.to_string(), "http://localhost:9300");
    assert!(host.per_server_subdomains);
}

#[cfg(unix)]
#[test]
fn tenant_entries_that_are_not_readable_files_are_named_never_skipped_silently() {
    let main = format!("{LISTEN}hosts_dir = \"hosts.d\"\n");
    let dir = tenant_folder(
        &main,
        &[("a.toml", &tenant("https://a.example.com", "a.sandbox.test"))],
    );
    let folder = dir.path().join("hosts.d");
    // A symlink whose target is gone: the tenant is not served, so the config is refused.
    std::os::unix::fs::symlink(dir.path().join("gone.toml"), folder.join("b.toml")).unwrap();
    // A folder named like a tenant file: a warning, nothing to read.
    std::fs::create_dir(folder.join("c.toml")).unwrap();
    // A name that would break a line of output or of a text log.
    std::fs::write(folder.join("d\nerror: forged.toml"), "not toml [").unwrap();
    let problems = Config::load(&dir.path().join("c.toml"))
        .unwrap_err()
        .problems;
    let shown: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(shown.len(), 2, "{shown:#?}");
    assert!(
        shown[0].starts_with(&format!(
            "{}: cannot read the tenant file:",
            folder.join("b.toml").display()
        )),
        "{shown:#?}"
    );
    assert!(
        shown[1].contains("d\\nerror: forged.toml:1: not valid TOML") && !shown[1].contains('\n'),
        "{shown:#?}"
    );

    std::fs::remove_file(folder.join("b.toml")).unwrap();
    std::fs::remove_file(folder.join("d\nerror: forged.toml")).unwrap();
    let loaded = Config::load(&dir.path().join("c.toml")).unwrap();
    let warned: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warned,
        [format!(
            "{}: is not a regular file: skipped",
            folder.join("c.toml").display()
        )]
    );
}

#[test]
fn a_hosts_dir_holding_the_main_file_does_not_read_it_twice() {
    let dir = tempfile::tempdir().unwrap();
    let main = format!(
        "{LISTEN}hosts_dir = \".\"\n{}",
        tenant("https://main.example.com", "main.sandbox.test")
    );
    std::fs::write(dir.path().join("c.toml"), main).unwrap();
    std::fs::write(
        dir.path().join("tenant.toml"),
        tenant("https://t.example.com", "t.sandbox.test"),
    )
    .unwrap();
    let loaded = Config::load(&dir.path().join("c.toml")).unwrap();
    assert_eq!(loaded.config.hosts.len(), 2);
}

#[test]
fn view_sandbox_takes_known_tokens_with_scripts_and_never_top_navigation() {
    use mcp_sandbox_proxy::{SandboxToken, ViewSandbox};
    let base = host("https://chat.example.com", "chat.sandbox.test");
    let parse = |text: &str| {
        Config::parse("c.toml", text, Path::new("/"))
            .unwrap()
            .config
    };
    assert_eq!(parse(&base).hosts[0].view_sandbox, ViewSandbox::default());
    let opaque = parse(&format!("{base}view_sandbox = [\"allow-scripts\"]\n"));
    assert_eq!(
        opaque.hosts[0].view_sandbox,
        ViewSandbox::new([SandboxToken::Scripts]).unwrap()
    );
    for (value, message) in [
        (
            "[\"allow-scripts\", \"allow-top-navigation\"]",
            "c.toml:5: hosts[0].view_sandbox[1] \"allow-top-navigation\" is never given: a view must not navigate the chat's own tab",
        ),
        (
            "[\"allow-forms\"]",
            "c.toml:5: hosts[0].view_sandbox must hold \"allow-scripts\": a view without scripts cannot speak to its host",
        ),
        (
            "[\"allow-scripts\", \"allow-all\"]",
            "c.toml:5: hosts[0].view_sandbox[1] \"allow-all\" is not a sandbox token a view may get: one of allow-downloads, allow-forms, allow-modals, allow-pointer-lock, allow-popups, allow-popups-to-escape-sandbox, allow-same-origin, allow-scripts",
        ),
        (
            "\"allow-scripts\"",
            "c.toml:5: hosts[0].view_sandbox must be a list of sandbox tokens, like [\"allow-scripts\", \"allow-forms\"], not string",
        ),
    ] {
        assert_eq!(
            errors(&format!("{base}view_sandbox = {value}\n")),
            [message],
            "{value}"
        );
    }
}

#[test]
fn values_keys_and_file_names_are_shown_with_control_characters_escaped() {
    // A tenant's value must not forge a line of `check`'s output or drive the terminal.
    let text = "listen = \"127.0.0.1:8443\"\n[[hosts]]\norigin = \"https://a.example\\nok: 9 hosts\\u001b[2J\"\nsandbox = \"a.sandbox.test\"\n\"k\\u001b]0;x\" = 1\n";
    let errors = errors(text);
    assert_eq!(errors.len(), 2, "{errors:?}");
    for error in &errors {
        assert!(
            !error.chars().any(char::is_control),
            "a control character is shown raw: {error:?}"
        );
    }
    assert!(errors[0].contains("\\nok: 9 hosts\\u{1b}[2J"), "{errors:?}");
}

#[test]
fn line_separators_and_bidi_overrides_are_shown_escaped() {
    // Not control characters to Rust, but a line separator starts a line in many terminals
    // and viewers, and a right-to-left override makes a value read backwards.
    let text = "listen = \"127.0.0.1:8443\"\n[[hosts]]\norigin = \"https://a.example\\u2028ok: 9 hosts\\u202elmth.x\"\nsandbox = \"a.sandbox.test\"\n\"k\\u2029\\u2066\" = 1\n";
    let errors = errors(text);
    assert_eq!(errors.len(), 2, "{errors:?}");
    let raw = ['\u{2028}', '\u{2029}', '\u{202e}', '\u{2066}'];
    for error in &errors {
        assert!(
            !error.chars().any(|c| raw.contains(&c)),
            "shown raw: {error:?}"
        );
    }
    assert!(
        errors[0].contains("\\u{2028}ok: 9 hosts\\u{202e}lmth.x"),
        "{errors:?}"
    );
    assert!(errors[1].contains("\\u{2029}\\u{2066}"), "{errors:?}");
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

#[test]
fn view_sandbox_default_is_within_the_ceiling() {
    use mcp_sandbox_proxy::{SandboxToken, ViewSandbox};
    let base = host("https://chat.example.com", "chat.sandbox.test");
    let parsed = Config::parse(
        "c.toml",
        &format!("{base}view_sandbox_default = [\"allow-scripts\", \"allow-forms\"]\n"),
        Path::new("/"),
    )
    .unwrap()
    .config;
    assert_eq!(
        parsed.hosts[0].view_sandbox_default,
        Some(ViewSandbox::new([SandboxToken::Scripts, SandboxToken::Forms]).unwrap())
    );
    let outside = errors(&format!(
        "{base}view_sandbox = [\"allow-scripts\"]\nview_sandbox_default = [\"allow-scripts\", \"allow-popups\"]\n"
    ));
    assert_eq!(
        outside,
        [
            "c.toml:6: hosts[0].view_sandbox_default holds allow-popups, which view_sandbox (\"allow-scripts\") does not allow: a default is within the ceiling"
        ]
    );
    let no_scripts = errors(&format!("{base}view_sandbox_default = [\"allow-forms\"]\n"));
    assert!(
        no_scripts[0].contains("hosts[0].view_sandbox_default"),
        "{no_scripts:?}"
    );
}

#[test]
fn view_policy_is_the_service_s_or_the_host_s_and_a_host_s_is_never_signed() {
    use mcp_sandbox_proxy::ViewPolicyOwner;
    let base = host("https://chat.example.com", "chat.sandbox.test");
    let parse = |text: &str| {
        Config::parse("c.toml", text, Path::new("/"))
            .unwrap()
            .config
    };
    assert_eq!(parse(&base).hosts[0].view_policy, ViewPolicyOwner::Service);
    assert_eq!(
        parse(&format!("{base}view_policy = \"host\"\n")).hosts[0].view_policy,
        ViewPolicyOwner::Host
    );
    let bad = errors(&format!("{base}view_policy = \"meta\"\n"));
    assert!(
        bad[0].contains("hosts[0].view_policy \"meta\" is not a choice"),
        "{bad:?}"
    );
    let signed = errors(&format!(
        "{base}view_policy = \"host\"\npolicy_keys = [\"{}\"]\n",
        "ab".repeat(32)
    ));
    assert_eq!(signed.len(), 1, "{signed:?}");
    assert!(signed[0].contains("hosts[0].policy_keys signs ?csp=, which a host entry with view_policy = \"host\" does not use"), "{signed:?}");
}

#[test]
fn acme_is_checked_key_by_key_with_the_fix() {
    let base = format!("{}[tls]\n", host("https://a.example.com", "s.example.net"));
    let with = |acme: &str| format!("{base}[acme]\n{acme}");
    let ok = "terms_of_service_agreed = true\nstate_dir = \"acme\"\n";
    assert!(Config::parse("c.toml", &with(ok), Path::new("/etc/p")).is_ok());
    let cases: [(&str, &str); 10] = [
        (
            "state_dir = \"acme\"\n",
            "acme.terms_of_service_agreed is missing: read the CA's terms, then set terms_of_service_agreed = true",
        ),
        (
            "terms_of_service_agreed = false\nstate_dir = \"acme\"\n",
            "acme.terms_of_service_agreed must be true: the CA issues only to accounts that agree to its terms (read them at the directory's meta.termsOfService)",
        ),
        (
            "terms_of_service_agreed = true\n",
            "acme.state_dir is missing: the folder issued certificates and keys are kept in (for example \"/var/lib/mcp-sandbox-proxy/acme\")",
        ),
        (
            "directory = \"http://ca.example/dir\"\n",
            "acme.directory \"http://ca.example/dir\" is not an https URL (ACME directories are served over https; Let's Encrypt's is \"https://acme-v02.api.letsencrypt.org/directory\")",
        ),
        (
            "names = [\"*.s.example.net\"]\n",
            "acme.names[0] \"*.s.example.net\": a wildcard needs a DNS-01 challenge, which is not built in (docs/operations.md: ACME with per-server subdomains)",
        ),
        (
            "names = [\"s.example.net\", \"s.example.net\"]\n",
            "acme.names lists a name twice",
        ),
        (
            "contact = [\"ops@example.com\"]\n",
            "acme.contact[0] \"ops@example.com\" is not a mailto: URL (for example \"mailto:ops@example.com\")",
        ),
        (
            "challenge = \"dns-01\"\n",
            "acme.challenge \"dns-01\" is not a challenge this service answers: \"tls-alpn-01\" (the default) or \"http-01\" (DNS-01 is not built in)",
        ),
        (
            "challenge = \"http-01\"\n",
            "acme.challenge \"http-01\" needs http01_listen, the plain listener the CA reaches on port 80 (for example \"0.0.0.0:80\")",
        ),
        (
            "http01_listen = \"0.0.0.0:80\"\n",
            "acme.http01_listen is only for challenge = \"http-01\"",
        ),
    ];
    for (keys, expected) in cases {
        let text = if keys.contains("terms_of_service_agreed") || keys.starts_with("state_dir") {
            with(keys)
        } else {
            with(&format!("{ok}{keys}"))
        };
        let errs = errors(&text);
        assert_eq!(errs.len(), 1, "{keys}: {errs:?}");
        assert!(
            errs[0].ends_with(expected),
            "{keys}:\n{}\nnot: {expected}",
            errs[0]
        );
    }
    // Without [tls] there is no listener to use the certificates on.
    let errs = errors(&format!(
        "{}[acme]\n{ok}",
        host("https://a.example.com", "s.example.net")
    ));
    assert_eq!(
        errs,
        [
            "c.toml:5: acme issues certificates for a TLS listener: add [tls] (its cert and key may then be left out)"
        ]
    );
    // A loopback sandbox gets no certificate from a CA: it has to name what it wants.
    let errs = errors(&format!(
        "{}[tls]\n[acme]\n{ok}",
        host("http://localhost:8080", "localhost:8081")
    ));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("acme.names no sandbox name can have a certificate from a CA"),
        "{errs:?}"
    );
}

/// The keys docs/configuration.md's table documents, dotted: `[[hosts]]` `origin` is
/// `hosts.origin`, and a table (`[tls]`, the `limits.` of its keys) is a key of its own.
fn documented_keys() -> std::collections::BTreeSet<String> {
    let docs = std::fs::read_to_string("docs/configuration.md").unwrap();
    let table = docs
        .split("## The file (TOML)")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").nth(1))
        .expect("the key table follows its heading");
    let mut keys = std::collections::BTreeSet::new();
    for row in table.lines().skip(2) {
        let first_cell = row.split('|').nth(1).expect("a table row");
        let names: Vec<&str> = first_cell.split('`').skip(1).step_by(2).collect();
        let (section, names) = match names.split_first() {
            Some((table, rest)) if table.starts_with('[') => {
                (table.trim_matches(['[', ']']).to_owned(), rest)
            }
            _ => (String::new(), names.as_slice()),
        };
        if !section.is_empty() {
            keys.insert(section.clone());
        }
        for name in names {
            let dotted = if section.is_empty() {
                (*name).to_owned()
            } else {
                format!("{section}.{name}")
            };
            // `limits.max_connections` documents `limits` too.
            let mut parent = dotted.as_str();
            while let Some((up, _)) = parent.rsplit_once('.') {
                keys.insert(up.to_owned());
                parent = up;
            }
            keys.insert(dotted);
        }
    }
    keys
}

#[test]
fn the_documented_key_table_lists_exactly_the_keys_the_loader_takes() {
    let known: std::collections::BTreeSet<String> = Config::keys().into_iter().collect();
    let documented = documented_keys();
    let undocumented: Vec<&String> = known.difference(&documented).collect();
    let unknown: Vec<&String> = documented.difference(&known).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "read but not in docs/configuration.md: {undocumented:?}; documented but not read: {unknown:?}"
    );
}

#[test]
fn a_near_miss_of_every_key_is_spelled_out_in_its_section() {
    for dotted in Config::keys() {
        let (section, name) = dotted.rsplit_once('.').unwrap_or(("", &dotted));
        // One letter changed: the speller offers the key whatever else the file lacks.
        let typo = format!(
            "{}{}",
            &name[..name.len() - 1],
            if name.ends_with('q') { 'x' } else { 'q' }
        );
        // Each section where the loader reads it: `[acme]` only beside `[tls]`.
        let tls = "[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n";
        let table = match section {
            "" => String::new(),
            "tls" => tls.to_owned(),
            "tls.extra" | "acme" => {
                format!("{tls}[{}]\n", section.replace("tls.extra", "[tls.extra]"))
            }
            "hosts" => "[[hosts]]\n".to_owned(),
            _ => format!("[{section}]\n"),
        };
        let text = format!("{LISTEN}{table}{typo} = 1\n");
        let hint = format!("did you mean \"{name}\"?");
        let problems = errors(&text);
        assert!(
            problems
                .iter()
                .any(|p| p.contains(&typo) && p.contains(&hint)),
            "{dotted}: {problems:?}"
        );
    }
}
