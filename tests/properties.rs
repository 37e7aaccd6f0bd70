//! The fuzz targets' invariants (tests/common/properties.rs), checked in the normal suite on
//! inputs drawn from a seeded generator: host-source fragments, hostile characters and random
//! edits, so every run checks the same ten thousands of cases and a failure can be replayed.

mod common;

use common::heads;
use common::properties::{self, Site};
use common::reports;
use mcp_sandbox_proxy::{HeadLimits, OptIns, policy_for_query};

/// xorshift64*: small, seeded, the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }

    /// `text`, edited (see `mutate`) one time in `one_in`.
    fn sometimes_mutate(&mut self, one_in: usize, text: String) -> String {
        if self.below(one_in) == 0 {
            self.mutate(text)
        } else {
            text
        }
    }

    /// `text` with a few random edits: a hostile character inserted, a byte dropped.
    fn mutate(&mut self, text: String) -> String {
        let mut chars: Vec<char> = text.chars().collect();
        for _ in 0..self.below(3) {
            let at = self.below(chars.len() + 1);
            if self.below(2) == 0 {
                let hostile = [
                    ' ', ';', ',', '\'', '"', '\n', '\t', '\0', '\\', '*', '\u{2028}', 'é', '<',
                    '\u{7f}', '#', '?', '@', '%', ']', '[', '+',
                ];
                chars.insert(at, hostile[self.below(hostile.len())]);
            } else if at < chars.len() {
                chars.remove(at);
            }
        }
        chars.into_iter().collect()
    }
}

const SCHEMES: &[&str] = &[
    "https://",
    "http://",
    "wss://",
    "ws://",
    "",
    "",
    "data:",
    "javascript:",
    "HTTPS://",
    "ftp://",
];
const HOSTS: &[&str] = &[
    "example.com",
    "*.example.com",
    "*.com",
    "localhost",
    "127.0.0.1",
    "api.Example.COM",
    "",
    "*",
    "[::1]",
    "a..b",
    "xn--bcher-kva.example",
    "-bad.example",
    "very.deep.sub.example.org",
    "'self'",
    "'unsafe-eval'",
    "blob:",
    "*.*.example.com",
];
const PORTS: &[&str] = &["", "", ":443", ":*", ":0", ":99999", ":8080", ":abc"];
const PATHS: &[&str] = &[
    "", "", "/", "/a/b", "/a;b", "/a?x=1", "#frag", "/%2F", "/a b", "/A/Case",
];
const LISTS: &[&str] = &[
    "connectDomains",
    "resourceDomains",
    "frameDomains",
    "baseUriDomains",
    "otherDomains",
    "connect_domains",
    "resource_domains",
    "frame_domains",
    "redirect_domains",
];

fn source(rng: &mut Rng) -> String {
    let text = format!(
        "{}{}{}{}",
        rng.pick(SCHEMES),
        rng.pick(HOSTS),
        rng.pick(PORTS),
        rng.pick(PATHS)
    );
    rng.sometimes_mutate(4, text)
}

fn declaration(rng: &mut Rng) -> String {
    let lists: Vec<String> = (0..rng.below(4) + 1)
        .map(|_| {
            let entries: Vec<String> = (0..rng.below(12))
                .map(|_| serde_json::to_string(&source(rng)).unwrap())
                .collect();
            format!("\"{}\":[{}]", rng.pick(LISTS), entries.join(","))
        })
        .collect();
    let json = format!("{{{}}}", lists.join(","));
    rng.sometimes_mutate(8, json)
}

#[test]
fn every_built_policy_is_clean_and_the_same_for_the_same_input() {
    let mut rng = Rng(0x5eed_0001);
    for _ in 0..20_000 {
        let json = declaration(&mut rng);
        properties::check_json(&json);
        let encoded: String = url::form_urlencoded::byte_serialize(json.as_bytes()).collect();
        properties::check_query(&format!("csp={encoded}"));
    }
}

/// The spec's lists and the Apps SDK's key for each (base-uri has none).
const SPELLINGS: [(&str, Option<&str>); 4] = [
    ("connectDomains", Some("connect_domains")),
    ("resourceDomains", Some("resource_domains")),
    ("frameDomains", Some("frame_domains")),
    ("baseUriDomains", None),
];

fn entries(rng: &mut Rng) -> Vec<String> {
    (0..rng.below(8)).map(|_| source(rng)).collect()
}

fn policy_of(object: &serde_json::Map<String, serde_json::Value>) -> (String, String) {
    let json = serde_json::Value::Object(object.clone()).to_string();
    let encoded: String = url::form_urlencoded::byte_serialize(json.as_bytes()).collect();
    match policy_for_query(&format!("csp={encoded}"), 64 * 1024, &OptIns::default()) {
        Ok(policy) => (policy.header().to_owned(), format!("{:?}", policy.dropped)),
        Err(refused) => (String::new(), refused.to_string()),
    }
}

