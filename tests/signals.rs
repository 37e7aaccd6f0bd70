//! The binary under signals and pressure: SIGHUP reloads, SIGTERM drains without losing a
//! request, `/readyz` flips during the drain, and accept errors (EMFILE) back off and recover.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use common::process::{Serving, raw_get, try_get};
use common::two_hosts_with;

fn write_config(dir: &std::path::Path, text: &str) -> String {
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// The admin address from the start-up log.
fn admin_addr(serving: &Serving) -> String {
    serving.wait_for_log("listening")["admin"]
        .as_str()
        .expect("admin address logged")
        .to_owned()
}

fn metric(admin: &str, series: &str) -> f64 {
    let text = raw_get(admin, "admin", "/metrics");
    text.lines()
        .find_map(|l| l.strip_prefix(series).and_then(|v| v.trim().parse().ok()))
        .unwrap_or_else(|| panic!("{series} not in\n{text}"))
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

#[test]
fn sighup_reloads_the_config_and_a_broken_one_keeps_the_old() {
    let dir = tempfile::tempdir().unwrap();
    // Polling off: only the signal may reload.
    let top = "admin_listen = \"127.0.0.1:0\"\nwatch_interval = \"0s\"";
    let config = write_config(dir.path(), &two_hosts_with(top, ""));
    let serving = Serving::start(&config);
    let admin = admin_addr(&serving);
    assert!(raw_get(&serving.addr, "extra.sandbox.test", "/").starts_with("HTTP/1.1 421"));

    let extra =
        "[[hosts]]\norigin = \"https://extra.example.com\"\nsandbox = \"extra.sandbox.test\"";
    // A host whose sandbox shares its site: loaded, with a warning that a reload must log too.
    let same_site =
        "[[hosts]]\norigin = \"https://docs.example.org\"\nsandbox = \"views.example.org\"";
    write_config(
        dir.path(),
        &two_hosts_with(top, &format!("{extra}\n{same_site}")),
    );
    serving.signal("HUP");
    wait_until("the new host", || {
        raw_get(&serving.addr, "extra.sandbox.test", "/").starts_with("HTTP/1.1 200")
    });
    assert_eq!(
        metric(
            &admin,
            "mcp_sandbox_proxy_reloads_total{outcome=\"success\"}"
        ),
        1.0
    );
    assert_eq!(
        serving.wait_for_log("reloaded: new connections use the new config and certificates")["trigger"],
        "SIGHUP"
    );
    let warning =
        serving.wait_for_event("the same-site warning", |e| e["key"] == "hosts[3].sandbox");
    assert!(
        warning["message"]
            .as_str()
            .unwrap()
            .contains("is on the same site as the host https://docs.example.org"),
        "{warning}"
    );

    write_config(
        dir.path(),
        &two_hosts_with(top, &format!("{extra}\nsandbx = \"typo\"")),
    );
    serving.signal("HUP");
    wait_until("the refusal", || {
        metric(
            &admin,
            "mcp_sandbox_proxy_reloads_total{outcome=\"failure\"}",
        ) == 1.0
    });
    let refused =
        serving.wait_for_log("reload refused: the previous config and certificates keep serving");
    assert!(
        refused["reason"]
            .as_str()
            .unwrap()
            .contains("hosts[2].sandbx is not a known key — did you mean \"sandbox\"?"),
        "{refused}"
    );
    assert!(
        raw_get(&serving.addr, "extra.sandbox.test", "/").starts_with("HTTP/1.1 200"),
        "the old config serves"
    );
    assert!(serving.stop().success());
}

#[test]
fn sigterm_during_a_request_loop_loses_no_request_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &two_hosts_with("", "[limits]\nshutdown_grace = \"10s\""),
    );
    let serving = Serving::start(&config);
    let addr = serving.addr.clone();
    // Set just before SIGTERM: from then on no new connection is made, as a load balancer
    // stops sending once the pod is terminating. Every connection made before it, whose
    // request may well be written after the signal, must still be answered in full.
    let signalled = Arc::new(AtomicBool::new(false));
    let served_so_far = Arc::new(AtomicU32::new(0));
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (addr, signalled) = (addr.clone(), signalled.clone());
            let served_so_far = served_so_far.clone();
            std::thread::spawn(move || {
                let (mut served, mut lost) = (0u32, Vec::new());
                // Bounded: until the signal, or 5000 requests.
                for _ in 0..5000 {
                    let Ok(mut stream) = TcpStream::connect(&addr) else {
                        break;
                    };
                    // Read after the connect returned: a connection made while the flag was
                    // still clear was in the accept backlog before SIGTERM was sent.
                    if signalled.load(Ordering::SeqCst) {
                        break;
                    }
                    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                    let sent = write!(
                        stream,
                        "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nConnection: close\r\n\r\n"
                    );
                    let mut answer = String::new();
                    let read = std::io::Read::read_to_string(&mut stream, &mut answer);
                    match (sent, read) {
                        (Ok(()), Ok(_))
                            if answer.starts_with("HTTP/1.1 200")
                                && answer.ends_with("</html>\n") =>
                        {
                            served += 1;
                            served_so_far.fetch_add(1, Ordering::SeqCst);
                        }
                        other => lost.push(format!("{other:?}: {:?}", answer.get(..40))),
                    }
                }
                (served, lost)
            })
        })
        .collect();
    wait_until("the request loop runs", || {
        served_so_far.load(Ordering::SeqCst) >= 20
    });
    // Connections made just before the signal whose requests are written just after it.
    let mut pending: Vec<TcpStream> = (0..8).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    signalled.store(true, Ordering::SeqCst);
    serving.signal("TERM");
    serving.wait_for_log("draining: no new connections, not ready");
    for (i, stream) in pending.iter_mut().enumerate() {
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        write!(
            stream,
            "GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        let read = std::io::Read::read_to_string(stream, &mut answer);
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "pending connection {i} lost its request: {read:?} {:?}",
            answer.get(..40)
        );
    }
    let status = serving.wait();
    let mut total = 0;
    for worker in workers {
        let (served, lost) = worker.join().unwrap();
        assert!(lost.is_empty(), "requests lost in the drain: {lost:?}");
        total += served;
    }
    assert!(total > 0, "the loop ran");
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn readyz_flips_to_not_ready_when_the_drain_starts() {
    let dir = tempfile::tempdir().unwrap();
    let top = "admin_listen = \"127.0.0.1:0\"";
    let config = write_config(
        dir.path(),
        &two_hosts_with(
            top,
            "[limits]\nheader_read_timeout = \"60s\"\nshutdown_grace = \"20s\"",
        ),
    );
    let serving = Serving::start(&config);
    let admin = admin_addr(&serving);
    assert!(raw_get(&admin, "admin", "/readyz").starts_with("HTTP/1.1 200"));
    // A client in the middle of its head keeps the drain going until it leaves (its deadline
    // and the grace are far away): the checks below all run during the drain.
    let mut slow = TcpStream::connect(&serving.addr).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: chat.sand")
        .unwrap();
    // An idle keep-alive connection is closed by the drain.
    let mut idle = TcpStream::connect(&serving.addr).unwrap();
    idle.write_all(b"GET / HTTP/1.1\r\nHost: chat.sandbox.test\r\n\r\n")
        .unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut first = [0u8; 12];
    std::io::Read::read_exact(&mut idle, &mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    serving.signal("TERM");
    // Readiness flips first, then the listener closes: each is waited for, in that order.
    wait_until("not ready", || {
        try_get(&admin, "admin", "/readyz").is_ok_and(|r| r.starts_with("HTTP/1.1 503"))
    });
    wait_until("the public listener to close", || {
        TcpStream::connect(&serving.addr).is_err()
    });
    assert!(
        raw_get(&admin, "admin", "/livez").starts_with("HTTP/1.1 200"),
        "alive while draining (the refusal above is the drain's, not an exit)"
    );
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut idle, &mut rest)
        .expect("the idle connection is closed, not left hanging");
    drop(slow);
    assert!(serving.wait().success());
}

