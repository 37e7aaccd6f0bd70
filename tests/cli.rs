//! The built binary: `--version`, `check`, `headers`, and `serve` sending what `headers` prints.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::process::{BIN, Serving, raw_get};
use common::{TWO_HOSTS, TWO_HOSTS_NAMES, write_cert, write_cert_valid_for};

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("MCP_SANDBOX_PROXY_CONFIG")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn write_config(dir: &Path, text: &str) -> String {
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn version_names_the_revision() {
    let out = run(&["--version"]);
    assert!(out.status.success());
    let line = text(&out.stdout);
    assert!(
        line.starts_with(&format!(
            "mcp-sandbox-proxy {} (",
            env!("CARGO_PKG_VERSION")
        )),
        "{line}"
    );
}

#[test]
fn relay_prints_the_script_every_page_carries() {
    let out = run(&["relay"]);
    assert!(out.status.success());
    let relay = text(&out.stdout);
    assert!(
        relay.contains("var DOMAIN_LISTS=[\"connectDomains\",") && relay.ends_with("start();})();"),
        "the shared vocabulary first, the start last"
    );
    let config = mcp_sandbox_proxy::Config::parse("c.toml", TWO_HOSTS, Path::new("."))
        .unwrap()
        .config;
    let request = http::Request::get("/")
        .header(http::header::HOST, "chat.sandbox.test")
        .body(())
        .unwrap();
    let page = mcp_sandbox_proxy::Service::new(&config).handle(&request);
    let page = common::page::body(page);
    assert!(
        page.contains(&relay),
        "the page inlines exactly what `relay` prints"
    );
}

#[test]
fn relay_page_config_prints_what_the_default_page_carries() {
    let out = run(&["relay", "--page-config"]);
    assert!(out.status.success());
    let printed = text(&out.stdout);
    let config: serde_json::Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(
        config["hostOrigins"],
        serde_json::json!(["http://localhost:8080"])
    );
    let loaded = mcp_sandbox_proxy::Config::embedded_default().unwrap();
    let request = http::Request::get("/")
        .header(http::header::HOST, "localhost:8081")
        .body(())
        .unwrap();
    let page = common::page::body(mcp_sandbox_proxy::Service::new(&loaded.config).handle(&request));
    let element = format!(
        "<script type=\"application/json\" id=\"sandbox-config\">{}</script>",
        printed.trim_end()
    );
    assert!(page.contains(&element), "the page's own config element");
}

#[test]
fn check_accepts_a_good_file() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, _) = write_cert(dir.path(), "s", TWO_HOSTS_NAMES);
    let config = write_config(
        dir.path(),
        &format!("{TWO_HOSTS}[tls]\ncert = {cert:?}\nkey = {key:?}\n"),
    );
    let out = run(&["check", "--config", &config]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with(&format!("ok: {config} — 2 host(s)")),
        "{}",
        text(&out.stdout)
    );
    // Results on standard output, errors (none here) on standard error: as configuration.md says.
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
}

#[test]
fn check_reads_the_tenant_files_and_names_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let tenants = dir.path().join("hosts.d");
    std::fs::create_dir(&tenants).unwrap();
    let tenant =
        "[[hosts]]\norigin = \"https://acme.example.com\"\nsandbox = \"acme.sandbox.test\"\n";
    std::fs::write(tenants.join("acme.toml"), tenant).unwrap();
    let config = write_config(dir.path(), &format!("hosts_dir = \"hosts.d\"\n{TWO_HOSTS}"));
    let out = run(&["check", "--config", &config]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expected = format!(
        "ok: {config} — 3 host(s) (1 tenant file(s) in {}), listen",
        tenants.display()
    );
    assert!(
        text(&out.stdout).starts_with(&expected),
        "{}",
        text(&out.stdout)
    );

    let bad = tenants.join("globex.toml");
    std::fs::write(
        &bad,
        "[[hosts]]\norigin = \"https://globex.example.com\"\nsandbox = \"acme.sandbox.test\"\n",
    )
    .unwrap();
    let out = run(&["check", "--config", &config]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "error: {}:3: hosts[0].sandbox \"acme.sandbox.test\" is already the sandbox of hosts[0] in {}",
            bad.display(),
            tenants.join("acme.toml").display()
        )),
        "{stderr}"
    );
}

