use super::*;

const LIMITS: HeadLimits = HeadLimits {
    request_line: 64,
    fields: 64,
};

/// What hyper would read for `input`, fed in pieces of `step` bytes, and the refusal if any.
fn filtered(input: &[u8], step: usize, limits: HeadLimits) -> (String, Option<Refusal>) {
    let mut scanner = HeadScanner::new(limits);
    for piece in input.chunks(step) {
        scanner.scan(piece);
    }
    (
        String::from_utf8_lossy(scanner.pending()).into_owned(),
        scanner.refusal(),
    )
}

#[test]
fn the_field_value_bytes_are_those_httparse_takes() {
    for byte in 0..=u8::MAX {
        if matches!(byte, b'\r' | b'\n') {
            continue;
        }
        let head = [b"GET / HTTP/1.1\r\nA: x".as_slice(), &[byte], b"y\r\n\r\n"].concat();
        let mut fields = [httparse::EMPTY_HEADER; 4];
        let takes = httparse::Request::new(&mut fields).parse(&head).is_ok();
        assert_eq!(is_field_value_byte(byte), takes, "{byte:#04x}");
    }
}

#[test]
fn cookie_values_are_dropped_whatever_their_size_and_split() {
    let cookies = format!("Cookie: a={}\r\nCOOKIE: b=2\r\n", "x".repeat(100_000));
    let head = format!("GET / HTTP/1.1\r\nHost: a.test\r\n{cookies}Accept: */*\r\n\r\n");
    for step in [1, 3, 7, 4096] {
        let (out, refused) = filtered(head.as_bytes(), step, LIMITS);
        assert_eq!(refused, None, "step {step}");
        assert_eq!(
            out, "GET / HTTP/1.1\r\nHost: a.test\r\ncookie: -\r\ncookie: -\r\nAccept: */*\r\n\r\n",
            "step {step}"
        );
    }
}

#[test]
fn a_cookie_value_takes_only_what_any_other_field_value_takes() {
    // A bare CR ends a line for some front ends and not for others: `Cookie: a\rContent-Length:
    // 40` would be one field here and two there.
    for bad in [
        "a\rContent-Length: 40",
        "a\0b",
        "a\x01b",
        "a\x7fb",
        "a\r\rb",
    ] {
        let head = format!("GET / HTTP/1.1\r\nCookie: {bad}\r\n\r\n");
        for step in [1, 2, 4096] {
            let (out, refused) = filtered(head.as_bytes(), step, LIMITS);
            assert_eq!(refused, Some(Refusal::Malformed), "{bad:?} step {step}");
            assert_eq!(out, Refusal::REQUEST, "{bad:?}");
        }
    }
    let fine = "GET / HTTP/1.1\r\nCookie: a=\t\u{e9}; b=\"c d\"\r\n\r\n";
    assert_eq!(filtered(fine.as_bytes(), 1, LIMITS).1, None);
}

#[test]
fn a_field_that_only_starts_like_cookie_is_kept() {
    let head = "GET / HTTP/1.1\r\nCookies-Not: 1\r\nCook: 2\r\n\r\n";
    assert_eq!(
        filtered(head.as_bytes(), 1, LIMITS),
        (head.to_owned(), None)
    );
}

#[test]
fn pipelined_heads_pass_in_order_and_empty_lines_before_a_head_are_dropped() {
    let two = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n\r\n\nHEAD /b HTTP/1.1\nHost: x\n\n";
    let expected = "GET /a HTTP/1.1\r\nHost: x\r\n\r\nHEAD /b HTTP/1.1\nHost: x\n\n";
    for step in [1, 5, 4096] {
        assert_eq!(
            filtered(two.as_bytes(), step, LIMITS),
            (expected.to_owned(), None)
        );
    }
}

