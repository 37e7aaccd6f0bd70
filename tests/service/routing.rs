//! Which host entry answers: sandbox names, per-server labels, the SNI rule, page paths and methods.

use super::*;

#[test]
fn routes_each_sandbox_name_to_its_host() {
    for (host, origin) in [
        ("chat.sandbox.test", "https://chat.example.com"),
        ("CHAT.Sandbox.Test", "https://chat.example.com"),
        ("chat.sandbox.test:80", "https://chat.example.com"),
        ("studio.sandbox.test", "https://studio.example.com"),
        ("abc123.studio.sandbox.test", "https://studio.example.com"),
        (
            "0123456789abcdef0123456789abcdef.studio.sandbox.test",
            "https://studio.example.com",
        ),
    ] {
        let response = get(host, "/");
        assert_eq!(response.status(), StatusCode::OK, "{host}");
        let csp = csp_headers(&response);
        // The name as routed: lower case, the default port left out.
        let served_as = format!(
            "https://{}",
            host.to_ascii_lowercase().trim_end_matches(":80")
        );
        assert_eq!(csp[0], common::frame_policy(origin, &served_as), "{host}");
    }
}

#[test]
fn unknown_authority_is_421() {
    for host in [
        "other.test",
        "sandbox.test",
        "x.chat.sandbox.test",     // chat has no per-server subdomains
        "a.b.studio.sandbox.test", // only one label
        "-x.studio.sandbox.test",  // not a DNS label
        "x-.studio.sandbox.test",
        "x_y.studio.sandbox.test",
        ".studio.sandbox.test",
        "chat.sandbox.test:8443", // not the listener's default port
    ] {
        let response = get(host, "/");
        assert_eq!(response.status(), StatusCode::MISDIRECTED_REQUEST, "{host}");
        assert_eq!(
            response.headers()[header::CONTENT_TYPE],
            "text/plain; charset=utf-8"
        );
        let text = body(response);
        assert!(text.contains("serves no sandbox named"), "{text}");
    }
    let long_label = format!("{}.studio.sandbox.test", "a".repeat(64));
    assert_eq!(
        get(&long_label, "/").status(),
        StatusCode::MISDIRECTED_REQUEST
    );
}

#[test]
fn missing_authority_is_400() {
    let request = Request::get("/").body(()).unwrap();
    assert_eq!(service().handle(&request).status(), StatusCode::BAD_REQUEST);
}

#[test]
fn http2_authority_is_used() {
    let request = Request::get("https://chat.sandbox.test/").body(()).unwrap();
    assert_eq!(service().handle(&request).status(), StatusCode::OK);
    let request = Request::get("https://nope.test/")
        .header(header::HOST, "chat.sandbox.test")
        .body(())
        .unwrap();
    assert_eq!(
        service().handle(&request).status(),
        StatusCode::MISDIRECTED_REQUEST,
        "the URI authority wins"
    );
}

#[test]
fn two_host_headers_are_400() {
    let request = Request::get("/")
        .header(header::HOST, "chat.sandbox.test")
        .header(header::HOST, "studio.sandbox.test")
        .body(())
        .unwrap();
    let response = service().handle(&request);
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert!(body(response).contains("more than one"));
}

#[test]
fn a_configured_port_is_a_number() {
    let text = "listen = \"127.0.0.1:0\"\n[[hosts]]\norigin = \"https://chat.example.com\"\nsandbox = \"chat.sandbox.test:060\"\n";
    let service = Service::new(&config(text));
    let ask = |host: &str| service.handle(&request(Method::GET, host, "/")).status();
    assert_eq!(
        ask("chat.sandbox.test:60"),
        StatusCode::OK,
        "as browsers write it"
    );
    assert_eq!(
        ask("chat.sandbox.test:060"),
        StatusCode::MISDIRECTED_REQUEST
    );
}

#[test]
fn tls_connections_serve_only_the_host_their_server_name_selected() {
    let text = "listen = \"127.0.0.1:0\"\n\
        [[hosts]]\norigin = \"https://a.example.com\"\nsandbox = \"sandbox.example.net:8443\"\n\
        [[hosts]]\norigin = \"https://b.example.com\"\nsandbox = \"sandbox.example.net:9443\"\n\
        [[hosts]]\norigin = \"https://c.example.com\"\nsandbox = \"other.example.net\"\nper_server_subdomains = true\n\
        [tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n";
    let service = Service::new(&config(text));
    let on = |sni: &str, authority: &str| {
        let request = request(Method::GET, authority, "/");
        let transport = Transport::Tls {
            server_name: Some(sni),
        };
        service.handle_on(&request, transport, None).status()
    };
    // One name on two ports: both entries belong to it.
    assert_eq!(
        on("sandbox.example.net", "sandbox.example.net:8443"),
        StatusCode::OK
    );
    assert_eq!(
        on("sandbox.example.net", "sandbox.example.net:9443"),
        StatusCode::OK
    );
    assert_eq!(
        on("sandbox.example.net", "other.example.net"),
        StatusCode::MISDIRECTED_REQUEST
    );
    assert_eq!(
        on("x.other.example.net", "y.other.example.net"),
        StatusCode::OK,
        "labels of one host share"
    );
    assert_eq!(
        on("unknown.example.net", "other.example.net"),
        StatusCode::MISDIRECTED_REQUEST
    );
    // Without TLS the server name plays no part.
    let plain = Service::new(&config(TWO_HOSTS));
    let request = request(Method::GET, "chat.sandbox.test", "/");
    assert_eq!(
        plain
            .handle_on(
                &request,
                Transport::Tls {
                    server_name: Some("studio.sandbox.test")
                },
                None
            )
            .status(),
        StatusCode::OK
    );
}