#[test]
fn check_refuses_a_bad_file_with_every_reason() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "listen = \"0.0.0.0:1\"\n[[hosts]]\norigin = \"https://a.example.com/\"\nsandbox = \"s.example.net\"\nextra = true\n",
    );
    let out = run(&["check", "--config", &config]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("error: {config}:3: hosts[0].origin")),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "error: {config}:5: hosts[0].extra is not a known key"
        )),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn check_refuses_a_key_that_does_not_match_its_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, _, _) = write_cert(dir.path(), "one", &["chat.sandbox.test"]);
    let (_, other_key, _) = write_cert(dir.path(), "two", &["chat.sandbox.test"]);
    let config = write_config(
        dir.path(),
        &format!("{TWO_HOSTS}[tls]\ncert = {cert:?}\nkey = {other_key:?}\n"),
    );
    let out = run(&["check", "--config", &config]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("two.key: the key does not match the certificate"),
        "{stderr}"
    );
    let missing = write_config(
        dir.path(),
        &format!("{TWO_HOSTS}[tls]\ncert = \"nope.crt\"\nkey = {other_key:?}\n"),
    );
    let out = run(&["check", "--config", &missing]);
    assert!(
        text(&out.stderr).contains("nope.crt: cannot read"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn headers_prints_the_response_head() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), TWO_HOSTS);
    let out = run(&[
        "headers",
        "--config",
        &config,
        "--sandbox",
        "chat.sandbox.test",
        "--csp",
        r#"{"connectDomains":["https://api.example.com","'unsafe-eval'"]}"#,
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("HTTP/1.1 200 OK\n"), "{stdout}");
    assert!(stdout.contains(
        "content-security-policy: frame-ancestors https://chat.example.com; sandbox allow-forms allow-modals allow-pointer-lock allow-same-origin allow-scripts; report-uri https://chat.sandbox.test/csp-report?from=page, default-src 'none'; "
    ));
    assert!(stdout.contains("; report-uri https://chat.sandbox.test/csp-report?from=view\n"));
    assert!(stdout.contains("connect-src 'self' https://api.example.com;"));
    assert!(!stdout.contains("unsafe-eval"));
    let out = run(&["headers", "--config", &config, "--sandbox", "nope.test"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).starts_with("HTTP/1.1 421 Misdirected Request\n"));
}

/// The head of a response, lower-case names, without what hyper adds per connection on the
/// wire (`date`, and the `connection: close` that answers ours).
fn head_lines(head: &str) -> Vec<String> {
    head.lines()
        .take_while(|line| !line.is_empty())
        .map(|line| line.trim_end_matches('\r').to_owned())
        .filter(|line| {
            let lower = line.to_ascii_lowercase();
            !lower.starts_with("date:") && !lower.starts_with("connection:")
        })
        .map(|line| match line.split_once(": ") {
            Some((name, value)) => format!("{}: {value}", name.to_ascii_lowercase()),
            None => line,
        })
        .collect()
}

#[test]
fn serve_sends_exactly_what_headers_prints() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), TWO_HOSTS);
    let serving = Serving::start(&config);
    let csp = r#"{"resourceDomains":["https://cdn.example.com","data:"],"frameDomains":["https://www.youtube.com"]}"#;
    for (host, csp) in [
        ("chat.sandbox.test", Some(csp)),
        ("x9.studio.sandbox.test", None),
        ("nope.test", Some(csp)),
    ] {
        let mut args = vec!["headers", "--config", &config, "--sandbox", host];
        let mut path = "/".to_owned();
        if let Some(csp) = csp {
            args.extend(["--csp", csp]);
            path = format!(
                "/?csp={}",
                url::form_urlencoded::byte_serialize(csp.as_bytes()).collect::<String>()
            );
        }
        let printed = text(&run(&args).stdout);
        let sent = raw_get(&serving.addr, host, &path);
        assert_eq!(head_lines(&sent), head_lines(&printed), "{host}");
    }
    assert!(serving.stop().success(), "SIGTERM is a clean exit");
}