#[test]
fn accept_errors_back_off_and_the_server_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &two_hosts_with("", ""));
    // Few descriptors: the accept loop runs out long before the connection cap.
    let serving = Serving::start_with(&config, Some(40), &[]);
    let held: Vec<TcpStream> = (0..60)
        .filter_map(|_| TcpStream::connect(&serving.addr).ok())
        .collect();
    serving.wait_for_log("accept failed");
    drop(held);
    wait_until("recovery", || {
        try_get(&serving.addr, "chat.sandbox.test", "/")
            .is_ok_and(|r| r.starts_with("HTTP/1.1 200"))
    });
    let failures = serving.log_count("accept failed");
    assert!(
        failures < 200,
        "backed off instead of spinning: {failures} failures logged"
    );
    assert!(serving.stop().success());
}

#[test]
fn the_drain_ends_at_shutdown_grace_even_if_a_client_does_not() {
    let dir = tempfile::tempdir().unwrap();
    // The slow client's own deadline is far away; the grace is what ends the drain.
    let tables = "[limits]\nheader_read_timeout = \"60s\"\nshutdown_grace = \"1s\"";
    let config = write_config(dir.path(), &two_hosts_with("", tables));
    let serving = Serving::start(&config);
    let mut slow = TcpStream::connect(&serving.addr).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: chat.sa").unwrap();
    // Accepted or still in the backlog, the drain serves it; the signal needs no wait.
    serving.signal("TERM");
    let (status, logs) = serving.wait_with_logs();
    assert!(status.success(), "exit 0 after the grace: {status:?}");
    let ran_out = "shutdown grace ran out; closing the remaining connections";
    assert!(
        logs.iter().any(|e| e["message"] == ran_out),
        "the grace, not the client, ended the drain: {logs:#?}"
    );
}

