//! The fuzz targets' invariants (tests/common/properties.rs), checked in the normal suite on
//! inputs drawn from a seeded generator: host-source fragments, hostile characters and random
//! edits, so every run checks the same ten thousands of cases and a failure can be replayed.

mod common;

use common::heads;
use common::properties::{self, Site};
use mcp_sandbox_proxy::HeadLimits;

/// xorshift64*: small, seeded, the same sequence on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
        from[self.below(from.len())]
    }

    /// `text` with a few random edits: a hostile character inserted, a byte dropped.
    fn mutate(&mut self, text: String) -> String {
        let mut chars: Vec<char> = text.chars().collect();
        for _ in 0..self.below(3) {
            let at = self.below(chars.len() + 1);
            if self.below(2) == 0 {
                let hostile = [
                    ' ', ';', ',', '\'', '"', '\n', '\t', '\0', '\\', '*', '\u{2028}', 'é', '<',
                    '\u{7f}', '#', '?', '@', '%', ']', '[', '+',
                ];
                chars.insert(at, hostile[self.below(hostile.len())]);
            } else if at < chars.len() {
                chars.remove(at);
            }
        }
        chars.into_iter().collect()
    }
}

const SCHEMES: &[&str] = &[
    "https://",
    "http://",
    "wss://",
    "ws://",
    "",
    "",
    "data:",
    "javascript:",
    "HTTPS://",
    "ftp://",
];
const HOSTS: &[&str] = &[
    "example.com",
    "*.example.com",
    "*.com",
    "localhost",
    "127.0.0.1",
    "api.Example.COM",
    "",
    "*",
    "[::1]",
    "a..b",
    "xn--bcher-kva.example",
    "-bad.example",
    "very.deep.sub.example.org",
    "'self'",
    "'unsafe-eval'",
    "blob:",
    "*.*.example.com",
];
const PORTS: &[&str] = &["", "", ":443", ":*", ":0", ":99999", ":8080", ":abc"];
const PATHS: &[&str] = &[
    "", "", "/", "/a/b", "/a;b", "/a?x=1", "#frag", "/%2F", "/a b", "/A/Case",
];
const LISTS: &[&str] = &[
    "connectDomains",
    "resourceDomains",
    "frameDomains",
    "baseUriDomains",
    "otherDomains",
];

fn source(rng: &mut Rng) -> String {
    let text = format!(
        "{}{}{}{}",
        rng.pick(SCHEMES),
        rng.pick(HOSTS),
        rng.pick(PORTS),
        rng.pick(PATHS)
    );
    if rng.below(4) == 0 {
        rng.mutate(text)
    } else {
        text
    }
}

fn declaration(rng: &mut Rng) -> String {
    let lists: Vec<String> = (0..rng.below(4) + 1)
        .map(|_| {
            let entries: Vec<String> = (0..rng.below(12))
                .map(|_| serde_json::to_string(&source(rng)).unwrap())
                .collect();
            format!("\"{}\":[{}]", rng.pick(LISTS), entries.join(","))
        })
        .collect();
    let json = format!("{{{}}}", lists.join(","));
    if rng.below(8) == 0 {
        rng.mutate(json)
    } else {
        json
    }
}

#[test]
fn every_built_policy_is_clean_and_the_same_for_the_same_input() {
    let mut rng = Rng(0x5eed_0001);
    for _ in 0..20_000 {
        let json = declaration(&mut rng);
        properties::check_json(&json);
        let encoded: String = url::form_urlencoded::byte_serialize(json.as_bytes()).collect();
        properties::check_query(&format!("csp={encoded}"));
    }
}

#[test]
fn the_config_loader_refuses_with_reasons_and_never_panics() {
    let lines = [
        "listen = \"127.0.0.1:0\"",
        "listen = \"nowhere\"",
        "[[hosts]]",
        "origin = \"https://chat.example.com\"",
        "origin = \"https://chat.example.com/\"",
        "origin = \"http://evil.example\"",
        "sandbox = \"chat.sandbox.test\"",
        "sandbox = \"Chat.Sandbox.Test\"",
        "sandbox = \"chat.example.com\"",
        "per_server_subdomains = true",
        "per_server_subdomains = \"yes\"",
        "[limits]",
        "max_connections = 0",
        "idle_timeout = \"99999d\"",
        "[tls]",
        "cert = \"\"",
        "x = [",
        "\"unterminated",
        "admin_listen = \"[::1]:9\"",
    ];
    let mut rng = Rng(0x5eed_0002);
    for _ in 0..5_000 {
        let text: Vec<&str> = (0..rng.below(12)).map(|_| rng.pick(&lines)).collect();
        let text = text.join("\n");
        let text = if rng.below(5) == 0 {
            rng.mutate(text)
        } else {
            text
        };
        properties::check_config(&text);
    }
}

#[test]
fn routing_serves_only_configured_names() {
    let names = [
        "chat.sandbox.test",
        "studio.sandbox.test",
        "sandbox.test",
        "a.b.sandbox.test",
        "chat.sandbox.test:8443",
        // One port written two ways: a config's `:060` serves requests for `:60`.
        "sandbox.test:060",
        "sandbox.test:60",
        "127.0.0.1:9000",
        "x-y.test",
    ];
    let prefixes = [
        "", "", "a.", "a1.", "-a.", "A.", "a.b.", "a_b.", "é.", ".", "xn--x.",
    ];
    let suffixes = [
        "", "", ":80", ":443", ":8443", ".", " ", ":", ":0080", ":+80",
    ];
    let mut rng = Rng(0x5eed_0003);
    for _ in 0..3_000 {
        let sites: Vec<Site> = (0..rng.below(4) + 1)
            .map(|_| Site {
                name: rng.pick(&names).to_owned(),
                per_server: rng.below(2) == 0,
            })
            .collect();
        let authorities: Vec<Vec<u8>> = (0..8)
            .map(|_| {
                let text = format!(
                    "{}{}{}",
                    rng.pick(&prefixes),
                    rng.pick(&names),
                    rng.pick(&suffixes)
                );
                let text = if rng.below(3) == 0 {
                    text.to_ascii_uppercase()
                } else {
                    text
                };
                rng.mutate(text).into_bytes()
            })
            .collect();
        properties::check_routing(&sites, &authorities);
    }
}

#[test]
fn the_head_reader_agrees_with_httparse_within_its_bounds_for_any_split() {
    let mut rng = Rng(0x5eed_0004);
    for _ in 0..30_000 {
        let input = heads::random_head(&mut |n| rng.below(n));
        let limits = HeadLimits {
            request_line: [24, 64, 200, 4096][rng.below(4)],
            fields: [16, 64, 300, 16_384][rng.below(4)],
        };
        let cuts: Vec<usize> = (0..rng.below(8))
            .map(|_| rng.below(input.len() + 1))
            .collect();
        heads::check_heads(&input, &cuts, limits);
        // Byte by byte too: the split that meets every state at every offset.
        let every: Vec<usize> = (0..input.len()).collect();
        heads::check_heads(&input, &every, limits);
    }
}
