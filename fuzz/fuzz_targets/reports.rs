//! The CSP report reader: any body under either media type is read without a panic, and what
//! it keeps is a directive and an origin or keyword, never more of a URL; a report built from
//! the input's lines keeps exactly its directive and its URL's origin (tests/common/reports.rs
//! says what must hold).
#![no_main]

#[path = "../../tests/common/reports.rs"]
mod reports;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    reports::check_body(reports::MEDIA_TYPES[usize::from(mode & 1)], body);
    if mode & 2 == 0 {
        return;
    }
    // Lines: a directive, then what was blocked, for as many reports as there are pairs.
    let text = String::from_utf8_lossy(body);
    let lines: Vec<&str> = text.lines().collect();
    let batch: Vec<reports::Report> = lines
        .chunks_exact(2)
        .take(31)
        .map(|pair| reports::Report {
            directive: pair[0].to_owned(),
            blocked: reports::Blocked::Unknown(pair[1].to_owned()),
        })
        .collect();
    if !batch.is_empty() {
        reports::check_reports(&batch, "\u{0}never-in-an-origin\u{0}");
    }
});