#[test]
fn check_requires_every_sandbox_name_to_be_covered() {
    let dir = tempfile::tempdir().unwrap();
    // studio serves per-server subdomains: its own name is not enough without the wildcard.
    let (cert, key, _) = write_cert(
        dir.path(),
        "s",
        &["chat.sandbox.test", "studio.sandbox.test"],
    );
    let config = write_config(
        dir.path(),
        &format!("{TWO_HOSTS}[tls]\ncert = {cert:?}\nkey = {key:?}\n"),
    );
    let out = run(&["check", "--config", &config]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("error: hosts[1].sandbox: no certificate covers \"*.studio.sandbox.test\" (per_server_subdomains needs a wildcard certificate)"),
        "{stderr}"
    );
    // A second certificate, chosen by SNI, completes the cover.
    let (wild, wild_key, _) = write_cert(dir.path(), "w", &["*.studio.sandbox.test"]);
    let config = write_config(
        dir.path(),
        &format!(
            "{TWO_HOSTS}[tls]\ncert = {cert:?}\nkey = {key:?}\n[[tls.extra]]\ncert = {wild:?}\nkey = {wild_key:?}\n"
        ),
    );
    let out = run(&["check", "--config", &config]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn check_warns_on_expiry_within_21_days_and_refuses_an_expired_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let check = |stem: &str, days: i64| {
        let (cert, key, _) = write_cert_valid_for(dir.path(), stem, TWO_HOSTS_NAMES, days);
        let config = write_config(
            dir.path(),
            &format!("{TWO_HOSTS}[tls]\ncert = {cert:?}\nkey = {key:?}\n"),
        );
        run(&["check", "--config", &config])
    };
    let soon = check("soon", 10);
    assert!(soon.status.success(), "{}", text(&soon.stderr));
    let stdout = text(&soon.stdout);
    // Whole days, rounded either way by when the certificate was made.
    let in_days =
        ["9 day(s)", "10 day(s)"].map(|d| format!("soon.crt: the certificate expires in {d}"));
    assert!(in_days.iter().any(|line| stdout.contains(line)), "{stdout}");
    let later = check("later", 30);
    assert!(later.status.success());
    assert!(
        !text(&later.stdout).contains("warning"),
        "{}",
        text(&later.stdout)
    );
    let old = check("old", -3);
    assert_eq!(old.status.code(), Some(1));
    assert!(
        text(&old.stderr).contains("old.crt: the certificate expired 3 day(s) ago"),
        "{}",
        text(&old.stderr)
    );
}

#[test]
fn check_and_headers_show_a_host_s_view_opt_ins() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "listen = \"127.0.0.1:8443\"\n[[hosts]]\norigin = \"https://chat.example.com\"\nsandbox = \"chat.sandbox.test\"\n\
         view_opt_ins = [\"worker-blob\", \"wasm-unsafe-eval\"]\n\
         [[hosts]]\norigin = \"https://other.example.com\"\nsandbox = \"other.sandbox.test\"\n\
         [[hosts]]\norigin = \"https://wire.example.com\"\nsandbox = \"wire.sandbox.test\"\nrelay_messages = \"any\"\n\
         view_sandbox = [\"allow-scripts\", \"allow-popups\"]\n",
    );
    let out = run(&["check", "--config", &config]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains(
            "sandbox: views of https://wire.example.com get at most \"allow-popups allow-scripts\" (view_sandbox)\n"
        ),
        "{}",
        text(&out.stdout)
    );
    let lines: Vec<String> = text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("opt-in:"))
        .map(str::to_owned)
        .collect();
    assert_eq!(
        lines,
        [
            "opt-in: views of https://chat.example.com also get worker-blob (worker-src 'self' blob:), \
          wasm-unsafe-eval ('wasm-unsafe-eval' in script-src)",
            "opt-in: views of https://wire.example.com exchange any message with the host, not only JSON-RPC (relay_messages = \"any\")"
        ]
    );
    let csp = |sandbox: &str| {
        let out = run(&["headers", "--config", &config, "--sandbox", sandbox]);
        text(&out.stdout)
            .lines()
            .find_map(|l| {
                l.strip_prefix("content-security-policy: ")
                    .map(str::to_owned)
            })
            .unwrap()
    };
    let with = csp("chat.sandbox.test");
    assert!(
        with.contains("script-src 'self' 'unsafe-inline' 'wasm-unsafe-eval';"),
        "{with}"
    );
    assert!(with.contains("worker-src 'self' blob:;"), "{with}");
    let without = csp("other.sandbox.test");
    assert!(
        !without.contains("wasm") && !without.contains("worker-src"),
        "{without}"
    );
}

