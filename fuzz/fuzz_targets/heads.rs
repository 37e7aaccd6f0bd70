//! The HTTP/1 head reader against httparse: any bytes, split at any read boundaries, under
//! small and default limits (tests/common/heads.rs says what must hold).
#![no_main]

#[path = "../../tests/common/heads.rs"]
mod heads;

use mcp_sandbox_proxy::HeadLimits;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // The first byte picks the limits, the next eight the read boundaries; the rest is read.
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (cuts, input) = rest.split_at(rest.len().min(8));
    let limits = HeadLimits {
        request_line: [24, 64, 200, 20_480][usize::from(pick & 3)],
        fields: [16, 64, 300, 16_384][usize::from(pick >> 2 & 3)],
    };
    let scale = usize::from(pick >> 4) + 1;
    let cuts: Vec<usize> = cuts.iter().map(|c| usize::from(*c) * scale).collect();
    heads::check_heads(input, &cuts, limits);
});