#[test]
fn each_broken_limit_and_form_is_refused_with_its_reason() {
    let roomy = HeadLimits {
        request_line: 64,
        fields: 4096,
    };
    let long_line = format!("GET /?{} HTTP/1.1\r\n\r\n", "q".repeat(100));
    let long_fields = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "v".repeat(100));
    let many_fields = format!("GET / HTTP/1.1\r\n{}\r\n", "a:b\r\n".repeat(101));
    let bare_crs = format!("GET / HTTP/1.1\r\n{}\n\r\n", "\r".repeat(100));
    let cases = [
        (long_line.as_str(), LIMITS, Refusal::TargetTooLong),
        (long_fields.as_str(), LIMITS, Refusal::FieldsTooLarge),
        (bare_crs.as_str(), LIMITS, Refusal::FieldsTooLarge),
        (many_fields.as_str(), roomy, Refusal::FieldsTooLarge),
        (
            "GET / HTTP/1.1\r\nBad Name: v\r\n\r\n",
            roomy,
            Refusal::Malformed,
        ),
        (
            "GET http://[::1 HTTP/1.1\r\n\r\n",
            roomy,
            Refusal::Malformed,
        ),
        ("NOT HTTP\r\n\r\n", roomy, Refusal::Malformed),
        (
            "GET / HTTP/1.1\r\nContent-Length:\r\n\r\n",
            roomy,
            Refusal::Malformed,
        ),
        (
            "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello",
            roomy,
            Refusal::Body,
        ),
        (
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            roomy,
            Refusal::Body,
        ),
    ];
    for (input, limits, refusal) in cases {
        for step in [1, 3, 4096] {
            let (out, refused) = filtered(input.as_bytes(), step, limits);
            assert_eq!(refused, Some(refusal), "{input:?} step {step}");
            assert_eq!(out, Refusal::REQUEST, "{input:?}");
        }
    }
}

#[test]
fn a_head_with_an_empty_body_is_passed() {
    let head = "POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n";
    assert_eq!(
        filtered(head.as_bytes(), 2, LIMITS),
        (head.to_owned(), None)
    );
}

#[test]
fn a_head_exactly_at_its_limits_is_passed_and_one_byte_more_is_not() {
    // The request line, its ending included, and everything after it, the last line included.
    let line = format!("GET /{} HTTP/1.1\r\n", "a".repeat(64 - 16));
    let fields = format!("X: {}\r\n\r\n", "v".repeat(64 - 7));
    assert_eq!((line.len(), fields.len()), (64, 64));
    let head = format!("{line}{fields}");
    assert_eq!(filtered(head.as_bytes(), 1, LIMITS), (head.clone(), None));
    let longer_line = head.replacen("/a", "/aa", 1);
    assert_eq!(
        filtered(longer_line.as_bytes(), 1, LIMITS).1,
        Some(Refusal::TargetTooLong)
    );
    let longer_field = head.replacen("X: v", "X: vv", 1);
    assert_eq!(
        filtered(longer_field.as_bytes(), 1, LIMITS).1,
        Some(Refusal::FieldsTooLarge)
    );
}

#[test]
fn an_over_limit_head_is_read_to_its_end_before_the_refusal() {
    // Over the fields limit exactly at a line's end, then at its middle, and in a cookie's
    // marker; byte by byte too.
    let at_line_end = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "v".repeat(60));
    let mid_line = format!("GET / HTTP/1.1\r\nX: {}\r\nY: z\r\n\r\n", "v".repeat(90));
    let at_cookie = format!(
        "GET / HTTP/1.1\r\nX: {}\r\nCookie: a\r\n\r\n",
        "v".repeat(50)
    );
    for input in [at_line_end, mid_line, at_cookie] {
        for step in [1, 5, 4096] {
            let mut scanner = HeadScanner::new(LIMITS);
            let (before_end, end) = input.split_at(input.len() - 2);
            for piece in before_end.as_bytes().chunks(step) {
                scanner.scan(piece);
            }
            assert_eq!(
                scanner.refusal(),
                None,
                "not before the end: {input:?} {step}"
            );
            assert_eq!(scanner.kept(), 0, "nothing of it kept");
            scanner.scan(end.as_bytes());
            assert_eq!(
                scanner.refusal(),
                Some(Refusal::FieldsTooLarge),
                "{input:?} {step}"
            );
        }
    }
}

#[test]
fn each_head_is_counted_from_its_first_byte() {
    let mut scanner = HeadScanner::new(LIMITS);
    scanner.scan(b"GET /a HTTP/1.1\r\n\r\nGE");
    assert_eq!(scanner.heads_begun(), 2);
    scanner.scan(b"T /b HTTP/1.1\r\n\r\n");
    assert_eq!(scanner.heads_begun(), 2);
}

#[test]
fn a_stream_of_bare_crs_or_empty_lines_keeps_nothing_past_the_limits() {
    for (prefix, filler) in [
        ("GET / HTTP/1.1\r\nHost: a\r\n", b'\r'),
        ("", b'\n'),
        ("GET / HTTP/1.1\r\nCookie: a", b' '),
        ("GET / HTTP/1.1\r\nX: a", b'v'),
    ] {
        let mut scanner = HeadScanner::new(LIMITS);
        scanner.scan(prefix.as_bytes());
        let chunk = [filler; 4096];
        for _ in 0..64 {
            scanner.scan(&chunk);
            assert!(scanner.kept() <= LIMITS.filtered_max(), "{filler:#04x}");
        }
        assert!(scanner.work() <= 4 * (64 * 4096 + 64 + 1 + prefix.len() as u64));
    }
}