#[test]
fn headers_takes_the_embedder_a_pattern_host_needs() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        "listen = \"127.0.0.1:8443\"\n[[hosts]]\norigin = \"https://*.preview.example.com\"\n\
         sandbox = \"preview.sandbox.test\"\n",
    );
    let base = [
        "headers",
        "--config",
        &config,
        "--sandbox",
        "preview.sandbox.test",
    ];
    let without = run(&base);
    assert!(!without.status.success());
    assert!(
        text(&without.stdout).starts_with("HTTP/1.1 400"),
        "{}",
        text(&without.stdout)
    );
    let with = run(&[
        &base[..],
        &["--embedder", "https://pr-7.preview.example.com"],
    ]
    .concat());
    assert!(with.status.success(), "{}", text(&with.stdout));
    assert!(
        text(&with.stdout).contains(": frame-ancestors https://pr-7.preview.example.com; sandbox "),
        "{}",
        text(&with.stdout)
    );
}

/// A config whose host `chat.sandbox.test` signs with the one key `key`, then `more`.
fn write_signing_config(dir: &Path, key: &str, more: &str) -> String {
    let host =
        "[[hosts]]\norigin = \"https://chat.example.com\"\nsandbox = \"chat.sandbox.test\"\n";
    let text = format!("listen = \"127.0.0.1:8443\"\n{host}policy_keys = [\"{key}\"]\n{more}");
    write_config(dir, &text)
}

#[test]
fn headers_signs_and_verifies_a_host_s_policy_and_check_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let key = "0f".repeat(32);
    let other =
        "[[hosts]]\norigin = \"https://other.example.com\"\nsandbox = \"other.sandbox.test\"\n";
    let config = write_signing_config(dir.path(), &key, other);
    let out = run(&["check", "--config", &config]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("signed: views of https://chat.example.com get more than the spec's default policy only from a URL the host signed (1 key(s), policy_keys)\n"),
        "{stdout}"
    );
    assert!(!stdout.contains(&key[..8]), "a key is never shown");
    assert!(!stdout.contains("other.example.com get more"), "{stdout}");

    let csp = r#"{"connectDomains":["https://api.example.com"]}"#;
    let headers = |more: &[&str]| {
        let mut args = vec!["headers", "--config", &config];
        args.extend_from_slice(more);
        run(&args)
    };
    let signed = headers(&["--sandbox", "chat.sandbox.test", "--csp", csp, "--sign"]);
    assert!(signed.status.success(), "{}", text(&signed.stderr));
    let stdout = text(&signed.stdout);
    let url = stdout
        .lines()
        .find_map(|l| l.strip_prefix("url: "))
        .expect("the signed URL")
        .to_owned();
    assert!(
        url.starts_with("http://chat.sandbox.test/sandbox.html?csp="),
        "{url}"
    );
    assert!(
        stdout.contains("https://api.example.com"),
        "the policy is served: {stdout}"
    );
    let left: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("policy: signed, valid for "))
        .and_then(|l| l.strip_suffix(" s more"))
        .and_then(|n| n.parse().ok())
        .expect("the signature's time left");
    assert!(
        (590..=600).contains(&left),
        "--expires-in is 600 by default: {left}"
    );

    // The URL verifies as a host developer pastes it; a changed one does not, and says why.
    let verified = headers(&["--url", &url]);
    assert!(verified.status.success(), "{}", text(&verified.stderr));
    assert!(text(&verified.stdout).contains("policy: signed"));
    let tampered = url.replace("api.example.com", "evil.example.com");
    let refused = headers(&["--url", &tampered]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        !text(&refused.stdout).contains("evil.example.com"),
        "the default policy"
    );
    assert!(
        text(&refused.stderr).contains(
            "the page gets the spec's default policy, not its ?csp=: the signature does not match"
        ),
        "{}",
        text(&refused.stderr)
    );
    let unsigned = headers(&["--sandbox", "chat.sandbox.test", "--csp", csp]);
    assert_eq!(unsigned.status.code(), Some(1));
    assert!(text(&unsigned.stderr).contains("no ?signature="));

    // A host entry without keys cannot sign, and says so.
    let other = headers(&["--sandbox", "other.sandbox.test", "--csp", csp, "--sign"]);
    assert_eq!(other.status.code(), Some(1));
    assert!(text(&other.stderr).contains("does not sign its policies (no policy_keys)"));
}

