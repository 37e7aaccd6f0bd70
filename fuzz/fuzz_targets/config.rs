//! The config loader on any text: never a panic; a refusal always says why, naming the file.
#![no_main]

#[path = "../../tests/common/properties.rs"]
mod properties;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        properties::check_config(text);
    }
});