#[test]
fn a_tls_connection_without_a_server_name_serves_only_an_ip_sandbox() {
    let text = "listen = \"127.0.0.1:0\"\n\
        [[hosts]]\norigin = \"https://a.example.com\"\nsandbox = \"sandbox.example.net\"\n\
        [[hosts]]\norigin = \"https://b.example.com\"\nsandbox = \"192.0.2.7:8443\"\n\
        [tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n";
    let service = Service::new(&config(text));
    let no_sni = |authority: &str| {
        let transport = Transport::Tls { server_name: None };
        service
            .handle_on(&request(Method::GET, authority, "/"), transport, None)
            .status()
    };
    assert_eq!(
        no_sni("sandbox.example.net"),
        StatusCode::MISDIRECTED_REQUEST
    );
    assert_eq!(no_sni("192.0.2.7:8443"), StatusCode::OK);
}

#[test]
fn page_paths_and_others() {
    // This service's own paths, and those other hosts' docs and tools use by default.
    for path in [
        "/",
        "/sandbox.html",
        "/sandbox",
        "/proxy.html",
        "/mcp-app-sandbox",
    ] {
        assert_eq!(
            get("chat.sandbox.test", path).status(),
            StatusCode::OK,
            "{path}"
        );
    }
    for path in [
        "/index.html",
        "/relay.js",
        "/sandbox.html/",
        "/sandbox/",
        "/Sandbox",
        "//",
        "/favicon.ico",
        "/admin/metrics",
        "/livez",
    ] {
        let response = get("chat.sandbox.test", path);
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        assert_eq!(
            body(response),
            "404 Not Found: not found: the proxy page is at /, /sandbox.html, /sandbox, /proxy.html, /mcp-app-sandbox\n"
        );
    }
}

#[test]
fn an_operator_names_the_page_paths_of_a_host() {
    let text = two_hosts_with("", "").replace(
        "sandbox = \"chat.sandbox.test\"\n",
        "sandbox = \"chat.sandbox.test\"\npage_paths = [\"/mcp/proxy\", \"/sandbox/\"]\n",
    );
    let service = Service::new(&config(&text));
    let status =
        |host: &str, path: &str| service.handle(&request(Method::GET, host, path)).status();
    assert_eq!(status("chat.sandbox.test", "/mcp/proxy"), StatusCode::OK);
    assert_eq!(status("chat.sandbox.test", "/sandbox/"), StatusCode::OK);
    assert_eq!(
        status("chat.sandbox.test", "/mcp/proxy?csp=%7B%7D"),
        StatusCode::OK
    );
    assert_eq!(
        status("chat.sandbox.test", "/"),
        StatusCode::NOT_FOUND,
        "the list replaces the default"
    );
    assert_eq!(
        status("studio.sandbox.test", "/"),
        StatusCode::OK,
        "another host keeps its own"
    );
}

#[test]
fn other_methods_are_405_with_allow() {
    for method in [
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::OPTIONS,
        Method::PATCH,
        Method::TRACE,
    ] {
        let response = service().handle(&request(method.clone(), "chat.sandbox.test", "/"));
        assert_eq!(
            response.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method}"
        );
        assert_eq!(response.headers()[header::ALLOW], "GET, HEAD");
    }
    let response = service().handle(&request(Method::POST, "chat.sandbox.test", "/nope"));
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[test]
fn the_local_development_config_serves_its_sandbox_and_per_server_labels() {
    let loaded = Config::load(std::path::Path::new("config/local.toml")).unwrap();
    let service = Service::new(&loaded.config);
    for name in ["sandbox.localhost:8081", "0123abcd.sandbox.localhost:8081"] {
        let answer = service.handle(&request(Method::GET, name, "/sandbox.html"));
        assert_eq!(answer.status(), StatusCode::OK, "{name}");
        let csp = answer.headers()[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(
            csp.starts_with(&common::frame_policy(
                "http://localhost:9300",
                &format!("http://{name}")
            )),
            "{csp}"
        );
    }
    // The name without its port, or loopback by number, is not the sandbox.
    for name in ["localhost:8081", "127.0.0.1:8081", "sandbox.localhost"] {
        let answer = service.handle(&request(Method::GET, name, "/sandbox.html"));
        assert_eq!(answer.status(), StatusCode::MISDIRECTED_REQUEST, "{name}");
    }
}
