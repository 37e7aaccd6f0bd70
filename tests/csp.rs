//! The view policy against the contract: `tests/data/csp-sources.tsv`, the template, and
//! hostile declarations.

use mcp_sandbox_proxy::{
    DEFAULT_POLICY, DeclarationError, Declared, DomainList, DropReason, HostSource, OptIn, OptIns,
    PageQuery, QueryError, ViewPolicy, policy_for_query,
};

const TABLE: &str = include_str!("data/csp-sources.tsv");

fn table() -> Vec<(&'static str, bool, &'static str)> {
    TABLE
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty() || line.starts_with('\t'))
        .map(|line| {
            let mut fields = line.split('\t');
            let entry = fields.next().unwrap_or_default();
            let verdict = fields.next().unwrap_or_default();
            let why = fields.next().unwrap_or_default();
            assert!(matches!(verdict, "kept" | "dropped"), "bad line {line:?}");
            (entry, verdict == "kept", why)
        })
        .collect()
}

#[test]
fn every_entry_of_the_contract_table_gets_its_verdict() {
    let rows = table();
    assert!(
        rows.len() >= 40,
        "the table did not load: {} rows",
        rows.len()
    );
    assert!(
        rows.iter().any(|(entry, ..)| entry.is_empty()),
        "the empty-entry row is read too"
    );
    for (entry, kept, why) in rows {
        let parsed = entry.parse::<HostSource>();
        assert_eq!(parsed.is_ok(), kept, "{entry:?} ({why}): got {parsed:?}");
        if let Ok(source) = parsed {
            assert_eq!(
                source.as_str(),
                entry.to_ascii_lowercase(),
                "kept entries are only lower-cased"
            );
        }
    }
}

#[test]
fn dropped_entries_never_reach_the_header() {
    for (entry, kept, why) in table() {
        for list in DomainList::ALL {
            let declared = Declared::from_lists(vec![(list, vec![entry.to_owned()])]);
            let policy = ViewPolicy::from_declared(&declared, &OptIns::default());
            if kept {
                assert!(policy.dropped.is_empty());
                assert!(
                    policy.header().contains(&entry.to_ascii_lowercase()),
                    "{entry:?}"
                );
            } else {
                assert_eq!(policy.dropped.len(), 1, "{entry:?} ({why})");
                assert_eq!(
                    policy.header(),
                    ViewPolicy::from_declared(
                        &Declared::from_lists(vec![(list, vec![])]),
                        &OptIns::default()
                    )
                    .header(),
                    "{entry:?} ({why}) changed the header"
                );
            }
        }
    }
}

#[test]
fn drop_reasons_say_what_was_wrong() {
    let cases = [
        ("'unsafe-eval'", DropReason::Quoted),
        ("*", DropReason::WildcardAlone),
        ("https:", DropReason::SchemeOnly),
        ("data:", DropReason::SchemeOnly),
        ("https://a.com; script-src *", DropReason::Semicolon),
        ("javascript:alert(1)", DropReason::NotHostSource),
        (" https://a.com", DropReason::Whitespace),
        ("https://a.com\n", DropReason::Whitespace),
        ("https://a.com\u{0}", DropReason::Control),
        ("https://ехаmple.com", DropReason::NonAscii),
        ("http://example.com", DropReason::PlainOffLoopback),
        ("https://example.com/%zz", DropReason::BadPath),
        ("https://example.com/a'b", DropReason::Quoted),
    ];
    for (entry, reason) in cases {
        assert_eq!(entry.parse::<HostSource>(), Err(reason), "{entry:?}");
    }
    let long = format!("https://{}.com", "a".repeat(300));
    assert_eq!(long.parse::<HostSource>(), Err(DropReason::TooLong));
}