#[test]
fn a_policy_key_from_the_environment_signs_and_is_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let key = "5a".repeat(32);
    let config = write_signing_config(dir.path(), "env:MCP_SANDBOX_PROXY_TEST_POLICY_KEY", "");
    let with_key = |args: &[&str]| {
        Command::new(BIN)
            .args(args)
            .env_remove("MCP_SANDBOX_PROXY_CONFIG")
            .env("MCP_SANDBOX_PROXY_TEST_POLICY_KEY", &key)
            .output()
            .unwrap()
    };
    let csp = r#"{"connectDomains":["https://api.example.com"]}"#;
    let signed = with_key(&[
        "headers",
        "--config",
        &config,
        "--sandbox",
        "chat.sandbox.test",
        "--csp",
        csp,
        "--sign",
    ]);
    assert!(signed.status.success(), "{}", text(&signed.stderr));
    assert!(text(&signed.stdout).contains("policy: signed"));
    assert!(
        !text(&signed.stdout).contains(&key[..16]),
        "a key is never shown"
    );
    // Without the variable the config does not load, and says which variable is missing.
    let missing = run(&["check", "--config", &config]);
    assert_eq!(missing.status.code(), Some(1));
    let stderr = text(&missing.stderr);
    assert!(
        stderr.contains("hosts[0].policy_keys[0] the environment variable MCP_SANDBOX_PROXY_TEST_POLICY_KEY is not set"),
        "{stderr}"
    );
}

#[test]
fn check_shows_a_host_s_default_view_sandbox() {
    let stdout = check_one_host(
        "https://chat.example.com",
        "view_sandbox_default = [\"allow-scripts\", \"allow-forms\"]",
    );
    assert!(
        stdout.contains(
            "sandbox: views of https://chat.example.com get \"allow-forms allow-scripts\" when the host asks for no tokens (view_sandbox_default)\n"
        ),
        "{stdout}"
    );
}

#[test]
fn check_names_a_host_that_writes_its_views_policies() {
    let stdout = check_one_host("http://localhost:6274", "view_policy = \"host\"");
    assert!(
        stdout.contains("opt-in: views of http://localhost:6274 run under the policy the host writes into their HTML; the page's header holds only frame-ancestors, sandbox and object-src 'none' (view_policy = \"host\")\n"),
        "{stdout}"
    );
}

