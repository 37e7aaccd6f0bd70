//! The view policy from any `?csp=` query and any JSON declaration: never a panic, never a
//! source the rules drop, the same bytes for the same input.
#![no_main]

#[path = "../../tests/common/properties.rs"]
mod properties;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    properties::check_json(text);
    properties::check_query(text);
    // The same text as the value of `csp=`, percent-encoded as a host would send it.
    let encoded: String = url_encode(text);
    properties::check_query(&format!("csp={encoded}"));
});

fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
