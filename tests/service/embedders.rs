//! Who may frame a page: patterns pinned to the origin a page names, lists of origins, and framers that are none of them.

use super::*;

#[test]
fn a_pattern_host_pins_each_page_to_the_exact_preview_origin_it_names() {
    let metrics = mcp_sandbox_proxy::Metrics::new();
    let service = Service::with_metrics(
        &config(
            "listen = \"127.0.0.1:0\"\n\
         [[hosts]]\norigin = \"https://*.preview.example.com\"\nsandbox = \"preview.sandbox.test\"\n\
         [[hosts]]\norigin = \"https://chat.example.com\"\nsandbox = \"chat.sandbox.test\"\n",
        ),
        &metrics,
    );
    let ask = |host: &str, query: &str| service.handle(&request(Method::GET, host, query));
    let pinned_to = |response: Response<Body>| {
        assert_eq!(response.status(), StatusCode::OK);
        let csp = csp_headers(&response);
        let page = body(response);
        (csp[0].clone(), page_config(&page)["hostOrigins"].clone())
    };
    for preview in [
        "https://pr-1.preview.example.com",
        "https://pr-2.preview.example.com",
    ] {
        let query = format!(
            "/?embedder={}",
            preview.replace(':', "%3A").replace('/', "%2F")
        );
        assert_eq!(
            pinned_to(ask("preview.sandbox.test", &query)),
            (
                common::frame_policy(preview, "https://preview.sandbox.test"),
                serde_json::json!([preview])
            ),
            "each preview gets a page pinned to itself"
        );
    }
    for (query, reason) in [
        (
            "/",
            "this sandbox serves the host origins https://*.preview.example.com: name the page's own origin in ?embedder=",
        ),
        (
            "/?embedder=https://evil.example.com",
            "?embedder=\"https://evil.example.com\" is not one of this sandbox's host origins https://*.preview.example.com",
        ),
        (
            "/?embedder=https://a.b.preview.example.com",
            "?embedder=\"https://a.b.preview.example.com\" is not one of this sandbox's host origins https://*.preview.example.com",
        ),
        (
            "/?embedder=http://pr-1.preview.example.com",
            "?embedder=\"http://pr-1.preview.example.com\" is not an origin: plain http is only for loopback hosts (localhost, *.localhost, 127.0.0.0/8) — did you mean \"https://pr-1.preview.example.com\"?",
        ),
        (
            "/?embedder=https://pr-1.preview.example.com:8443",
            "?embedder=\"https://pr-1.preview.example.com:8443\" is not one of this sandbox's host origins https://*.preview.example.com",
        ),
    ] {
        let response = ask("preview.sandbox.test", query);
        assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{query}");
        assert_eq!(
            body(response),
            format!("400 Bad Request: {reason}\n"),
            "{query}"
        );
    }
    // A host entry with one origin takes `embedder` only when it names that origin.
    assert_eq!(
        ask("chat.sandbox.test", "/?embedder=https://chat.example.com").status(),
        StatusCode::OK
    );
    let wrong = ask(
        "chat.sandbox.test",
        "/?embedder=https://pr-1.preview.example.com",
    );
    assert_eq!(wrong.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        body(wrong),
        "400 Bad Request: ?embedder=\"https://pr-1.preview.example.com\" is not one of this sandbox's host origins https://chat.example.com\n"
    );
    // Counted under the pattern: every preview's pages, and every refused embedder.
    let text = metrics.render();
    for series in [
        "mcp_sandbox_proxy_requests_total{host=\"https://*.preview.example.com\",status=\"200\"} 2",
        "mcp_sandbox_proxy_requests_total{host=\"https://*.preview.example.com\",status=\"400\"} 5",
    ] {
        assert!(text.lines().any(|l| l == series), "{series}\n{text}");
    }
}

