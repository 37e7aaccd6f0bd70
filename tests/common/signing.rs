//! The signed-policy rule held to a reference, for the property tests and the `signing` fuzz
//! target: for any query of a host that signs, the page gets the declared policy exactly when
//! the reference, written from the scheme in docs/hosts.md with std and ring only, finds a
//! valid signature of one of the host's keys; otherwise the spec's default policy.
#![allow(dead_code)]

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use http::{Request, header};
use mcp_sandbox_proxy::{Config, OptIns, Service, ViewPolicy, policy_for_query};
use ring::hmac;

/// The host's two keys (rotation), and one it does not have.
pub const KEYS: [&str; 3] = [
    "8f1b6c3e2a9d4f7061b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718",
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff",
    "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100",
];
pub const SANDBOX: &str = "chat.sandbox.test";
const MAX_QUERY_BYTES: usize = 16 * 1024;

fn service() -> &'static Service {
    static SERVICE: OnceLock<Service> = OnceLock::new();
    SERVICE.get_or_init(|| {
        let text = format!(
            "listen = \"127.0.0.1:0\"\n[[hosts]]\norigin = \"https://chat.example.com\"\n\
             sandbox = \"{SANDBOX}\"\npolicy_keys = [\"{}\", \"{}\"]\n",
            KEYS[0], KEYS[1]
        );
        let config = Config::parse("signing.toml", &text, std::path::Path::new("."))
            .expect("the signing config is valid")
            .config;
        Service::new(&config)
    })
}

pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The documented signature of `csp` until `expires` (as written) with `key`, for `SANDBOX`.
pub fn sign(key: &str, expires: &str, csp: &str) -> String {
    sign_for(key, SANDBOX, expires, csp)
}

/// The documented signature, made with ring from the scheme alone, for any sandbox name.
pub fn sign_for(key: &str, sandbox: &str, expires: &str, csp: &str) -> String {
    let bytes: Vec<u8> = (0..key.len() / 2)
        .map(|i| u8::from_str_radix(&key[2 * i..2 * i + 2], 16).expect("a hex key"))
        .collect();
    let key = hmac::Key::new(hmac::HMAC_SHA256, &bytes);
    let message = format!("mcp-sandbox-proxy policy v1\n{sandbox}\n{expires}\n{csp}");
    let tag = hmac::sign(&key, message.as_bytes());
    tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// The longest a signed URL may still live by default (`policy_max_lifetime`, an hour), with the
/// minute allowed for a signer's clock.
pub const MAX_LIFETIME_SECONDS: u64 = 3600 + 60;

/// The reference: whether `query` carries a signature the documented scheme gives its `csp`
/// with one of the host's keys, valid at `now` and for no longer than the default lifetime.
/// Each of `csp`, `expires` and `signature` must appear exactly once; `expires` is 1 to 10
/// decimal digits; `signature` 64 lower-case hex.
pub fn reference_signed(query: &str, now: u64) -> bool {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let once = |name: &str| {
        let mut values = pairs.iter().filter(|(k, _)| k == name).map(|(_, v)| v);
        match (values.next(), values.next()) {
            (Some(value), None) => Some(value.clone()),
            _ => None,
        }
    };
    let (Some(csp), Some(expires), Some(signature)) =
        (once("csp"), once("expires"), once("signature"))
    else {
        return false;
    };
    let digits =
        !expires.is_empty() && expires.len() <= 10 && expires.bytes().all(|b| b.is_ascii_digit());
    let Some(at) = digits.then(|| expires.parse::<u64>().ok()).flatten() else {
        return false;
    };
    now < at
        && at - now <= MAX_LIFETIME_SECONDS
        && KEYS[..2]
            .iter()
            .any(|key| sign(key, &expires, &csp) == signature)
}

/// Whether a parameter the service reads appears more than once: the page is then a `400`.
fn repeats(query: &str) -> bool {
    ["csp", "expires", "signature", "embedder", "upgrade"]
        .iter()
        .any(|name| {
            url::form_urlencoded::parse(query.as_bytes())
                .filter(|(key, _)| key == name)
                .count()
                > 1
        })
}

/// One query through the service, held to the reference.
pub fn check_signed_query(query: &str) {
    let uri = format!("/?{query}");
    let Ok(request) = Request::get(uri.as_str())
        .header(header::HOST, SANDBOX)
        .body(())
    else {
        return;
    };
    // The URI type may normalise nothing away from the query; the service sees this one.
    let Some(seen) = request.uri().query().map(str::to_owned) else {
        return;
    };
    let before = unix_now();
    let response = service().handle(&request);
    let after = unix_now();
    let signed = reference_signed(&seen, before);
    if signed != reference_signed(&seen, after) {
        // The expiry fell between the two readings: either answer is right.
        return;
    }
    if url::form_urlencoded::parse(seen.as_bytes()).any(|(k, _)| k == "embedder") {
        // The embedder rule decides first; its own tests hold it.
        assert!(matches!(response.status().as_u16(), 200 | 400), "{seen:?}");
        return;
    }
    let expected: Result<ViewPolicy, _> = if seen.len() > MAX_QUERY_BYTES || repeats(&seen) {
        Err(())
    } else if signed {
        policy_for_query(&seen, MAX_QUERY_BYTES, &OptIns::default()).map_err(|_| ())
    } else {
        policy_for_query("", MAX_QUERY_BYTES, &OptIns::default()).map_err(|_| ())
    };
    match expected {
        Err(()) => assert_eq!(response.status(), 400, "{seen:?}"),
        Ok(policy) => {
            assert_eq!(response.status(), 200, "{seen:?}");
            let csp = response.headers()[header::CONTENT_SECURITY_POLICY]
                .to_str()
                .expect("a visible header");
            let view_policy = csp.split(", ").nth(1).unwrap_or_default();
            let reports = format!("; report-uri https://{SANDBOX}/csp-report?from=view");
            let Some(view_policy) = view_policy.strip_suffix(&reports) else {
                panic!("{view_policy:?} does not end with {reports:?}");
            };
            assert_eq!(
                view_policy,
                policy.header(),
                "signed by the reference: {signed}; query {seen:?}"
            );
        }
    }
}
