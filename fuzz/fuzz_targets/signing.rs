//! Signed policies: any query for a host that signs is served the declared policy exactly when
//! the reference (tests/common/signing.rs) finds a valid signature of one of the host's keys.
//! Half the inputs are raw queries; the other half are signed here first and then edited by
//! what follows, so the fuzzer works on both sides of the rule.
#![no_main]

#[path = "../../tests/common/signing.rs"]
mod signing;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    if mode % 2 == 0 {
        signing::check_signed_query(&text);
        return;
    }
    // Lines: the csp, then what goes before and after the signed parameters.
    let mut lines = text.splitn(3, '\n');
    let csp = lines.next().unwrap_or_default();
    let (before, after) = (lines.next().unwrap_or_default(), lines.next().unwrap_or_default());
    let now = signing::unix_now();
    let expires = if mode & 2 == 0 { now + 600 } else { now.saturating_sub(u64::from(mode >> 4)) };
    let expires = expires.to_string();
    let key = signing::KEYS[usize::from(mode >> 2) % 3];
    let signature = signing::sign(key, &expires, csp);
    let csp: String = url::form_urlencoded::byte_serialize(csp.as_bytes()).collect();
    let query = format!("{before}csp={csp}&expires={expires}&signature={signature}{after}");
    signing::check_signed_query(&query);
});