#[test]
fn a_host_with_several_origins_is_framed_by_each_and_pinned_to_the_one_it_names() {
    let metrics = mcp_sandbox_proxy::Metrics::new();
    let service = Service::with_metrics(
        &config(
            "listen = \"127.0.0.1:0\"\n\
         [[hosts]]\norigin = [\"http://localhost:6274\", \"http://127.0.0.1:6274\", \"https://*.preview.example.com\"]\n\
         sandbox = \"inspector.localhost:8443\"\n",
        ),
        &metrics,
    );
    let ask = |query: &str| {
        let response = service.handle(&request(Method::GET, "inspector.localhost:8443", query));
        assert_eq!(response.status(), StatusCode::OK, "{query}");
        let csp = csp_headers(&response);
        let page = body(response);
        (csp[0].clone(), page_config(&page)["hostOrigins"].clone())
    };
    let both = ["http://localhost:6274", "http://127.0.0.1:6274"];
    assert_eq!(
        ask("/"),
        (
            common::frame_policy(&both.join(" "), "https://inspector.localhost:8443"),
            serde_json::json!(both)
        ),
        "without ?embedder=, every exact origin; a pattern needs its origin named"
    );
    for named in ["http://127.0.0.1:6274", "https://pr-3.preview.example.com"] {
        assert_eq!(
            ask(&format!("/?embedder={named}")),
            (
                common::frame_policy(named, "https://inspector.localhost:8443"),
                serde_json::json!([named])
            ),
            "{named}"
        );
    }
    let refused = service.handle(&request(
        Method::GET,
        "inspector.localhost:8443",
        "/?embedder=http://[::1]:6274",
    ));
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let refused = service.handle(&request(
        Method::GET,
        "inspector.localhost:8443",
        "/?embedder=http://localhost:6275",
    ));
    assert_eq!(
        body(refused),
        "400 Bad Request: ?embedder=\"http://localhost:6275\" is not one of this sandbox's host origins http://localhost:6274 http://127.0.0.1:6274 https://*.preview.example.com\n"
    );
    // Framed by either listed origin: no mismatch; by a third: one.
    for framer in [
        "http://localhost:6274/",
        "http://127.0.0.1:6274/",
        "http://[::1]:6274/",
    ] {
        let mut req = request(Method::GET, "inspector.localhost:8443", "/");
        let headers = req.headers_mut();
        headers.insert("sec-fetch-dest", http::HeaderValue::from_static("iframe"));
        headers.insert(
            "sec-fetch-site",
            http::HeaderValue::from_static("cross-site"),
        );
        headers.insert(header::REFERER, http::HeaderValue::from_static(framer));
        assert_eq!(service.handle(&req).status(), StatusCode::OK);
    }
    let label =
        "host=\"http://localhost:6274 http://127.0.0.1:6274 https://*.preview.example.com\"";
    let text = metrics.render();
    assert!(text.contains(label), "one series for the entry");
    let mismatches = format!("mcp_sandbox_proxy_embedder_mismatches_total{{{label}}} 1\n");
    assert!(text.contains(&mismatches), "{text}");
}

#[test]
fn a_page_framed_by_another_origin_is_served_and_counted() {
    let metrics = mcp_sandbox_proxy::Metrics::new();
    let service = Service::with_metrics(&config(TWO_HOSTS), &metrics);
    let framed = |headers: &[(&str, &str)]| {
        let mut req = request(Method::GET, "chat.sandbox.test", "/sandbox.html");
        for (name, value) in headers {
            req.headers_mut().insert(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                http::HeaderValue::from_str(value).unwrap(),
            );
        }
        let answer = service.handle(&req);
        assert_eq!(answer.status(), StatusCode::OK, "{headers:?}");
    };
    let iframe = ("sec-fetch-dest", "iframe");
    let cross_site = ("sec-fetch-site", "cross-site");
    // Framed by another origin (scheme, port or name): counted; the browser refuses the frame.
    framed(&[
        iframe,
        cross_site,
        ("referer", "http://chat.example.com/app"),
    ]);
    framed(&[
        iframe,
        cross_site,
        ("referer", "https://chat.example.com:8443/"),
    ]);
    framed(&[iframe, cross_site, ("referer", "https://127.0.0.1/")]);
    // Not counted: the configured origin; the relay reloading itself; a request that does not
    // say it is framed, or does not say by whom; a Referer that is no URL.
    framed(&[
        iframe,
        cross_site,
        ("referer", "https://chat.example.com/c/42"),
    ]);
    framed(&[
        iframe,
        ("sec-fetch-site", "same-origin"),
        ("referer", "https://chat.sandbox.test/sandbox.html"),
    ]);
    framed(&[
        ("sec-fetch-dest", "document"),
        cross_site,
        ("referer", "https://evil.example/"),
    ]);
    framed(&[("referer", "https://evil.example/")]);
    framed(&[iframe, cross_site]);
    framed(&[iframe, cross_site, ("referer", "not a url")]);
    let text = metrics.render();
    assert!(
        text.contains(
            "mcp_sandbox_proxy_embedder_mismatches_total{host=\"https://chat.example.com\"} 3\n"
        ),
        "{text}"
    );
}

