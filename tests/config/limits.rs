//! `[limits]` and the durations every section takes: each bounded, each named when wrong.

use super::*;

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