#[test]
fn template_is_the_spec_template() {
    let declared = Declared::from_json(
        r#"{"connectDomains":["https://api.example.com","wss://rt.example.com"],
            "resourceDomains":["https://cdn.example.com"],
            "frameDomains":["https://www.youtube.com"],
            "baseUriDomains":["https://cdn.example.com"]}"#,
    )
    .unwrap();
    let policy = ViewPolicy::from_declared(&declared, &OptIns::default());
    assert_eq!(
        policy.header(),
        "default-src 'none'; \
         script-src 'self' 'unsafe-inline' https://cdn.example.com; \
         style-src 'self' 'unsafe-inline' https://cdn.example.com; \
         connect-src 'self' https://api.example.com wss://rt.example.com; \
         img-src 'self' data: https://cdn.example.com; \
         font-src 'self' https://cdn.example.com; \
         media-src 'self' data: https://cdn.example.com; \
         frame-src https://www.youtube.com; \
         object-src 'none'; \
         base-uri https://cdn.example.com"
    );
}

#[test]
fn empty_lists_use_the_template_defaults() {
    let policy = ViewPolicy::from_declared(&Declared::from_json("{}").unwrap(), &OptIns::default());
    assert_eq!(
        policy.header(),
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
         connect-src 'self'; img-src 'self' data:; font-src 'self'; media-src 'self' data:; \
         frame-src 'none'; object-src 'none'; base-uri 'self'"
    );
}

#[test]
fn no_csp_parameter_is_the_spec_default() {
    for query in ["", "x=1", "cspx=%7B%7D"] {
        let policy = policy_for_query(query, 16384, &OptIns::default()).unwrap();
        assert_eq!(policy.header(), DEFAULT_POLICY, "{query:?}");
        assert!(policy.domains.is_none());
    }
}