/// `check`'s standard output for a config of one host, `origin` on `chat.sandbox.test`, with
/// `keys` added to its entry; the check must pass.
fn check_one_host(origin: &str, keys: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "listen = \"127.0.0.1:8443\"\n[[hosts]]\norigin = \"{origin}\"\nsandbox = \"chat.sandbox.test\"\n{keys}\n"
    );
    let out = run(&["check", "--config", &write_config(dir.path(), &config)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn label_prints_the_label_and_the_origin_the_service_serves() {
    let dir = tempfile::tempdir().unwrap();
    let config_path = write_config(dir.path(), TWO_HOSTS);
    let service = mcp_sandbox_proxy::Service::new(&common::config(TWO_HOSTS));
    for server in [
        "https://mcp.example.com/mcp",
        "stdio:npx -y @acme/files-mcp",
        "ünïcode ☃",
        "",
    ] {
        let out = run(&["label", "--config", &config_path, "--", server]);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let printed = text(&out.stdout);
        let mut lines = printed.lines();
        let label = lines
            .next()
            .and_then(|l| l.strip_prefix("label: "))
            .unwrap();
        let origin = lines
            .next()
            .and_then(|l| l.strip_prefix("origin: "))
            .unwrap();
        assert!(lines.next().is_none(), "{printed}");
        assert!(
            label.len() == 32
                && label
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert_eq!(origin, format!("https://{label}.studio.sandbox.test"));
        // The service serves that origin's page, and names it exactly in the page's own policy.
        let request = http::Request::get("/")
            .header(http::header::HOST, origin.trim_start_matches("https://"))
            .body(())
            .unwrap();
        let page = service.handle(&request);
        assert_eq!(page.status(), 200, "{origin}");
        let csp = page.headers()["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains(&format!("report-uri {origin}/csp-report?from=page")),
            "{csp}"
        );
    }
    let named = run(&[
        "label",
        "--config",
        &config_path,
        "--sandbox",
        "STUDIO.sandbox.test",
        "x",
    ]);
    assert!(named.status.success(), "{}", text(&named.stderr));
}

#[test]
fn label_says_why_a_name_gives_no_label() {
    let dir = tempfile::tempdir().unwrap();
    let config_path = write_config(dir.path(), TWO_HOSTS);
    for (sandbox, why) in [
        (
            "chat.sandbox.test",
            "the host entry serving \"chat.sandbox.test\" gives servers no labels (per_server_subdomains = false)",
        ),
        (
            "other.sandbox.test",
            "no host entry serves \"other.sandbox.test\"",
        ),
    ] {
        let out = run(&["label", "--config", &config_path, "--sandbox", sandbox, "x"]);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(text(&out.stderr), format!("error: {why}\n"));
    }
    let both = TWO_HOSTS.replace(
        "sandbox = \"chat.sandbox.test\"",
        "sandbox = \"chat.sandbox.test\"\nper_server_subdomains = true",
    );
    let config_path = write_config(dir.path(), &both);
    let out = run(&["label", "--config", &config_path, "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "error: 2 host entries give servers labels: name one with --sandbox (chat.sandbox.test, studio.sandbox.test)\n"
    );
}

#[test]
fn headers_url_asks_for_the_urls_own_path() {
    let dir = tempfile::tempdir().unwrap();
    let text = TWO_HOSTS.replace(
        "sandbox = \"chat.sandbox.test\"\n",
        "sandbox = \"chat.sandbox.test\"\npage_paths = [\"/api/mcp/sandbox\"]\n",
    );
    let config_path = write_config(dir.path(), &text);
    let ask = |url: &str| run(&["headers", "--config", &config_path, "--url", url]);
    let page = ask(
        "https://chat.sandbox.test/api/mcp/sandbox?parentOrigin=https%3A%2F%2Fchat.example.com&strictCsp=1",
    );
    assert!(page.status.success(), "{}", text_of(&page));
    let printed = String::from_utf8_lossy(&page.stdout);
    assert!(printed.starts_with("HTTP/1.1 200 OK\n"), "{printed}");
    assert!(
        printed.contains("frame-ancestors https://chat.example.com;"),
        "{printed}"
    );
    let elsewhere = ask("https://chat.sandbox.test/sandbox.html");
    assert_eq!(elsewhere.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&elsewhere.stdout).starts_with("HTTP/1.1 404 Not Found\n"));
}

fn text_of(out: &Output) -> String {
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}
