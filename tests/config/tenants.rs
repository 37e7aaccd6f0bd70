//! A `hosts_dir`: one file per tenant, each named in its own messages, one bad file refusing the whole config.

use super::*;

/// A config folder with `main` as c.toml and each `(name, text)` in its `hosts.d`.
fn tenant_folder(main: &str, tenants: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.toml"), main).unwrap();
    std::fs::create_dir(dir.path().join("hosts.d")).unwrap();
    for (name, text) in tenants {
        std::fs::write(dir.path().join("hosts.d").join(name), text).unwrap();
    }
    dir
}

fn tenant(origin: &str, sandbox: &str) -> String {
    format!("[[hosts]]\norigin = \"{origin}\"\nsandbox = \"{sandbox}\"\n")
}

#[test]
fn a_hosts_dir_adds_every_toml_file_in_it_by_name() {
    let main = format!("{LISTEN}hosts_dir = \"hosts.d\"\n");
    let dir = tenant_folder(
        &main,
        &[
            ("b.toml", &tenant("https://b.example.com", "b.sandbox.test")),
            ("a.toml", &tenant("https://a.example.com", "a.sandbox.test")),
            // Not tenant files: another extension, an editor's temporary copy.
            (
                "c.toml.bak",
                &tenant("https://c.example.com", "c.sandbox.test"),
            ),
            (
                ".d.toml",
                &tenant("https://d.example.com", "d.sandbox.test"),
            ),
        ],
    );
    let loaded = Config::load(&dir.path().join("c.toml")).unwrap();
    let sandboxes: Vec<String> = loaded
        .config
        .hosts
        .iter()
        .map(|h| h.origin.to_string())
        .collect();
    assert_eq!(
        sandboxes,
        ["https://a.example.com", "https://b.example.com"]
    );
}

#[test]
fn a_bad_tenant_file_refuses_the_whole_config_naming_its_file_and_line() {
    let main = format!(
        "{LISTEN}hosts_dir = \"hosts.d\"\n{}",
        &host("https://main.example.com", "main.sandbox.test")[LISTEN.len()..]
    );
    let dir = tenant_folder(
        &main,
        &[
            ("a.toml", &tenant("https://a.example.com", "a.sandbox.test")),
            (
                "b.toml",
                "# tenant b\n[[hosts]]\norigin = \"https://b.example.com/\"\nsandbox = \"b.sandbox.test\"\n",
            ),
            ("c.toml", "listen = \"0.0.0.0:1\"\n"),
            // The same sandbox as the main file's entry.
            (
                "d.toml",
                &tenant("https://d.example.com", "main.sandbox.test"),
            ),
            ("e.toml", "[[hosts]\n"),
        ],
    );
    let folder = dir.path().join("hosts.d");
    let at = |name: &str| folder.join(name).display().to_string();
    let errs: Vec<String> = match Config::load(&dir.path().join("c.toml")) {
        Ok(_) => panic!("a bad tenant file was accepted"),
        Err(e) => e.problems.iter().map(|p| p.to_string()).collect(),
    };
    let main_file = dir.path().join("c.toml").display().to_string();
    assert_eq!(errs.len(), 4, "{errs:#?}");
    assert!(
        errs[0].starts_with(&format!(
            "{}:3: hosts[0].origin \"https://b.example.com/\": an origin has no path",
            at("b.toml")
        )),
        "{errs:#?}"
    );
    assert_eq!(
        errs[1],
        format!(
            "{}:1: listen is not allowed in a tenant file: it holds [[hosts]] entries only, and everything else belongs in the main config",
            at("c.toml")
        )
    );
    assert_eq!(
        errs[2],
        format!(
            "{}:3: hosts[0].sandbox \"main.sandbox.test\" is already the sandbox of hosts[0] in {main_file}",
            at("d.toml")
        )
    );
    assert!(
        errs[3].starts_with(&format!("{}:1: not valid TOML", at("e.toml"))),
        "{errs:#?}"
    );
}