#[test]
fn a_config_naming_a_certificate_that_arrives_later_is_loaded_when_it_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, _) = common::write_cert(dir.path(), "first", common::TWO_HOSTS_NAMES);
    let top = "admin_listen = \"127.0.0.1:0\"\nwatch_interval = \"200ms\"";
    let config = write_config(
        dir.path(),
        &two_hosts_with(top, &format!("[tls]\ncert = {cert:?}\nkey = {key:?}")),
    );
    let serving = Serving::start(&config);
    let admin = admin_addr(&serving);
    // The new config names files that are not there yet: refused, the old one serves.
    let (next_cert, next_key) = (dir.path().join("next.crt"), dir.path().join("next.key"));
    write_config(
        dir.path(),
        &two_hosts_with(
            top,
            &format!("[tls]\ncert = {next_cert:?}\nkey = {next_key:?}"),
        ),
    );
    wait_until("the refusal", || {
        metric(
            &admin,
            "mcp_sandbox_proxy_reloads_total{outcome=\"failure\"}",
        ) >= 1.0
    });
    // When they arrive, the change is seen and loaded.
    common::write_cert(dir.path(), "next", common::TWO_HOSTS_NAMES);
    wait_until("the reload", || {
        metric(
            &admin,
            "mcp_sandbox_proxy_reloads_total{outcome=\"success\"}",
        ) >= 1.0
    });
    let expiry = raw_get(&admin, "admin", "/metrics");
    assert!(
        expiry.contains("next.crt"),
        "the new certificate is served: {expiry}"
    );
    assert!(serving.stop().success());
}

