//! `[acme]`, key by key, each problem with its fix.

use super::*;

#[test]
fn acme_is_checked_key_by_key_with_the_fix() {
    let base = format!("{}[tls]\n", host("https://a.example.com", "s.example.net"));
    let with = |acme: &str| format!("{base}[acme]\n{acme}");
    let ok = "terms_of_service_agreed = true\nstate_dir = \"acme\"\n";
    assert!(Config::parse("c.toml", &with(ok), Path::new("/etc/p")).is_ok());
    let cases: [(&str, &str); 10] = [
        (
            "state_dir = \"acme\"\n",
            "acme.terms_of_service_agreed is missing: read the CA's terms, then set terms_of_service_agreed = true",
        ),
        (
            "terms_of_service_agreed = false\nstate_dir = \"acme\"\n",
            "acme.terms_of_service_agreed must be true: the CA issues only to accounts that agree to its terms (read them at the directory's meta.termsOfService)",
        ),
        (
            "terms_of_service_agreed = true\n",
            "acme.state_dir is missing: the folder issued certificates and keys are kept in (for example \"/var/lib/mcp-sandbox-proxy/acme\")",
        ),
        (
            "directory = \"http://ca.example/dir\"\n",
            "acme.directory \"http://ca.example/dir\" is not an https URL (ACME directories are served over https; Let's Encrypt's is \"https://acme-v02.api.letsencrypt.org/directory\")",
        ),
        (
            "names = [\"*.s.example.net\"]\n",
            "acme.names[0] \"*.s.example.net\": a wildcard needs a DNS-01 challenge, which is not built in (docs/operations.md: ACME with per-server subdomains)",
        ),
        (
            "names = [\"s.example.net\", \"s.example.net\"]\n",
            "acme.names lists a name twice",
        ),
        (
            "contact = [\"ops@example.com\"]\n",
            "acme.contact[0] \"ops@example.com\" is not a mailto: URL (for example \"mailto:ops@example.com\")",
        ),
        (
            "challenge = \"dns-01\"\n",
            "acme.challenge \"dns-01\" is not a challenge this service answers: \"tls-alpn-01\" (the default) or \"http-01\" (DNS-01 is not built in)",
        ),
        (
            "challenge = \"http-01\"\n",
            "acme.challenge \"http-01\" needs http01_listen, the plain listener the CA reaches on port 80 (for example \"0.0.0.0:80\")",
        ),
        (
            "http01_listen = \"0.0.0.0:80\"\n",
            "acme.http01_listen is only for challenge = \"http-01\"",
        ),
    ];
    for (keys, expected) in cases {
        let text = if keys.contains("terms_of_service_agreed") || keys.starts_with("state_dir") {
            with(keys)
        } else {
            with(&format!("{ok}{keys}"))
        };
        let errs = errors(&text);
        assert_eq!(errs.len(), 1, "{keys}: {errs:?}");
        assert!(
            errs[0].ends_with(expected),
            "{keys}:\n{}\nnot: {expected}",
            errs[0]
        );
    }
    // Without [tls] there is no listener to use the certificates on.
    let errs = errors(&format!(
        "{}[acme]\n{ok}",
        host("https://a.example.com", "s.example.net")
    ));
    assert_eq!(
        errs,
        [
            "c.toml:5: acme issues certificates for a TLS listener: add [tls] (its cert and key may then be left out)"
        ]
    );
    // A loopback sandbox gets no certificate from a CA: it has to name what it wants.
    let errs = errors(&format!(
        "{}[tls]\n[acme]\n{ok}",
        host("http://localhost:8080", "localhost:8081")
    ));
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains("acme.names no sandbox name can have a certificate from a CA"),
        "{errs:?}"
    );
}