#[test]
fn a_hosts_dir_must_exist_and_some_file_must_hold_a_host() {
    let main = format!("{LISTEN}hosts_dir = \"hosts.d\"\n");
    let missing = tempfile::tempdir().unwrap();
    std::fs::write(missing.path().join("c.toml"), &main).unwrap();
    let errs = Config::load(&missing.path().join("c.toml")).unwrap_err();
    assert_eq!(errs.problems.len(), 1, "one error explains it: {errs}");
    let message = errs.to_string();
    assert!(
        message.contains(":2: hosts_dir cannot read the folder") && message.contains("hosts.d"),
        "{message}"
    );

    let empty = tenant_folder(&main, &[("a.toml", "# nobody yet\n")]);
    let path = empty.path().join("c.toml");
    let message = Config::load(&path).unwrap_err().to_string();
    assert!(
        message.contains(":2: hosts_dir ")
            && message.contains("has no [[hosts]] entry in any *.toml file"),
        "{message}"
    );

    // With a host in the main file, an empty tenant file is only a warning.
    let with_host = format!(
        "{main}{}",
        &host("https://main.example.com", "main.sandbox.test")[LISTEN.len()..]
    );
    let dir = tenant_folder(&with_host, &[("a.toml", "# nobody yet\n")]);
    let loaded = Config::load(&dir.path().join("c.toml")).unwrap();
    let warned: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warned,
        [format!(
            "{}: has no [[hosts]] entry: it adds nothing",
            dir.path().join("hosts.d").join("a.toml").display()
        )]
    );
}

#[cfg(unix)]
#[test]
fn tenant_entries_that_are_not_readable_files_are_named_never_skipped_silently() {
    let main = format!("{LISTEN}hosts_dir = \"hosts.d\"\n");
    let dir = tenant_folder(
        &main,
        &[("a.toml", &tenant("https://a.example.com", "a.sandbox.test"))],
    );
    let folder = dir.path().join("hosts.d");
    // A symlink whose target is gone: the tenant is not served, so the config is refused.
    std::os::unix::fs::symlink(dir.path().join("gone.toml"), folder.join("b.toml")).unwrap();
    // A folder named like a tenant file: a warning, nothing to read.
    std::fs::create_dir(folder.join("c.toml")).unwrap();
    // A name that would break a line of output or of a text log.
    std::fs::write(folder.join("d\nerror: forged.toml"), "not toml [").unwrap();
    let problems = Config::load(&dir.path().join("c.toml"))
        .unwrap_err()
        .problems;
    let shown: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(shown.len(), 2, "{shown:#?}");
    assert!(
        shown[0].starts_with(&format!(
            "{}: cannot read the tenant file:",
            folder.join("b.toml").display()
        )),
        "{shown:#?}"
    );
    assert!(
        shown[1].contains("d\\nerror: forged.toml:1: not valid TOML") && !shown[1].contains('\n'),
        "{shown:#?}"
    );

    std::fs::remove_file(folder.join("b.toml")).unwrap();
    std::fs::remove_file(folder.join("d\nerror: forged.toml")).unwrap();
    let loaded = Config::load(&dir.path().join("c.toml")).unwrap();
    let warned: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        warned,
        [format!(
            "{}: is not a regular file: skipped",
            folder.join("c.toml").display()
        )]
    );
}

#[test]
fn a_hosts_dir_holding_the_main_file_does_not_read_it_twice() {
    let dir = tempfile::tempdir().unwrap();
    let main = format!(
        "{LISTEN}hosts_dir = \".\"\n{}",
        tenant("https://main.example.com", "main.sandbox.test")
    );
    std::fs::write(dir.path().join("c.toml"), main).unwrap();
    std::fs::write(
        dir.path().join("tenant.toml"),
        tenant("https://t.example.com", "t.sandbox.test"),
    )
    .unwrap();
    let loaded = Config::load(&dir.path().join("c.toml")).unwrap();
    assert_eq!(loaded.config.hosts.len(), 2);
}
