//! Policies bound to the host (`policy_keys`): a `?csp=` is served only with the host's
//! signature. Signatures here are made with ring directly, from the scheme as documented, not
//! with the service's own signer.

mod common;

use common::page::{body, csp_headers, page_config};
use common::signing::{KEYS, sign_for as signature, unix_now as now};
use http::{Request, Response, header};
use mcp_sandbox_proxy::{Body, Config, Metrics, Service};

// The keys of the property tests' host: the current one and the one before it.
const KEY: &str = KEYS[0];
const OLD_KEY: &str = KEYS[1];
const DECLARED: &str = r#"{"connectDomains":["https://api.example.com"]}"#;

fn signing_config(keys: &str) -> String {
    format!(
        r#"
listen = "127.0.0.1:0"
cache_max_age = "1h"

[[hosts]]
origin  = "https://chat.example.com"
sandbox = "chat.sandbox.test"
policy_keys = {keys}

[[hosts]]
origin  = "https://studio.example.com"
sandbox = "studio.sandbox.test:8443"
per_server_subdomains = true
policy_keys = ["{KEY}"]
"#
    )
}

fn service_with(keys: &str) -> Service {
    Service::new(&common::config(&signing_config(keys)))
}

fn service() -> Service {
    service_with(&format!(r#"["{KEY}"]"#))
}

fn signed_query(key: &str, sandbox: &str, expires: u64, csp: &str) -> String {
    let expires = expires.to_string();
    let signature = signature(key, sandbox, &expires, csp);
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("csp", csp)
        .append_pair("expires", &expires)
        .append_pair("signature", &signature)
        .finish()
}

fn get(service: &Service, host: &str, query: &str) -> Response<Body> {
    let request = Request::get(format!("/sandbox.html?{query}"))
        .header(header::HOST, host)
        .body(())
        .unwrap();
    service.handle(&request)
}

/// What the page got: whether its header allows the declared domain, and the refusal the relay
/// is told, if any.
fn served(response: Response<Body>) -> (bool, Option<String>) {
    assert_eq!(response.status(), 200);
    let widened = csp_headers(&response)[1].contains("https://api.example.com");
    let config = page_config(&body(response));
    assert_eq!(config["signedPolicies"], true);
    (widened, config["policyRefused"].as_str().map(str::to_owned))
}

fn refusal(response: Response<Body>) -> String {
    let (widened, refused) = served(response);
    assert!(
        !widened,
        "a refused signature gets the spec's default policy"
    );
    refused.expect("the relay is told why")
}

#[test]
fn a_signed_policy_is_served_until_its_expiry() {
    let query = signed_query(KEY, "chat.sandbox.test", now() + 600, DECLARED);
    let response = get(&service(), "chat.sandbox.test", &query);
    assert_eq!(
        response.headers()[header::CACHE_CONTROL],
        "no-cache",
        "no cache may serve it past its expiry without asking"
    );
    assert_eq!(served(response), (true, None));
}

#[test]
fn an_unsigned_policy_gets_the_default_and_says_why() {
    let query = common::csp_query(DECLARED);
    let reason = refusal(get(&service(), "chat.sandbox.test", &query));
    assert!(reason.contains("no ?signature="), "{reason}");
}

#[test]
fn an_expired_signature_gets_the_default_and_says_how_long_ago() {
    let query = signed_query(KEY, "chat.sandbox.test", now() - 30, DECLARED);
    let reason = refusal(get(&service(), "chat.sandbox.test", &query));
    assert!(reason.contains("expired"), "{reason}");
    // The second the URL names is the first one it is refused in.
    let query = signed_query(KEY, "chat.sandbox.test", now(), DECLARED);
    assert!(refusal(get(&service(), "chat.sandbox.test", &query)).contains("expired"));
}

#[test]
fn every_part_the_signature_covers_is_bound() {
    let expires = now() + 600;
    let wider = r#"{"connectDomains":["https://api.example.com","https://evil.example"]}"#;
    let good = signature(KEY, "chat.sandbox.test", &expires.to_string(), DECLARED);
    let encoded =
        |csp: &str| -> String { url::form_urlencoded::byte_serialize(csp.as_bytes()).collect() };
    let forged = [
        // Another policy under the host's signature.
        format!("csp={}&expires={expires}&signature={good}", encoded(wider)),
        // A later expiry.
        format!(
            "csp={}&expires={}&signature={good}",
            encoded(DECLARED),
            expires + 1
        ),
        // Another key.
        signed_query(OLD_KEY, "chat.sandbox.test", expires, DECLARED),
        // Another host's sandbox name, and the per-server form of this one.
        signed_query(KEY, "studio.sandbox.test:8443", expires, DECLARED),
        signed_query(KEY, "a.chat.sandbox.test", expires, DECLARED),
    ];
    for query in forged {
        let reason = refusal(get(&service(), "chat.sandbox.test", &query));
        assert!(reason.contains("does not match"), "{query}: {reason}");
    }
}

#[test]
fn malformed_signed_urls_are_named() {
    let expires = now() + 600;
    let good = signed_query(KEY, "chat.sandbox.test", expires, DECLARED);
    let upper = good.replace(
        &signature(KEY, "chat.sandbox.test", &expires.to_string(), DECLARED),
        &signature(KEY, "chat.sandbox.test", &expires.to_string(), DECLARED).to_uppercase(),
    );
    let cases = [
        (upper, "hex digits"),
        (
            good.replace(&format!("expires={expires}"), "expires=soon"),
            "Unix time",
        ),
        (
            good.replace(&format!("expires={expires}&"), ""),
            "expires= is missing",
        ),
        (good.replace("signature=", "signature=0"), "hex digits"),
    ];
    for (query, expected) in cases {
        let reason = refusal(get(&service(), "chat.sandbox.test", &query));
        assert!(reason.contains(expected), "{query}: {reason}");
    }
}

#[test]
fn a_signed_url_with_a_parameter_twice_is_refused_whole() {
    // A signer, a cache or a front proxy that reads the other value would see another page.
    let good = signed_query(KEY, "chat.sandbox.test", now() + 600, DECLARED);
    for (extra, name) in [
        ("signature=00", "signature"),
        ("expires=1", "expires"),
        ("csp=%7B%7D", "csp"),
    ] {
        let response = get(&service(), "chat.sandbox.test", &format!("{good}&{extra}"));
        assert_eq!(response.status(), 400, "{extra}");
        assert!(
            response
                .headers()
                .contains_key(header::CONTENT_SECURITY_POLICY)
        );
        let reason = body(response);
        assert!(
            reason.contains(&format!("more than one {name} parameter")),
            "{extra}: {reason}"
        );
    }
}

#[test]
fn either_of_two_keys_verifies_while_they_rotate() {
    let both = format!(r#"["{KEY}", "{OLD_KEY}"]"#);
    for key in [KEY, OLD_KEY] {
        let query = signed_query(key, "chat.sandbox.test", now() + 600, DECLARED);
        assert_eq!(
            served(get(&service_with(&both), "chat.sandbox.test", &query)),
            (true, None)
        );
    }
    // Once the old key is gone, what it signed is refused.
    let query = signed_query(OLD_KEY, "chat.sandbox.test", now() + 600, DECLARED);
    assert!(refusal(get(&service(), "chat.sandbox.test", &query)).contains("does not match"));
}

#[test]
fn a_per_server_label_serves_only_what_was_signed_for_it() {
    // Signed for the name the page is served on, as a browser writes it (the port is not the
    // default one), label included.
    let service = service();
    let weather = signed_query(
        KEY,
        "weather.studio.sandbox.test:8443",
        now() + 600,
        DECLARED,
    );
    let response = get(&service, "weather.studio.sandbox.test:8443", &weather);
    assert_eq!(served(response), (true, None));
    // The same URL on another server's label, or on the entry's own name: the default policy,
    // also after the page was cached for the label it was signed for.
    for other in ["mail.studio.sandbox.test:8443", "studio.sandbox.test:8443"] {
        let reason = refusal(get(&service, other, &weather));
        assert!(reason.contains("does not match"), "{other}: {reason}");
    }
    // Signed for the entry's name: served there, and on no label.
    let entry = signed_query(KEY, "studio.sandbox.test:8443", now() + 600, DECLARED);
    let response = get(&service, "studio.sandbox.test:8443", &entry);
    assert_eq!(served(response), (true, None));
    let reason = refusal(get(&service, "weather.studio.sandbox.test:8443", &entry));
    assert!(reason.contains("does not match"), "{reason}");
    // Written in upper case by a client, the name is still the one signed.
    let response = get(&service, "WEATHER.studio.sandbox.test:8443", &weather);
    assert_eq!(served(response), (true, None));
}

#[test]
fn a_page_without_csp_needs_no_signature() {
    let response = get(&service(), "chat.sandbox.test", "");
    assert_eq!(
        response.headers()[header::CACHE_CONTROL],
        "public, max-age=3600"
    );
    assert_eq!(served(response), (false, None));
}

#[test]
fn a_refused_signature_is_still_held_to_the_query_limit() {
    let long = format!(
        r#"{{"connectDomains":["https://{}.example"]}}"#,
        "a".repeat(17_000)
    );
    let query = common::csp_query(&long);
    let response = get(&service(), "chat.sandbox.test", &query);
    assert_eq!(response.status(), 400, "too long, signed or not");
}

#[test]
fn a_cached_signed_page_ends_at_its_expiry() {
    let service = service();
    // Signed to expire at the next second, so the cached page outlives its signature.
    let expires = now() + 1;
    let query = signed_query(KEY, "chat.sandbox.test", expires, DECLARED);
    let first = get(&service, "chat.sandbox.test", &query);
    if now() >= expires {
        // The second turned while the page was built: nothing to learn from this run.
        assert!(refusal(first).contains("expired"));
        return;
    }
    assert_eq!(served(first), (true, None));
    while now() < expires {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let reason = refusal(get(&service, "chat.sandbox.test", &query));
    assert!(reason.contains("expired"), "{reason}");
}

#[test]
fn refused_signatures_are_counted_per_host() {
    let metrics = Metrics::new();
    let service = Service::with_metrics(
        &common::config(&signing_config(&format!(r#"["{KEY}"]"#))),
        &metrics,
    );
    let query = common::csp_query(DECLARED);
    for _ in 0..2 {
        get(&service, "chat.sandbox.test", &query);
    }
    let line = metrics
        .render()
        .lines()
        .find(|l| {
            l.starts_with("mcp_sandbox_proxy_refused_policy_signatures_total")
                && l.contains("chat.example.com")
        })
        .map(str::to_owned);
    assert!(line.is_some_and(|l| l.ends_with(" 2")), "counted twice");
}

fn problems(keys: &str) -> String {
    match Config::parse(
        "test.toml",
        &signing_config(keys),
        std::path::Path::new("."),
    ) {
        Ok(_) => panic!("{keys} must be refused"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_keys_are_refused_without_showing_them() {
    let short = &KEY[..62];
    let cases = [
        (format!(r#"["{short}"]"#), "31 bytes: at least 32"),
        (format!(r#"["{}zz"]"#, &KEY[..62]), "is not hex"),
        (format!(r#"["+{}"]"#, &KEY[..63]), "is not hex"),
        (
            r#"["env:MCP_SANDBOX_PROXY_TEST_UNSET_KEY"]"#.to_owned(),
            "MCP_SANDBOX_PROXY_TEST_UNSET_KEY is not set",
        ),
        (
            r#"["env:A-B"]"#.to_owned(),
            "does not name an environment variable",
        ),
        (format!(r#"["{KEY}", "{OLD_KEY}", "{KEY}"]"#), "at most 2"),
        (format!(r#"["{KEY}", "{KEY}"]"#), "lists the same key twice"),
        (
            format!(r#"["{KEY}", "{}"]"#, KEY.to_uppercase()),
            "lists the same key twice",
        ),
        ("[]".to_owned(), "must hold a key"),
        (format!(r#""{KEY}""#), "must be a list"),
    ];
    for (keys, expected) in cases {
        let problems = problems(&keys);
        assert!(problems.contains("hosts[0].policy_keys"), "{problems}");
        assert!(problems.contains(expected), "{keys}: {problems}");
        assert!(
            !problems.contains(&KEY[..16]),
            "a key is never shown: {problems}"
        );
    }
}

#[test]
fn a_signed_url_lives_at_most_the_entry_s_max_lifetime() {
    // The default is an hour (and a minute for clocks): a URL signed to expire in 2286, or in
    // two hours, is refused; an entry may allow longer.
    let service = service();
    for expires in [9_999_999_999, now() + 7200] {
        let query = signed_query(KEY, "chat.sandbox.test", expires, DECLARED);
        let reason = refusal(get(&service, "chat.sandbox.test", &query));
        assert!(
            reason.contains("policy_max_lifetime"),
            "{expires}: {reason}"
        );
    }
    let query = signed_query(KEY, "chat.sandbox.test", now() + 3600, DECLARED);
    assert_eq!(
        served(get(&service, "chat.sandbox.test", &query)),
        (true, None)
    );
    let text = signing_config(&format!(r#"["{KEY}"]"#)).replacen(
        "policy_keys = [",
        "policy_max_lifetime = \"3h\"\npolicy_keys = [",
        1,
    );
    let longer = Service::new(&common::config(&text));
    let query = signed_query(KEY, "chat.sandbox.test", now() + 7200, DECLARED);
    assert_eq!(
        served(get(&longer, "chat.sandbox.test", &query)),
        (true, None)
    );
}

#[test]
fn a_max_lifetime_needs_keys_and_a_length() {
    let base = "listen = \"127.0.0.1:0\"\n[[hosts]]\norigin = \"https://chat.example.com\"\nsandbox = \"chat.sandbox.test\"\n";
    let cases = [
        (
            "policy_max_lifetime = \"1h\"\n".to_owned(),
            "signs none (no policy_keys)",
        ),
        (
            format!("policy_keys = [\"{KEY}\"]\npolicy_max_lifetime = \"0s\"\n"),
            "is not a duration",
        ),
        (
            format!("policy_keys = [\"{KEY}\"]\npolicy_max_lifetime = \"8d\"\n"),
            "longer than the most this key takes",
        ),
    ];
    for (more, expected) in cases {
        let text = format!("{base}{more}");
        let problems = match Config::parse("t.toml", &text, std::path::Path::new(".")) {
            Ok(_) => panic!("{more} must be refused"),
            Err(e) => e.to_string(),
        };
        assert!(
            problems.contains("hosts[0].policy_max_lifetime"),
            "{problems}"
        );
        assert!(problems.contains(expected), "{more}: {problems}");
    }
}