#[test]
fn tenant_files_are_watched_and_a_bad_one_keeps_the_old_config() {
    let dir = tempfile::tempdir().unwrap();
    let tenants = dir.path().join("hosts.d");
    std::fs::create_dir(&tenants).unwrap();
    let tenant = |name: &str| {
        format!(
            "[[hosts]]\norigin = \"https://{name}.example.com\"\nsandbox = \"{name}.sandbox.test\"\n"
        )
    };
    std::fs::write(tenants.join("acme.toml"), tenant("acme")).unwrap();
    let top = "admin_listen = \"127.0.0.1:0\"\nwatch_interval = \"100ms\"\nhosts_dir = \"hosts.d\"";
    let config = write_config(dir.path(), &two_hosts_with(top, ""));
    let serving = Serving::start(&config);
    let admin = admin_addr(&serving);
    assert!(raw_get(&serving.addr, "acme.sandbox.test", "/").starts_with("HTTP/1.1 200"));
    assert!(raw_get(&serving.addr, "globex.sandbox.test", "/").starts_with("HTTP/1.1 421"));

    // A new tenant file is a change like any other.
    std::fs::write(tenants.join("globex.toml"), tenant("globex")).unwrap();
    wait_until("the new tenant", || {
        raw_get(&serving.addr, "globex.sandbox.test", "/").starts_with("HTTP/1.1 200")
    });
    let success = "mcp_sandbox_proxy_reloads_total{outcome=\"success\"}";
    assert_eq!(metric(&admin, success), 1.0);

    // A broken tenant file refuses the whole reload, naming the file and the line: the new
    // tenant beside it is not served, and neither tenant already served is lost.
    let broken = tenants.join("initech.toml");
    std::fs::write(
        &broken,
        "[[hosts]]\norigin = \"https://initech.example.com\"\nsandbox = \"initech.sandbox.test/\"\n",
    )
    .unwrap();
    std::fs::write(tenants.join("umbrella.toml"), tenant("umbrella")).unwrap();
    wait_until("the refusal", || {
        metric(
            &admin,
            "mcp_sandbox_proxy_reloads_total{outcome=\"failure\"}",
        ) >= 1.0
    });
    let refused =
        serving.wait_for_log("reload refused: the previous config and certificates keep serving");
    let reason = refused["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("{}:3: hosts[0].sandbox", broken.display())),
        "{refused}"
    );
    for (name, status) in [("acme", "200"), ("globex", "200"), ("umbrella", "421")] {
        let answer = raw_get(&serving.addr, &format!("{name}.sandbox.test"), "/");
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{name}: {answer}"
        );
    }

    // Fixed, it loads; a removed file takes its tenant away.
    std::fs::remove_file(&broken).unwrap();
    std::fs::remove_file(tenants.join("acme.toml")).unwrap();
    // The two removals may be seen in one poll or in two: wait for both.
    wait_until("the fixed reload", || {
        raw_get(&serving.addr, "umbrella.sandbox.test", "/").starts_with("HTTP/1.1 200")
            && raw_get(&serving.addr, "acme.sandbox.test", "/").starts_with("HTTP/1.1 421")
    });
    assert!(raw_get(&serving.addr, "globex.sandbox.test", "/").starts_with("HTTP/1.1 200"));
    assert!(serving.stop().success());
}

/// Waits (bounded) until a thread of `pid` blocks opening a FIFO that has no writer. Where the
/// kernel does not say where threads wait, a short pause stands in.
fn wait_until_blocked_on_a_fifo(pid: u32) {
    let blocked = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|task| {
                std::fs::read_to_string(task.path().join("wchan"))
                    .is_ok_and(|wchan| wchan.contains("wait_for_partner") || wchan.contains("fifo"))
            })
    };
    let readable = std::fs::read_to_string(format!("/proc/{pid}/wchan"))
        .is_ok_and(|wchan| wchan.trim() != "0");
    if readable {
        wait_until("a thread blocked on the FIFO", blocked);
    } else {
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn a_reload_stuck_reading_its_config_neither_stalls_requests_nor_the_drain() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &two_hosts_with("watch_interval = \"0s\"", ""));
    // One thread serves every connection: a reload that ran there would stall them all.
    let serving = Serving::start_with(&config, None, &[("TOKIO_WORKER_THREADS", "1")]);
    assert!(raw_get(&serving.addr, "chat.sandbox.test", "/").starts_with("HTTP/1.1 200"));

    // The config becomes a FIFO nobody writes to: reading it never finishes.
    std::fs::remove_file(&config).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&config)
        .status()
        .unwrap();
    assert!(made.success());
    serving.signal("HUP");
    wait_until_blocked_on_a_fifo(serving.pid());

    let answer = try_get(&serving.addr, "chat.sandbox.test", "/")
        .expect("a request is answered while the reload is stuck");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let started = Instant::now();
    assert!(serving.stop().success());
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the drain waited for the stuck reload: {:?}",
        started.elapsed()
    );
}
