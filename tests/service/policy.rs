//! What the query decides: the view policy, what was dropped, the relay's reload, and the sandbox a page carries.

use super::*;

#[test]
fn bad_queries_are_400_with_the_reason() {
    let cases = [
        (csp_query("{"), "csp is not valid JSON"),
        (csp_query("[1]"), "csp must be a JSON object, not an array"),
        (
            csp_query(r#"{"resourceDomains":{}}"#),
            "csp.resourceDomains must be an array of strings, not an object",
        ),
        (
            csp_query(r#"{"connectDomains":[null]}"#),
            "csp.connectDomains[0] must be a string, not null",
        ),
        // A URI tops out at 64 KiB in `http`; the 1 MB case is in tests/csp.rs and tests/socket.rs.
        (
            format!("csp={}", "a".repeat(60_000)),
            "the query is 60004 bytes; the limit is 16384",
        ),
        (
            "embedder=https%3A%2F%2Fchat.example.com&embedder=https%3A%2F%2Fchat.example.com"
                .to_owned(),
            "the query has more than one embedder parameter",
        ),
        (
            "upgrade=1&csp=%7B%7D&upgrade=0".to_owned(),
            "the query has more than one upgrade parameter",
        ),
    ];
    for (query, reason) in cases {
        let response = get("chat.sandbox.test", &format!("/?{query}"));
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{reason}");
        let text = body(response);
        assert!(text.contains(reason), "{text:?} lacks {reason:?}");
    }
}

#[test]
fn hostile_entries_are_dropped_from_the_header_and_listed_in_the_page() {
    let hostile = [
        "'unsafe-eval'",
        "*",
        "https:",
        "data:",
        "a.com; script-src *",
        "javascript:alert(1)",
        " https://a.example ",
        "https://ехаmple.com",
        "</script><script>alert(1)</script>",
        "\"><img src=x onerror=alert(1)>",
        "<!--",
        "\u{2028}",
    ];
    let json = serde_json::json!({ "connectDomains": hostile, "resourceDomains": hostile, "frameDomains": hostile, "baseUriDomains": hostile });
    let response = get(
        "chat.sandbox.test",
        &format!("/?{}", csp_query(&json.to_string())),
    );
    assert_eq!(response.status(), StatusCode::OK);
    let view_policy = csp_headers(&response)[1].clone();
    let empty =
        csp_headers(&get("chat.sandbox.test", &format!("/?{}", csp_query("{}"))))[1].clone();
    assert_eq!(view_policy, empty, "no hostile entry changes the policy");
    let page = body(response);
    assert_eq!(
        page.matches("</script>").count(),
        2,
        "nothing closes a script element early"
    );
    assert!(!page.contains("<img"), "no markup is injected");
    assert!(!page.contains("<!--"));
    let config = page_config(&page);
    assert_eq!(config["droppedCount"], hostile.len() * 4);
    assert_eq!(
        config["dropped"][8]["entry"], hostile[8],
        "entries reach the relay intact"
    );
    assert_eq!(
        config["hostOrigins"],
        serde_json::json!(["https://chat.example.com"])
    );
}

#[test]
fn page_carries_the_applied_policy() {
    let json = r#"{"connectDomains":["https://api.example.com","http://evil.example"],"resourceDomains":["https://cdn.example.com"]}"#;
    let page = body(get(
        "chat.sandbox.test",
        &format!("/sandbox.html?{}", csp_query(json)),
    ));
    let config = page_config(&page);
    assert_eq!(
        config["applied"]["connectDomains"],
        serde_json::json!(["https://api.example.com"])
    );
    assert_eq!(
        config["applied"]["resourceDomains"],
        serde_json::json!(["https://cdn.example.com"])
    );
    assert_eq!(config["applied"]["frameDomains"], serde_json::json!([]));
    assert_eq!(config["dropped"][0]["entry"], "http://evil.example");
    assert_eq!(config["dropped"][0]["list"], "connectDomains");
    assert!(
        config.get("policy").is_none(),
        "the policy is the page's header; the page does not carry it again"
    );
    let default = page_config(&body(get("chat.sandbox.test", "/")));
    assert!(
        default["applied"].is_null(),
        "no ?csp= means the spec default, not an empty declaration"
    );
}

#[test]
fn same_input_gives_the_same_bytes() {
    let json = r#"{"connectDomains":["https://b.example","https://a.example"]}"#;
    let a = get("chat.sandbox.test", &format!("/?{}", csp_query(json)));
    let b = get("chat.sandbox.test", &format!("/?{}", csp_query(json)));
    assert_eq!(a.headers(), b.headers());
    assert_eq!(body(a), body(b));
}

#[test]
fn a_cached_page_still_counts_its_dropped_entries() {
    let metrics = mcp_sandbox_proxy::Metrics::new();
    let service = Service::with_metrics(&config(TWO_HOSTS), &metrics);
    let path = format!(
        "/?{}",
        csp_query(r#"{"connectDomains":["*","https://ok.example.com"]}"#)
    );
    let first = service.handle(&request(Method::GET, "chat.sandbox.test", &path));
    let second = service.handle(&request(Method::GET, "chat.sandbox.test", &path));
    assert_eq!(first.headers(), second.headers());
    let text = metrics.render();
    assert!(
        text.contains(
            "mcp_sandbox_proxy_csp_entries_dropped_total{host=\"https://chat.example.com\"} 2\n"
        ),
        "{text}"
    );
    assert!(text.contains(
        "mcp_sandbox_proxy_requests_total{host=\"https://chat.example.com\",status=\"200\"} 2\n"
    ));
}

#[test]
fn a_page_the_relay_asks_for_again_is_counted_and_carries_the_query_limit() {
    let metrics = mcp_sandbox_proxy::Metrics::new();
    let service = Service::with_metrics(&config(TWO_HOSTS), &metrics);
    let query = csp_query(r#"{"connectDomains":["https://api.example.com"]}"#);
    let upgraded = service.handle(&request(
        Method::GET,
        "chat.sandbox.test",
        &format!("/?{query}&upgrade=1"),
    ));
    assert_eq!(upgraded.status(), StatusCode::OK);
    let page = body(upgraded);
    let config_in_page = page_config(&page);
    assert_eq!(config_in_page["maxQueryBytes"], 16384);
    assert!(
        page.contains(&format!("var UPGRADE_PARAMETER=\"{UPGRADE_PARAMETER}\";")),
        "the relay's marker is the one the service reads"
    );
    assert_eq!(
        config_in_page["viewSandboxDefault"],
        serde_json::Value::Null
    );
    // The same page asked for by a host, and a marker that is not the relay's: not counted.
    for path in [format!("/?{query}"), format!("/?{query}&upgrade=yes")] {
        let answer = service.handle(&request(Method::GET, "chat.sandbox.test", &path));
        assert_eq!(answer.status(), StatusCode::OK);
    }
    let text = metrics.render();
    assert!(
        text.contains(
            "mcp_sandbox_proxy_policy_upgrades_total{host=\"https://chat.example.com\"} 1\n"
        ),
        "{text}"
    );
    assert!(text.contains(
        "mcp_sandbox_proxy_policy_upgrades_total{host=\"https://studio.example.com\"} 0\n"
    ));
}

#[test]
fn a_hosts_view_sandbox_is_the_pages_own_sandbox_policy_and_the_relays_ceiling() {
    // The second host's views may open pop-ups and never keep an origin of their own.
    let text = two_hosts_with("", "") + "view_sandbox = [\"allow-scripts\", \"allow-popups\"]\n";
    let service = Service::new(&config(&text));
    let response = service.handle(&request(Method::GET, "studio.sandbox.test", "/"));
    let csp = csp_headers(&response);
    assert_eq!(
        csp[0],
        "frame-ancestors https://studio.example.com; sandbox allow-popups allow-same-origin allow-scripts; report-uri https://studio.sandbox.test/csp-report?from=page",
        "the page keeps its own origin: the relay needs it"
    );
    let page = body(response);
    assert_eq!(
        page_config(&page)["viewSandbox"],
        serde_json::json!(["allow-popups", "allow-scripts"])
    );
    let other = service.handle(&request(Method::GET, "chat.sandbox.test", "/"));
    assert!(csp_headers(&other)[0].ends_with("allow-pointer-lock allow-same-origin allow-scripts; report-uri https://chat.sandbox.test/csp-report?from=page"));
}

#[test]
fn the_page_carries_a_host_s_default_view_sandbox() {
    let text = two_hosts_with("", "").replace(
        "sandbox = \"chat.sandbox.test\"\n",
        "sandbox = \"chat.sandbox.test\"\nview_sandbox_default = [\"allow-scripts\", \"allow-forms\"]\n",
    );
    let page = Service::new(&config(&text)).handle(&request(Method::GET, "chat.sandbox.test", "/"));
    let config_in_page = page_config(&body(page));
    assert_eq!(
        config_in_page["viewSandboxDefault"],
        serde_json::json!(["allow-forms", "allow-scripts"])
    );
}

#[test]
fn opaque_views_memory_storage_is_in_the_page_config_and_adds_nothing_to_the_policy() {
    let plain = config(&two_hosts_with("", ""));
    let text = two_hosts_with("", "").replace(
        "sandbox = \"chat.sandbox.test\"\n",
        "sandbox = \"chat.sandbox.test\"\nopaque_view_storage = \"memory\"\nview_features = [\"fullscreen\"]\n",
    );
    let ask = |config: &Config| {
        Service::new(config).handle(&request(Method::GET, "chat.sandbox.test", "/?csp=%7B%7D"))
    };
    let (before, after) = (ask(&plain), ask(&config(&text)));
    assert_eq!(csp_headers(&before), csp_headers(&after));
    let (before, after) = (page_config(&body(before)), page_config(&body(after)));
    assert_eq!(
        (&before["memoryStorage"], &before["viewFeatures"]),
        (&serde_json::json!(false), &serde_json::json!([]))
    );
    assert_eq!(
        (&after["memoryStorage"], &after["viewFeatures"]),
        (&serde_json::json!(true), &serde_json::json!(["fullscreen"]))
    );
}

#[test]
fn a_host_that_writes_its_views_policies_gets_only_framing_and_sandbox() {
    let text = two_hosts_with("", "").replace(
        "sandbox = \"chat.sandbox.test\"\n",
        "sandbox = \"chat.sandbox.test\"\nview_policy = \"host\"\nview_opt_ins = [\"worker-blob\"]\n",
    );
    let service = Service::new(&config(&text));
    for path in [
        "/",
        &format!(
            "/?{}",
            csp_query(r#"{"connectDomains":["https://api.example.com"]}"#)
        ),
    ] {
        let page = service.handle(&request(Method::GET, "chat.sandbox.test", path));
        assert_eq!(page.status(), StatusCode::OK);
        let framing = common::frame_policy("https://chat.example.com", "https://chat.sandbox.test");
        assert_eq!(
            csp_headers(&page),
            [framing.replace("; report-uri", "; object-src 'none'; report-uri")],
            "no fetch directive but the spec's plugin floor: the view's own <meta> is its policy ({path})"
        );
        let config_in_page = page_config(&body(page));
        assert_eq!(config_in_page["hostPolicy"], true);
        assert_eq!(
            config_in_page["applied"],
            serde_json::Value::Null,
            "?csp= is not read"
        );
        let default = config_in_page["defaultPolicy"].as_str().unwrap().to_owned();
        assert!(
            default.starts_with("default-src 'none'; ")
                && default.contains("worker-src 'self' blob:"),
            "{default}"
        );
    }
    let other = service.handle(&request(Method::GET, "studio.sandbox.test", "/"));
    let config_in_page = page_config(&body(other));
    assert_eq!(config_in_page["hostPolicy"], false);
    assert_eq!(config_in_page["defaultPolicy"], serde_json::Value::Null);
}

#[test]
fn widget_csp_is_read_as_csp_is_and_csp_wins_when_both_are_given() {
    let declared = r#"{"connectDomains":["https://api.example.com"]}"#;
    let other = r#"{"connectDomains":["https://other.example.com"]}"#;
    let widget = |json: &str| csp_query(json).replacen("csp=", "widget_csp=", 1);
    let policy_of = |query: &str| {
        let response = get("chat.sandbox.test", &format!("/?{query}"));
        assert_eq!(response.status(), StatusCode::OK, "{query}");
        csp_headers(&response)[1].clone()
    };
    // mcp-use's inspector: `widget_csp` beside its own `v` and `csp_mode`.
    let inspector = format!("v=%7B%7D&csp_mode=widget-declared&{}", widget(declared));
    assert_eq!(policy_of(&inspector), policy_of(&csp_query(declared)));
    assert!(policy_of(&inspector).contains("connect-src 'self' https://api.example.com;"));
    // Both given: `csp` decides, whatever `widget_csp` says.
    let both = format!("{}&{}", widget(other), csp_query(declared));
    assert_eq!(policy_of(&both), policy_of(&csp_query(declared)));
    // Read with the same grammar, and counted once.
    for (query, reason) in [
        (widget("["), "csp is not valid JSON"),
        (
            format!("{}&{}", widget(declared), widget(declared)),
            "the query has more than one widget_csp parameter",
        ),
    ] {
        let response = get("chat.sandbox.test", &format!("/?{query}"));
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
        assert!(body(response).contains(reason), "{reason}");
    }
}
