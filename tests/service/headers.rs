//! Every answer's headers: the page's contract, HSTS, error answers, cookies, and the limits a request can break.

use super::*;

#[test]
fn head_has_the_headers_of_get_and_no_body() {
    let get = get("chat.sandbox.test", "/");
    let head = service().handle(&request(Method::HEAD, "chat.sandbox.test", "/"));
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(get.headers(), head.headers());
    assert!(body(head).is_empty());
}

#[test]
fn page_sends_the_header_set_of_the_contract() {
    let response = get(
        "chat.sandbox.test",
        &format!(
            "/?{}",
            csp_query(r#"{"connectDomains":["https://api.example.com"]}"#)
        ),
    );
    let h = response.headers();
    assert_eq!(h[header::CONTENT_TYPE], "text/html; charset=utf-8");
    assert_eq!(h[header::CACHE_CONTROL], "no-store");
    assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(
        h[header::REFERRER_POLICY],
        "strict-origin-when-cross-origin"
    );
    assert_eq!(h["origin-agent-cluster"], "?1");
    let csp = csp_headers(&response);
    assert_eq!(
        csp.len(),
        2,
        "frame-ancestors and the view policy are two policies, the page's own first"
    );
    assert!(csp[1].starts_with("default-src 'none'; "));
    assert!(csp[1].contains("connect-src 'self' https://api.example.com;"));
    assert!(!csp[1].contains("frame-ancestors"));
    // The page is a sandboxed document of its own: no pop-up, no download, no top navigation
    // below it, whatever a view does to its frames.
    assert_eq!(
        csp[0],
        "frame-ancestors https://chat.example.com; sandbox allow-forms allow-modals allow-pointer-lock allow-same-origin allow-scripts; report-uri https://chat.sandbox.test/csp-report?from=page"
    );
    // Each policy reports to the sandbox itself, on the name the page was asked for.
    assert!(csp[1].ends_with("; report-uri https://chat.sandbox.test/csp-report?from=view"));
    assert!(
        h.get(header::STRICT_TRANSPORT_SECURITY).is_none(),
        "no HSTS over plain HTTP"
    );
    for never in [
        header::X_FRAME_OPTIONS,
        header::SET_COOKIE,
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
    ] {
        assert!(h.get(&never).is_none(), "{never} must never be sent");
    }
    let length: usize = h[header::CONTENT_LENGTH].to_str().unwrap().parse().unwrap();
    assert_eq!(length, body(response).len());
}

#[test]
fn hsts_over_tls_with_the_configured_max_age() {
    let text =
        format!("{TWO_HOSTS}\n[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\nhsts_max_age = \"2d\"\n");
    let service = Service::new(&config(&text));
    let ok = service.handle(&request(Method::GET, "chat.sandbox.test", "/"));
    assert_eq!(
        ok.headers()[header::STRICT_TRANSPORT_SECURITY],
        "max-age=172800"
    );
    let err = service.handle(&request(Method::GET, "nope.test", "/"));
    assert_eq!(
        err.headers()[header::STRICT_TRANSPORT_SECURITY],
        "max-age=172800"
    );
    // With TLS the default port is 443, so an explicit :443 is the same name.
    let explicit = service.handle(&request(Method::GET, "chat.sandbox.test:443", "/"));
    assert_eq!(explicit.status(), StatusCode::OK);
    let off =
        format!("{TWO_HOSTS}\n[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\nhsts_max_age = \"0s\"\n");
    let service = Service::new(&config(&off));
    let ok = service.handle(&request(Method::GET, "chat.sandbox.test", "/"));
    assert!(
        ok.headers()
            .get(header::STRICT_TRANSPORT_SECURITY)
            .is_none()
    );
}

#[test]
fn error_answers_are_inert_text() {
    for response in [
        get("nope.test", "/"),
        get("chat.sandbox.test", "/x"),
        get("chat.sandbox.test", "/?csp=%7B"),
    ] {
        let h = response.headers();
        assert_eq!(h[header::CONTENT_TYPE], "text/plain; charset=utf-8");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(
            h[header::CONTENT_SECURITY_POLICY],
            "default-src 'none'; frame-ancestors 'none'"
        );
        assert!(h.get(header::SET_COOKIE).is_none());
    }
}

#[test]
fn a_refused_head_is_answered_by_the_service_with_its_reason_and_headers() {
    let cases = [
        (Refusal::FieldsTooLarge, 431, "over limits.max_header_bytes"),
        (Refusal::TargetTooLong, 400, "(limits.max_query_bytes)"),
        (Refusal::Malformed, 400, "not valid HTTP/1.1"),
        (Refusal::Body, 400, "carries no body"),
        (Refusal::ReportTooLarge, 413, "a report's body is at most"),
    ];
    for (refusal, status, reason) in cases {
        // The refusal comes with the request hyper reads in the refused head's place, typed.
        let request = Request::get("/").extension(refusal).body(()).unwrap();
        let response = service().handle(&request);
        assert_eq!(response.status().as_u16(), status, "{refusal:?}");
        assert_security_headers(&response, reason);
        let text = body(response);
        assert!(text.contains(reason), "{refusal:?}: {text}");
    }
}

#[test]
fn no_request_field_can_refuse_a_request_for_the_service() {
    // The head reader once named its refusals in a field of its own: a client that sends it is
    // answered as any other request.
    let request = Request::get("/")
        .header(header::HOST, "chat.sandbox.test")
        .header("x-mcp-sandbox-proxy-refused", "body")
        .body(())
        .unwrap();
    assert_eq!(service().handle(&request).status(), StatusCode::OK);
}

#[test]
fn header_fields_over_the_limit_are_431_but_cookies_do_not_count() {
    let text = format!("{TWO_HOSTS}[limits]\nmax_header_bytes = 1024\n");
    let service = Service::new(&config(&text));
    let with = |name: &str, value: String| {
        let request = Request::get("/")
            .header(header::HOST, "chat.sandbox.test")
            .header(name, value)
            .body(())
            .unwrap();
        service.handle(&request)
    };
    let big = with("x-big", "v".repeat(1100));
    assert_eq!(big.status(), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    assert_security_headers(&big, "431");
    let cookies = with("cookie", "c=".to_owned() + &"v".repeat(20_000));
    assert_eq!(cookies.status(), StatusCode::OK, "cookies are not counted");
}

#[test]
fn an_answer_to_a_request_with_cookies_clears_them() {
    for (host, path) in [("chat.sandbox.test", "/"), ("nope.test", "/")] {
        let request = Request::get(path)
            .header(header::HOST, host)
            .header(header::COOKIE, "planted=1")
            .body(())
            .unwrap();
        let response = service().handle(&request);
        assert_eq!(
            response.headers()["clear-site-data"],
            "\"cookies\"",
            "{host}"
        );
    }
    let clean = get("chat.sandbox.test", "/");
    assert!(clean.headers().get("clear-site-data").is_none());
}

#[test]
fn a_connection_holding_unread_answers_gets_503_until_it_reads_them() {
    let service = service();
    let unsent = mcp_sandbox_proxy::Unsent::new(1024);
    let page = || {
        let request = request(Method::GET, "chat.sandbox.test", "/");
        service.handle_on(&request, Transport::Plain, Some(&unsent))
    };
    let first = page();
    assert_eq!(
        first.status(),
        StatusCode::OK,
        "nothing unsent: always answered"
    );
    assert!(unsent.bytes() > 1024, "charged: the page and its policy");
    let refused = page();
    assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.headers()[header::RETRY_AFTER], "1");
    assert_security_headers(&refused, "503");
    assert!(body(refused).contains("limits.max_unsent_bytes"));
    drop(first);
    assert_eq!(unsent.bytes(), 0, "released with the answer");
    assert_eq!(page().status(), StatusCode::OK);
}