/// LibreChat's sandbox URL: `/api/mcp/sandbox?parentOrigin=<host origin>&strictCsp=1&csp=…`.
const LIBRECHAT: &str = "listen = \"127.0.0.1:0\"\n\
    [[hosts]]\norigin = [\"https://chat.example.com\", \"https://staging.example.com\"]\n\
    sandbox = \"chat.sandbox.test\"\npage_paths = [\"/api/mcp/sandbox\"]\n\
    view_opt_ins = [\"unsafe-eval\", \"wasm-unsafe-eval\", \"worker-blob\", \"blob-media\"]\n";

#[test]
fn parent_origin_pins_the_page_as_embedder_does_and_never_widens() {
    let service = Service::new(&config(LIBRECHAT));
    let ask = |query: &str| {
        service.handle(&request(
            Method::GET,
            "chat.sandbox.test",
            &format!("/api/mcp/sandbox{query}"),
        ))
    };
    let both = ask("");
    assert_eq!(both.status(), StatusCode::OK);
    assert!(
        csp_headers(&both)[0]
            .starts_with("frame-ancestors https://chat.example.com https://staging.example.com;")
    );
    for origin in ["https://chat.example.com", "https://staging.example.com"] {
        let pinned = ask(&format!("?parentOrigin={origin}"));
        assert_eq!(pinned.status(), StatusCode::OK, "{origin}");
        assert!(
            csp_headers(&pinned)[0].starts_with(&format!("frame-ancestors {origin};")),
            "{:?}",
            csp_headers(&pinned)
        );
        // Given both, they must agree.
        let agreeing = ask(&format!("?parentOrigin={origin}&embedder={origin}"));
        assert_eq!(agreeing.status(), StatusCode::OK);
    }
    for (query, reason) in [
        (
            "?parentOrigin=https://evil.example.com",
            "?parentOrigin=\"https://evil.example.com\" is not one of this sandbox's host origins https://chat.example.com https://staging.example.com",
        ),
        (
            "?parentOrigin=null",
            "?parentOrigin=\"null\" is not an origin: ",
        ),
        (
            "?parentOrigin=https://chat.example.com&embedder=https://staging.example.com",
            "the query's embedder and parentOrigin name different origins",
        ),
        (
            "?parentOrigin=https://chat.example.com&parentOrigin=https://chat.example.com",
            "the query has more than one parentOrigin parameter",
        ),
    ] {
        let refused = ask(query);
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST, "{query}");
        assert_security_headers(&refused, query);
        let text = body(refused);
        assert!(
            text.starts_with(&format!("400 Bad Request: {reason}")),
            "{query}: {text}"
        );
    }
}

#[test]
fn strict_csp_takes_the_opt_ins_that_run_built_code_out_and_never_loosens() {
    let service = Service::new(&config(LIBRECHAT));
    let view_policy = |query: &str| {
        let page = service.handle(&request(
            Method::GET,
            "chat.sandbox.test",
            &format!("/api/mcp/sandbox?parentOrigin=https://chat.example.com{query}"),
        ));
        assert_eq!(page.status(), StatusCode::OK, "{query}");
        csp_headers(&page)[1].clone()
    };
    let csp = "&csp=%7B%22resourceDomains%22%3A%5B%22https%3A%2F%2Fcdn.example.com%22%5D%7D";
    let relaxed = view_policy(csp);
    assert!(
        relaxed.contains("'unsafe-eval'") && relaxed.contains("worker-src"),
        "{relaxed}"
    );
    let strict = view_policy(&format!("{csp}&strictCsp=1"));
    for gone in ["'unsafe-eval'", "'wasm-unsafe-eval'", "worker-src"] {
        assert!(!strict.contains(gone), "{gone} in {strict}");
    }
    assert!(
        strict.contains("script-src 'self' 'unsafe-inline' https://cdn.example.com;"),
        "{strict}"
    );
    assert!(
        strict.contains("img-src 'self' data: blob: https://cdn.example.com;"),
        "{strict}"
    );
    // Every word of the strict policy is in the relaxed one: it only narrows.
    for word in strict.split([' ', ';']).filter(|w| !w.is_empty()) {
        assert!(relaxed.contains(word), "{word} is not in {relaxed}");
    }
    // Only "1" asks, as LibreChat reads it.
    assert_eq!(view_policy(&format!("{csp}&strictCsp=true")), relaxed);
}