#[test]
fn the_apps_sdk_spelling_gives_the_same_policy_and_the_spec_spelling_wins() {
    let mut rng = Rng(0x5eed_0008);
    for _ in 0..5_000 {
        let (mut spec, mut apps, mut both) = Default::default();
        for (list, apps_key) in SPELLINGS {
            if rng.below(4) == 0 {
                continue;
            }
            let value = serde_json::json!(entries(&mut rng));
            let insert = |object: &mut serde_json::Map<_, _>, key: &str| {
                object.insert(key.to_owned(), value.clone())
            };
            insert(&mut spec, list);
            insert(&mut apps, apps_key.unwrap_or(list));
            insert(&mut both, list);
            if let Some(apps_key) = apps_key {
                // Another list under the Apps SDK's key: never read beside the spec's.
                let other = serde_json::json!(entries(&mut rng));
                both.insert(apps_key.to_owned(), other);
            }
        }
        if rng.below(3) == 0 {
            let redirects = serde_json::json!(entries(&mut rng));
            apps.insert("redirect_domains".to_owned(), redirects);
        }
        let expected = policy_of(&spec);
        assert_eq!(policy_of(&apps), expected, "Apps SDK spelling: {apps:?}");
        assert_eq!(policy_of(&both), expected, "both spellings: {both:?}");
    }
}

#[test]
fn the_config_loader_refuses_with_reasons_and_never_panics() {
    let lines = [
        "listen = \"127.0.0.1:0\"",
        "listen = \"nowhere\"",
        "[[hosts]]",
        "origin = \"https://chat.example.com\"",
        "origin = \"https://chat.example.com/\"",
        "origin = \"http://evil.example\"",
        "sandbox = \"chat.sandbox.test\"",
        "sandbox = \"Chat.Sandbox.Test\"",
        "sandbox = \"chat.example.com\"",
        "per_server_subdomains = true",
        "per_server_subdomains = \"yes\"",
        "[limits]",
        "max_connections = 0",
        "idle_timeout = \"99999d\"",
        "[tls]",
        "cert = \"\"",
        "x = [",
        "\"unterminated",
        "admin_listen = \"[::1]:9\"",
    ];
    let mut rng = Rng(0x5eed_0002);
    for _ in 0..5_000 {
        let text: Vec<&str> = (0..rng.below(12)).map(|_| rng.pick(&lines)).collect();
        let text = text.join("\n");
        let text = rng.sometimes_mutate(5, text);
        properties::check_config(&text);
    }
}

#[test]
fn routing_serves_only_configured_names() {
    let names = [
        "chat.sandbox.test",
        "studio.sandbox.test",
        "sandbox.test",
        "a.b.sandbox.test",
        "chat.sandbox.test:8443",
        // One port written two ways: a config's `:060` serves requests for `:60`.
        "sandbox.test:060",
        "sandbox.test:60",
        "127.0.0.1:9000",
        "x-y.test",
    ];
    let prefixes = [
        "", "", "a.", "a1.", "-a.", "A.", "a.b.", "a_b.", "é.", ".", "xn--x.",
    ];
    let suffixes = [
        "", "", ":80", ":443", ":8443", ".", " ", ":", ":0080", ":+80",
    ];
    let mut rng = Rng(0x5eed_0003);
    for _ in 0..3_000 {
        let sites: Vec<Site> = (0..rng.below(4) + 1)
            .map(|_| Site {
                name: rng.pick(&names).to_owned(),
                per_server: rng.below(2) == 0,
            })
            .collect();
        let authorities: Vec<Vec<u8>> = (0..8)
            .map(|_| {
                let text = format!(
                    "{}{}{}",
                    rng.pick(&prefixes),
                    rng.pick(&names),
                    rng.pick(&suffixes)
                );
                let text = if rng.below(3) == 0 {
                    text.to_ascii_uppercase()
                } else {
                    text
                };
                rng.mutate(text).into_bytes()
            })
            .collect();
        properties::check_routing(&sites, &authorities);
    }
}

#[test]
fn the_head_reader_agrees_with_httparse_within_its_bounds_for_any_split() {
    let mut rng = Rng(0x5eed_0004);
    for _ in 0..30_000 {
        let input = heads::random_head(&mut |n| rng.below(n));
        let limits = HeadLimits {
            request_line: [24, 64, 200, 4096][rng.below(4)],
            fields: [16, 64, 300, 16_384][rng.below(4)],
        };
        let cuts: Vec<usize> = (0..rng.below(8))
            .map(|_| rng.below(input.len() + 1))
            .collect();
        heads::check_heads(&input, &cuts, limits);
        // Byte by byte too: the split that meets every state at every offset.
        let every: Vec<usize> = (0..input.len()).collect();
        heads::check_heads(&input, &every, limits);
    }
}