#[test]
fn output_is_sorted_and_deduplicated() {
    let a = Declared::from_json(
        r#"{"connectDomains":["https://b.example","https://a.example","HTTPS://B.EXAMPLE"]}"#,
    )
    .unwrap();
    let b = Declared::from_json(r#"{"connectDomains":["https://a.example","https://b.example"]}"#)
        .unwrap();
    let (a, b) = (
        ViewPolicy::from_declared(&a, &OptIns::default()),
        ViewPolicy::from_declared(&b, &OptIns::default()),
    );
    assert_eq!(a.header(), b.header());
    assert!(
        a.header()
            .contains("connect-src 'self' https://a.example https://b.example;")
    );
}

#[test]
fn ten_thousand_entries_give_a_bounded_deterministic_policy() {
    let mut entries: Vec<String> = (0..10_000)
        .map(|i| format!("https://h{}.example.com", i % 100))
        .collect();
    entries.extend((0..1000).map(|_| "'unsafe-eval'".to_owned()));
    let declared = Declared::from_lists(vec![(DomainList::Connect, entries.clone())]);
    let first = ViewPolicy::from_declared(&declared, &OptIns::default());
    entries.reverse();
    let second = ViewPolicy::from_declared(
        &Declared::from_lists(vec![(DomainList::Connect, entries)]),
        &OptIns::default(),
    );
    assert_eq!(first.header(), second.header());
    assert_eq!(
        first.header().matches("https://h").count(),
        100,
        "duplicates removed"
    );
    assert_eq!(first.dropped.len(), 1000);
    assert!(!first.header().contains("unsafe-eval"));
}

#[test]
fn malformed_queries_say_exactly_what_was_wrong() {
    let q = |json: &str| {
        format!(
            "csp={}",
            url::form_urlencoded::byte_serialize(json.as_bytes()).collect::<String>()
        )
    };
    let cases: Vec<(String, DeclarationError)> = vec![
        (
            q("{"),
            DeclarationError::Json("EOF while parsing an object at line 1 column 1".into()),
        ),
        (q("[]"), DeclarationError::NotAnObject("an array")),
        (
            q(r#"{"connectDomains":"https://a.com"}"#),
            DeclarationError::NotAnArray {
                key: "connectDomains",
                found: "a string",
            },
        ),
        (
            q(r#"{"connect_domains":"https://a.com"}"#),
            DeclarationError::NotAnArray {
                key: "connect_domains",
                found: "a string",
            },
        ),
        (
            q(r#"{"frameDomains":["https://a.com",7]}"#),
            DeclarationError::NotAString {
                key: "frameDomains",
                index: 1,
                found: "a number",
            },
        ),
    ];
    for (query, want) in cases {
        assert_eq!(
            policy_for_query(&query, 16384, &OptIns::default()),
            Err(QueryError::Declaration(want)),
            "{query}"
        );
    }
    let huge = format!("csp={}", "a".repeat(1 << 20));
    assert_eq!(
        policy_for_query(&huge, 16384, &OptIns::default()),
        Err(QueryError::TooLong {
            len: huge.len(),
            limit: 16384
        })
    );
    assert_eq!(
        QueryError::TooLong {
            len: 20000,
            limit: 16384
        }
        .to_string(),
        "the query is 20000 bytes; the limit is 16384 (limits.max_query_bytes)"
    );
}

#[test]
fn every_parameter_the_service_reads_counts_once() {
    for name in ["csp", "expires", "signature", "embedder", "upgrade"] {
        for query in [
            format!("{name}=1&{name}=1"),
            format!("{name}=&x=1&{name}=2"),
            format!("x=1&{name}&%{:02X}{}=1", name.as_bytes()[0], &name[1..]),
        ] {
            assert_eq!(
                PageQuery::parse(&query, 16384),
                Err(QueryError::Repeated(name)),
                "{query}"
            );
        }
        let once = PageQuery::parse(&format!("{name}=1&{name}x=2&x{name}=3"), 16384);
        assert!(once.is_ok(), "{name}: {once:?}");
    }
    assert_eq!(
        QueryError::Repeated("embedder").to_string(),
        "the query has more than one embedder parameter"
    );
    // Parameters the service does not read are the host's, repeated or not.
    assert_eq!(
        PageQuery::parse("v=1&v=2&theme=a&theme=b", 16384),
        Ok(PageQuery::default())
    );
}

#[test]
fn null_lists_are_absent_and_unknown_keys_ignored() {
    let policy = policy_for_query(
        "csp=%7B%22connectDomains%22%3Anull%2C%22future%22%3A%5B1%5D%7D",
        16384,
        &OptIns::default(),
    )
    .unwrap();
    assert!(policy.header().contains("connect-src 'self';"));
}

#[test]
fn apps_sdk_keys_are_read_where_the_spec_key_is_absent() {
    let policy = |json: &str| {
        let query = format!(
            "csp={}",
            url::form_urlencoded::byte_serialize(json.as_bytes()).collect::<String>()
        );
        policy_for_query(&query, 16384, &OptIns::default())
            .unwrap()
            .header()
            .to_owned()
    };
    let apps = policy(
        r#"{"connect_domains":["https://api.example.com"],"resource_domains":["https://cdn.example.com"],"frame_domains":["https://player.example.com"],"redirect_domains":["https://shop.example.com"]}"#,
    );
    assert_eq!(
        apps,
        policy(
            r#"{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"],"frameDomains":["https://player.example.com"]}"#
        )
    );
    assert!(!apps.contains("shop.example.com"), "{apps}");
    // The spec's key wins, even when empty; null counts as absent.
    let both = policy(
        r#"{"connectDomains":[],"connect_domains":["https://api.example.com"],"frameDomains":null,"frame_domains":["https://player.example.com"]}"#,
    );
    assert!(both.contains("connect-src 'self';"), "{both}");
    assert!(
        both.contains("frame-src https://player.example.com;"),
        "{both}"
    );
}

#[test]
fn a_lone_surrogate_drops_its_entry_not_the_declaration() {
    let cases = [
        (r"\ud800", "\u{fffd}"),
        (r"\udfff", "\u{fffd}"),
        (r"x\ud83dy", "x\u{fffd}y"),
    ];
    for (lone, read_as) in cases {
        let json = format!(r#"{{"connectDomains":["{lone}","https://ok.example.com"]}}"#);
        let policy = ViewPolicy::from_declared(
            &Declared::from_json(&json).expect(&json),
            &OptIns::default(),
        );
        assert!(
            policy
                .header()
                .contains("connect-src 'self' https://ok.example.com;"),
            "{json}: {}",
            policy.header()
        );
        assert_eq!(policy.dropped.len(), 1, "{json}");
        assert_eq!(policy.dropped[0].entry, read_as, "{json}");
    }
    // A pair is one character; an escaped backslash is not an escape.
    let pair = Declared::from_json(r#"{"connectDomains":["\ud83d\ude00"]}"#).unwrap();
    assert_eq!(
        ViewPolicy::from_declared(&pair, &OptIns::default()).dropped[0].entry,
        "\u{1f600}"
    );
    let text = Declared::from_json(r#"{"connectDomains":["\\ud800"]}"#).unwrap();
    assert_eq!(
        ViewPolicy::from_declared(&text, &OptIns::default()).dropped[0].entry,
        r"\ud800"
    );
}

#[test]
fn each_opt_in_adds_exactly_its_sources_and_nothing_without_one() {
    let declared =
        Declared::from_json(r#"{"resourceDomains":["https://cdn.example.com"]}"#).unwrap();
    let all = OptIns::new(OptIn::ALL);
    assert_eq!(
        ViewPolicy::from_declared(&declared, &all).header(),
        "default-src 'none'; \
         script-src 'self' 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval' data: https://cdn.example.com; \
         style-src 'self' 'unsafe-inline' https://cdn.example.com; \
         connect-src 'self'; \
         img-src 'self' data: blob: https://cdn.example.com; \
         font-src 'self' https://cdn.example.com; \
         media-src 'self' data: blob: https://cdn.example.com; \
         worker-src 'self' blob: https://cdn.example.com; \
         frame-src 'none'; object-src 'none'; base-uri 'self'"
    );
    assert_eq!(
        policy_for_query("", 16384, &all).unwrap().header(),
        "default-src 'none'; script-src 'self' 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval' data:; \
         style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; \
         media-src 'self' data: blob:; worker-src 'self' blob:; connect-src 'none'; \
         object-src 'none'; frame-src 'none'; base-uri 'self'"
    );
    // One at a time: each adds its own words only.
    let plain = ViewPolicy::from_declared(&declared, &OptIns::default());
    for opt_in in OptIn::ALL {
        let one = ViewPolicy::from_declared(&declared, &OptIns::new([opt_in]));
        let added: Vec<&str> = one
            .header()
            .split(' ')
            .filter(|w| !plain.header().split(' ').any(|p| p == *w))
            .collect();
        let expected: &[&str] = match opt_in {
            OptIn::WorkerBlob => &["worker-src", "blob:"],
            OptIn::BlobMedia => &["blob:", "blob:"],
            OptIn::WasmUnsafeEval => &["'wasm-unsafe-eval'"],
            OptIn::UnsafeEval => &["'unsafe-eval'"],
            // `data:` is in img-src and media-src already: it is new in script-src only.
            OptIn::ScriptData => &[],
        };
        assert_eq!(added, expected, "{}", opt_in.name());
    }
    let script_src = |opt_ins: &OptIns| {
        let policy = ViewPolicy::from_declared(&declared, opt_ins);
        let directive = policy
            .header()
            .split("; ")
            .find(|d| d.starts_with("script-src "))
            .map(str::to_owned);
        directive.unwrap_or_default()
    };
    assert!(script_src(&OptIns::new([OptIn::ScriptData])).contains(" data:"));
    assert!(
        !script_src(&OptIns::new(
            OptIn::ALL.into_iter().filter(|o| *o != OptIn::ScriptData)
        ))
        .contains("data:")
    );
    // Without the eval opt-in, `eval` is never in a policy, whatever else is on.
    let all_but_eval = OptIns::new(OptIn::ALL.into_iter().filter(|o| *o != OptIn::UnsafeEval));
    assert!(
        !ViewPolicy::from_declared(&declared, &all_but_eval)
            .header()
            .contains("'unsafe-eval'")
    );
}
