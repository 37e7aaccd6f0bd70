//! Routing by authority: a generated config (up to four sandbox names, some serving labels)
//! and any authorities; a page is served only for a configured name or one label below one.
#![no_main]

#[path = "../../tests/common/properties.rs"]
mod properties;

use properties::Site;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // Lines: the first ones `+name` (serves labels) or `-name` are sites, the rest authorities.
    let mut sites = Vec::new();
    let mut authorities = Vec::new();
    for line in data.split(|b| *b == b'\n') {
        match line.split_first() {
            Some((b'+', name)) | Some((b'-', name)) if sites.len() < 4 && authorities.is_empty() => {
                let Ok(name) = std::str::from_utf8(name) else {
                    return;
                };
                if name.contains(['"', '\\']) {
                    return;
                }
                sites.push(Site {
                    name: name.to_owned(),
                    per_server: line[0] == b'+',
                });
            }
            _ => authorities.push(line.to_vec()),
        }
    }
    properties::check_routing(&sites, &authorities);
});