/// A value percent-encoded as a host's library would, or every byte as `%XX`, or with `+` for
/// each space: the signature covers the decoded value, whichever way it was written.
fn encoded(rng: &mut Rng, value: &str) -> String {
    match rng.below(3) {
        0 => url::form_urlencoded::byte_serialize(value.as_bytes()).collect(),
        1 => value.bytes().map(|b| format!("%{b:02X}")).collect(),
        _ => value
            .replace('%', "%25")
            .replace('&', "%26")
            .replace('+', "%2B")
            .replace('#', "%23")
            .replace(' ', "+"),
    }
}

/// A query a host, a hostile view or a broken signer might send: signed or not, by the host's
/// keys or another, for this `csp` or another, expired or not, with its parts repeated,
/// reordered, edited, and beside other parameters.
fn signed_query(rng: &mut Rng) -> String {
    use common::signing::{KEYS, sign, unix_now};
    let csp = match rng.below(4) {
        0 => r#"{"connectDomains":["https://api.example.com"]}"#.to_owned(),
        1 => "{}".to_owned(),
        _ => declaration(rng),
    };
    let now = unix_now();
    let expires = match rng.below(8) {
        0 => (now - 1 - rng.below(100) as u64).to_string(),
        1 => format!("0{}", now + 600),
        2 => rng
            .pick(&["", "soon", "-1", "1e10", "99999999999", " 1"])
            .to_owned(),
        // Both sides of the default lifetime, never within seconds of it: the service and the
        // reference each read the clock, and a second may turn between them.
        _ => {
            let lifetime = 60 + rng.below(4_000) as u64;
            let near = lifetime.abs_diff(common::signing::MAX_LIFETIME_SECONDS) < 5;
            (now + lifetime + if near { 10 } else { 0 }).to_string()
        }
    };
    let signed_csp = if rng.below(6) == 0 {
        declaration(rng)
    } else {
        csp.clone()
    };
    let mut signature = sign(KEYS[rng.below(3)], &expires, &signed_csp);
    match rng.below(10) {
        0 => signature = signature.to_uppercase(),
        1 => signature.truncate(rng.below(64)),
        2 => signature = rng.mutate(signature),
        _ => {}
    }
    let mut parts = vec![
        format!("csp={}", encoded(rng, &csp)),
        format!("expires={}", encoded(rng, &expires)),
        format!("signature={}", encoded(rng, &signature)),
    ];
    if rng.below(6) == 0 {
        parts.remove(rng.below(parts.len()));
    }
    if rng.below(8) == 0 {
        let again = parts[rng.below(parts.len())].clone();
        parts.push(again);
    }
    for _ in 0..rng.below(3) {
        parts.push(
            rng.pick(&["upgrade=1", "x=y", "csp2=1", "", "signature", "&&"])
                .to_owned(),
        );
    }
    for i in (1..parts.len()).rev() {
        parts.swap(i, rng.below(i + 1));
    }
    let query = parts.join("&");
    rng.sometimes_mutate(10, query)
}

#[test]
fn a_host_that_signs_serves_a_policy_exactly_when_the_reference_finds_its_signature() {
    let mut rng = Rng(0x5eed_0005);
    let mut served = 0;
    for _ in 0..20_000 {
        let query = signed_query(&mut rng);
        if common::signing::reference_signed(&query, common::signing::unix_now()) {
            served += 1;
        }
        common::signing::check_signed_query(&query);
    }
    // The generator must reach both sides of the rule, or the property says little.
    assert!(
        (2_000..18_000).contains(&served),
        "{served} of 20 000 signed"
    );
}

/// Never kept: it is in every path, query, user, sample and document URL of a generated report.
const SECRET: &str = "s3cr3t-user-data";

