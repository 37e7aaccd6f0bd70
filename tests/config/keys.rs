//! The keys themselves: an unknown one is an error with the near miss, and docs/configuration.md's table lists exactly the keys each section reads.

use super::*;

#[test]
fn unknown_keys_are_errors_with_the_near_miss() {
    let text = format!(
        "{}per_server_subdomain = true\n",
        host("https://a.example.com", "s.example.net")
    );
    assert_eq!(
        errors(&text),
        [
            r#"c.toml:5: hosts[0].per_server_subdomain is not a known key — did you mean "per_server_subdomains"?"#
        ]
    );
    let text = format!(
        "lisen = \"0.0.0.0:1\"\n{}",
        host("https://a.example.com", "s.example.net")
    );
    assert!(
        errors(&text)
            .contains(&r#"c.toml:1: lisen is not a known key — did you mean "listen"?"#.to_owned())
    );
    let text = format!(
        "{}[limits]\nidle_timeot = \"5s\"\n",
        host("https://a.example.com", "s.example.net")
    );
    assert_eq!(
        errors(&text),
        [r#"c.toml:6: limits.idle_timeot is not a known key — did you mean "idle_timeout"?"#]
    );
    let text = format!(
        "{}[tls]\ncert = \"c\"\nkey = \"k\"\ncertificate = \"x\"\n",
        host("https://a.example.com", "s.example.net")
    );
    assert!(errors(&text)[0].contains("tls.certificate is not a known key"));
    let text = format!(
        "{}colour = \"blue\"\n",
        host("https://a.example.com", "s.example.net")
    );
    assert!(errors(&text)[0].contains(
        "(known keys: origin, sandbox, per_server_subdomains, cache_max_age, view_opt_ins, relay_messages, view_sandbox, view_sandbox_default, view_features, policy_keys, policy_max_lifetime, page_paths, view_policy, csp_reports, opaque_view_storage)"
    ));
}

/// The keys docs/configuration.md's table documents, dotted: `[[hosts]]` `origin` is
/// `hosts.origin`, and a table (`[tls]`, the `limits.` of its keys) is a key of its own.
fn documented_keys() -> std::collections::BTreeSet<String> {
    let docs = std::fs::read_to_string("docs/configuration.md").unwrap();
    let table = docs
        .split("## The file (TOML)")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").nth(1))
        .expect("the key table follows its heading");
    let mut keys = std::collections::BTreeSet::new();
    for row in table.lines().skip(2) {
        let first_cell = row.split('|').nth(1).expect("a table row");
        let names: Vec<&str> = first_cell.split('`').skip(1).step_by(2).collect();
        let (section, names) = match names.split_first() {
            Some((table, rest)) if table.starts_with('[') => {
                (table.trim_matches(['[', ']']).to_owned(), rest)
            }
            _ => (String::new(), names.as_slice()),
        };
        if !section.is_empty() {
            keys.insert(section.clone());
        }
        for name in names {
            let dotted = if section.is_empty() {
                (*name).to_owned()
            } else {
                format!("{section}.{name}")
            };
            // `limits.max_connections` documents `limits` too.
            let mut parent = dotted.as_str();
            while let Some((up, _)) = parent.rsplit_once('.') {
                keys.insert(up.to_owned());
                parent = up;
            }
            keys.insert(dotted);
        }
    }
    keys
}

#[test]
fn the_documented_key_table_lists_exactly_the_keys_the_loader_takes() {
    let known: std::collections::BTreeSet<String> = Config::keys().into_iter().collect();
    let documented = documented_keys();
    let undocumented: Vec<&String> = known.difference(&documented).collect();
    let unknown: Vec<&String> = documented.difference(&known).collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "read but not in docs/configuration.md: {undocumented:?}; documented but not read: {unknown:?}"
    );
}

#[test]
fn a_near_miss_of_every_key_is_spelled_out_in_its_section() {
    for dotted in Config::keys() {
        let (section, name) = dotted.rsplit_once('.').unwrap_or(("", &dotted));
        // One letter changed: the speller offers the key whatever else the file lacks.
        let typo = format!(
            "{}{}",
            &name[..name.len() - 1],
            if name.ends_with('q') { 'x' } else { 'q' }
        );
        // Each section where the loader reads it: `[acme]` only beside `[tls]`.
        let tls = "[tls]\ncert = \"c.pem\"\nkey = \"k.pem\"\n";
        let table = match section {
            "" => String::new(),
            "tls" => tls.to_owned(),
            "tls.extra" | "acme" => {
                format!("{tls}[{}]\n", section.replace("tls.extra", "[tls.extra]"))
            }
            "hosts" => "[[hosts]]\n".to_owned(),
            _ => format!("[{section}]\n"),
        };
        let text = format!("{LISTEN}{table}{typo} = 1\n");
        let hint = format!("did you mean \"{name}\"?");
        let problems = errors(&text);
        assert!(
            problems
                .iter()
                .any(|p| p.contains(&typo) && p.contains(&hint)),
            "{dotted}: {problems:?}"
        );
    }
}
