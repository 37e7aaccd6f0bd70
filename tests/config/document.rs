//! The file as a whole: the examples that ship, its structure, defaults, and every problem at once, named by file and line and shown escaped.

use super::*;

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
fn the_readme_config_is_valid() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let start = readme.find("```toml\n").expect("the README shows a config") + "```toml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    let loaded = Config::parse("README.md", &readme[start..end], Path::new("/etc/p"));
    let loaded = loaded.unwrap_or_else(|e| panic!("{e}"));
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
}

#[test]
fn the_local_development_config_loads_without_warnings() {
    let loaded = Config::load(Path::new("config/local.toml")).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let host = &loaded.config.hosts[0];
    assert_eq!(host.origin.to_string(), "http://localhost:9300");
    assert!(host.per_server_subdomains);
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
