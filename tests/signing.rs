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

/// The signers' lists in the scheme's form: compact JSON of the four lists in order, string
/// entries only, no empty list; `None` when nothing is declared.
fn declared_lists(csp: &serde_json::Value) -> Option<String> {
    const LISTS: [&str; 4] = [
        "connectDomains",
        "resourceDomains",
        "frameDomains",
        "baseUriDomains",
    ];
    let lists: Vec<String> = LISTS
        .iter()
        .filter_map(|name| {
            let entries: Vec<String> = csp
                .get(name)?
                .as_array()?
                .iter()
                .filter_map(|entry| entry.as_str())
                .map(|entry| serde_json::to_string(entry).expect("a string is JSON"))
                .collect();
            (!entries.is_empty()).then(|| format!("\"{name}\":[{}]", entries.join(",")))
        })
        .collect();
    (!lists.is_empty()).then(|| format!("{{{}}}", lists.join(",")))
}

fn form_value(query: &str, name: &str) -> Option<String> {
    url::form_urlencoded::parse(query.as_bytes())
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.into_owned())
}

/// A service with one host entry that serves `url`'s page on its name with `key`, the
/// lifetime and query limits given; over TLS for an https URL, where 443 is the default port.
fn service_for(url: &url::Url, key: &str, max_lifetime: u64, max_query_bytes: u64) -> Service {
    let dir = tempfile::tempdir().unwrap();
    let host = url.host_str().expect("an http(s) URL has a host");
    let tls = if url.scheme() == "https" {
        let (cert, key, _) = common::write_cert(dir.path(), "vector", &[host]);
        format!("[tls]\ncert = {cert:?}\nkey = {key:?}\n")
    } else {
        String::new()
    };
    let sandbox = &url[url::Position::BeforeHost..url::Position::AfterPort];
    let text = format!(
        r#"listen = "127.0.0.1:0"
{tls}
[limits]
max_query_bytes = {max_query_bytes}

[[hosts]]
origin = ["https://chat.example.com", "https://*.preview.example.com"]
sandbox = "{sandbox}"
page_paths = ["{path}"]
policy_keys = ["{key}"]
policy_max_lifetime = "{max_lifetime}s"
"#,
        path = url.path(),
    );
    Service::new(&common::config(&text))
}

#[test]
fn every_url_the_signers_test_vectors_return_is_served_as_signed() {
    // signer/vectors.json: what both signers must answer for each input. Each URL a vector
    // returns is held here to the service's own rules for names, paths, queries and signatures.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/signer/vectors.json");
    let text = std::fs::read_to_string(path).expect("signer/vectors.json");
    let file: serde_json::Value = serde_json::from_str(&text).expect("vectors.json is JSON");
    let mut signed = 0;
    for vector in file["vectors"].as_array().expect("a list of vectors") {
        let Some(returned) = vector["returns"].as_str() else {
            continue;
        };
        let name = vector["name"].as_str().unwrap_or_default();
        let given = |key: &str| vector.get(key).unwrap_or(&file[key]);
        // A browser writes the URL as the signer wrote it, and asks for this name and target.
        let url = url::Url::parse(returned).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(url.as_str(), returned, "{name}: a browser writes another");
        let sandbox = &url[url::Position::BeforeHost..url::Position::AfterPort];
        let target = &url[url::Position::BeforePath..url::Position::AfterQuery];
        let query = url.query().unwrap_or_default();
        let csp = form_value(query, "csp");
        assert_eq!(csp, declared_lists(&vector["csp"]), "{name}: the csp");

        let key = given("key").as_str().expect("a key").trim().to_owned();
        let max_lifetime = vector["max_lifetime"].as_u64().unwrap_or(3600);
        let max_query_bytes = vector["max_query_bytes"].as_u64().unwrap_or(16384);
        let service = service_for(&url, &key, max_lifetime, max_query_bytes);
        let request = Request::get(target)
            .header(header::HOST, sandbox)
            .body(())
            .unwrap();
        let response = service.handle(&request);
        assert_eq!(response.status(), 200, "{name}: {}", body(response));
        let refused = page_config(&body(response))["policyRefused"].clone();
        let Some(csp) = csp else {
            assert_eq!(refused, serde_json::Value::Null, "{name}");
            continue;
        };

        let expires = form_value(query, "expires").expect("a signed URL has expires=");
        let at: u64 = expires.parse().expect("expires= is a Unix time");
        let now = given("now").as_u64().expect("now is a Unix time");
        let lifetime = i128::from(at) - i128::from(now);
        assert!(
            (1..=i128::from(max_lifetime)).contains(&lifetime),
            "{name}: {lifetime} s"
        );
        let given_signature = form_value(query, "signature").expect("signature=");
        assert_eq!(
            given_signature,
            signature(&key, sandbox, &expires, &csp),
            "{name}: the scheme's signature"
        );
        assert_eq!(
            service.sign_policy(sandbox, &csp, at),
            Ok(given_signature),
            "{name}: the service's signature for the name it routes"
        );
        // The service reads its own clock and a vector's time is fixed, so a vector is, sooner
        // or later, past its expiry. The verifier checks the signature first, and the expiry
        // and lifetime only of a URL that verified: "expired" (or, on a clock set before the
        // vector's time, "policy_max_lifetime") says the signature matched.
        let refused = refused.as_str().unwrap_or_default();
        let verified = ["expired", "policy_max_lifetime"];
        assert!(
            refused.is_empty() || verified.iter().any(|v| refused.contains(v)),
            "{name}: {refused}"
        );
        signed += 1;
    }
    assert!(signed >= 10, "{signed} signed vectors");
}