fn blocked(rng: &mut Rng) -> reports::Blocked {
    const WORDS: &[(&str, &str)] = &[
        ("inline", "inline"),
        ("EVAL", "eval"),
        ("wasm-eval", "wasm-eval"),
        ("data", "data"),
        ("data:image/png;base64,s3cr3t-user-data", "data"),
        ("blob:https://sandbox.example/s3cr3t-user-data", "blob"),
        ("about:blank", "about"),
        ("javascript:s3cr3t-user-data", "javascript"),
        ("ftp://files.example/s3cr3t-user-data", "other"),
        ("file:///s3cr3t-user-data", "other"),
        ("not a url s3cr3t-user-data", "other"),
        ("", "other"),
        ("https://", "other"),
    ];
    if rng.below(3) == 0 {
        let (text, kept) = WORDS[rng.below(WORDS.len())];
        return reports::Blocked::Word(text.to_owned(), kept);
    }
    let rest = [
        "",
        "/",
        "/p/s3cr3t-user-data",
        "/a?s3cr3t-user-data",
        "?q=s3cr3t-user-data#s3cr3t-user-data",
        "#s3cr3t-user-data",
        "/%2Fs3cr3t-user-data/x.png",
    ];
    reports::Blocked::Url(reports::BlockedUrl {
        scheme: rng.pick(&["https", "http", "wss", "ws", "HTTPS"]),
        user: rng
            .pick(&["", "", "", "s3cr3t-user-data@", "u:s3cr3t-user-data@"])
            .to_owned(),
        host: rng
            .pick(&[
                "api.example.com",
                "API.Example.COM",
                "127.0.0.1",
                "[::1]",
                "localhost",
                "deep.sub.example.org",
                "xn--bcher-kva.example",
            ])
            .to_owned(),
        port: [None, None, Some(80), Some(443), Some(8443), Some(1)][rng.below(6)],
        rest: rest[rng.below(rest.len())].to_owned(),
    })
}

fn report(rng: &mut Rng) -> reports::Report {
    let directive = match rng.below(4) {
        0 => rng
            .pick(&[
                "",
                "bogus-src",
                "CONNECT-SRC",
                "img-src 'self' data:",
                "script-src\t'none'",
                "s3cr3t",
            ])
            .to_owned(),
        _ => rng.pick(reports::DIRECTIVES).to_owned(),
    };
    reports::Report {
        directive,
        blocked: blocked(rng),
    }
}

#[test]
fn a_report_keeps_exactly_the_reference_directive_and_origin_and_nothing_of_the_url() {
    let mut rng = Rng(0x5eed_0006);
    for _ in 0..5_000 {
        let batch: Vec<reports::Report> =
            (0..rng.below(31) + 1).map(|_| report(&mut rng)).collect();
        reports::check_reports(&batch, SECRET);
        reports::check_reports(&batch[..1], SECRET);
    }
}

#[test]
fn hostile_report_bodies_are_refused_or_read_clean_and_never_panic() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_object = format!(
        "{}1{}",
        r#"{"csp-report":"#.repeat(5_000),
        "}".repeat(5_000)
    );
    let one = r#"{"type":"csp-violation","body":{"effectiveDirective":"img-src","blockedURL":"https://a.example/x"}}"#;
    let too_many = format!("[{}]", vec![one; 33].join(","));
    let wrong_types = [
        r#"{"csp-report":[]}"#,
        r#"{"csp-report":{"effective-directive":7,"blocked-uri":{"a":1}}}"#,
        r#"{"csp-report":{"effective-directive":"img-src","blocked-uri":["https://a.example"]}}"#,
        r#"[{"type":"csp-violation","body":"img-src"},{"type":7},null,1,"x"]"#,
        r#"{"csp-report":{"effective-directive":null}}"#,
        "null",
        "",
        "\u{feff}{}",
        r#"{"csp-report":{"effective-directive":"img-src","blocked-uri":"https://a.example"},"csp-report":{}}"#,
    ];
    let mut bodies: Vec<String> = wrong_types.iter().map(|b| (*b).to_owned()).collect();
    bodies.extend([deep, deep_object, too_many.clone(), "x".repeat(1 << 20)]);
    for body in &bodies {
        for media_type in reports::MEDIA_TYPES {
            reports::check_body(media_type, body.as_bytes());
        }
    }
    let refused = |body: &str| {
        reports::MEDIA_TYPES
            .iter()
            .all(|m| mcp_sandbox_proxy::read_report(m.as_bytes(), body.as_bytes()).is_err())
    };
    assert!(refused(&too_many), "33 reports in one body");
    assert!(
        refused(&bodies[bodies.len() - 4]),
        "nesting beyond serde_json's limit"
    );
    assert!(refused(wrong_types[0]) && refused(wrong_types[3]) && refused("null"));
    // Random edits of real bodies: read clean or refused.
    let mut rng = Rng(0x5eed_0007);
    for _ in 0..20_000 {
        let batch: Vec<reports::Report> = (0..rng.below(3) + 1).map(|_| report(&mut rng)).collect();
        let body = if rng.below(2) == 0 {
            reports::reports_body(&batch, SECRET)
        } else {
            reports::csp_report_body(&batch[0], SECRET)
        };
        let body = rng.mutate(body);
        reports::check_body(rng.pick(&reports::MEDIA_TYPES), body.as_bytes());
    }
}
