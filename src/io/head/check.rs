//! Whether hyper takes a complete (filtered) head as it is, and whether it announces a body:
//! every rule hyper's server applies to a head before the service sees it, so that hyper never
//! has to refuse one itself.

use std::mem::MaybeUninit;

use crate::limits::{MAX_FIELD_NAME, MAX_FIELDS, MAX_TARGET, Refusal};

/// Checks one complete head, as the scanner framed it (its last line is the empty one): the
/// length of the body that follows it (a report's; zero for any other), or why it is refused.
pub(super) fn check(head: &[u8]) -> Result<usize, Refusal> {
    // Left uninitialised, as hyper does: httparse writes each field before it is read, and
    // filling 100 empty fields for every head cost more than parsing it.
    let mut fields = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_FIELDS];
    let mut request = httparse::Request::new(&mut []);
    match request.parse_with_uninit_headers(head, &mut fields) {
        // The scanner ends a head where httparse does; anything else is not the head it framed.
        Ok(httparse::Status::Complete(parsed)) if parsed == head.len() => {}
        Err(httparse::Error::TooManyHeaders) => return Err(Refusal::FieldsTooLarge),
        Ok(_) | Err(_) => return Err(Refusal::Malformed),
    }
    // hyper builds these types from the parts; what they refuse, hyper answers with a 400.
    let method_ok = request
        .method
        .is_some_and(|m| http::Method::from_bytes(m.as_bytes()).is_ok());
    let target = request.path.unwrap_or_default();
    if target.len() > MAX_TARGET {
        return Err(Refusal::TargetTooLong);
    }
    let target_ok = is_plain_origin_form(target) || http::Uri::try_from(target).is_ok();
    if !method_ok || !target_ok {
        return Err(Refusal::Malformed);
    }
    // hyper measures every name before it reads any. Field values need no second look: hyper
    // takes httparse's values unchecked, and httparse refuses every byte `http::HeaderValue`
    // would.
    if request
        .headers
        .iter()
        .any(|f| f.name.len() > MAX_FIELD_NAME)
    {
        return Err(Refusal::FieldsTooLarge);
    }
    if request
        .headers
        .iter()
        .any(|f| http::HeaderName::from_bytes(f.name.as_bytes()).is_err())
    {
        return Err(Refusal::Malformed);
    }
    let report = request.method == Some("POST")
        && target.split('?').next() == Some(crate::limits::REPORT_PATH);
    body_announced(request.headers, report)
}

/// hyper's reading of a body's framing, for a service that takes no body but a report's:
/// `Transfer-Encoding` always announces one; every `Content-Length` must be digits only (hyper
/// refuses an empty or signed one), and one other than zero announces a body. A `report`
/// (`POST /csp-report`) may have one `Content-Length` of at most `MAX_REPORT_BODY`.
fn body_announced(fields: &[httparse::Header<'_>], report: bool) -> Result<usize, Refusal> {
    let mut malformed = false;
    let mut lengths = 0;
    let mut announced = false;
    let mut too_large = false;
    let mut length = 0;
    for field in fields {
        if field.name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(Refusal::Body);
        }
        if field.name.eq_ignore_ascii_case("content-length") {
            lengths += 1;
            let value = field.value;
            if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
                malformed = true;
            } else if value.iter().any(|b| *b != b'0') {
                announced = true;
                match report_length(value) {
                    Some(n) => length = n,
                    None => too_large = true,
                }
            }
        }
    }
    if !report {
        if announced {
            return Err(Refusal::Body);
        }
        return if malformed {
            Err(Refusal::Malformed)
        } else {
            Ok(0)
        };
    }
    // Two lengths, even equal ones, are a head only hyper would have to judge.
    if malformed || lengths > 1 {
        return Err(Refusal::Malformed);
    }
    if too_large {
        return Err(Refusal::ReportTooLarge);
    }
    Ok(length)
}

/// A `Content-Length` of ASCII digits, if it is at most `MAX_REPORT_BODY`, however many
/// leading zeros or digits it has.
fn report_length(digits: &[u8]) -> Option<usize> {
    let start = digits
        .iter()
        .position(|b| *b != b'0')
        .unwrap_or(digits.len());
    let significant = &digits[start..];
    if significant.len() > 7 {
        return None;
    }
    let n = std::str::from_utf8(significant)
        .ok()?
        .parse::<usize>()
        .unwrap_or(0);
    (n <= crate::limits::MAX_REPORT_BODY).then_some(n)
}

/// A request target made only of bytes every URI parser takes in a path or query (RFC 3986's
/// unreserved and sub-delims, `:@/?%`), starting with `/`: what browsers send. `http`'s parser
/// takes each of them (a unit test asks it), so such a target needs no second parse here.
fn is_plain_origin_form(target: &str) -> bool {
    target.starts_with('/') && target.bytes().all(|b| PLAIN_TARGET_BYTES[usize::from(b)])
}

/// The bytes `is_plain_origin_form` takes, as a table: one lookup per byte.
const PLAIN_TARGET_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric();
        b += 1;
    }
    let marks = b"-._~!$&'()*+,;=:@/?%";
    let mut i = 0;
    while i < marks.len() {
        table[marks[i] as usize] = true;
        i += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plain_target_byte_is_one_http_takes_in_a_path_and_a_query() {
        for b in 0..=u8::MAX {
            let c = char::from(b);
            let target = format!("/a{c}b?c{c}d{c}");
            if is_plain_origin_form(&target) {
                assert!(http::Uri::try_from(target.as_str()).is_ok(), "{b:#04x}");
            }
        }
        assert!(!is_plain_origin_form("*"));
        assert!(!is_plain_origin_form("http://a/"));
        assert!(!is_plain_origin_form("/a#b"));
        assert!(!is_plain_origin_form("/a b"));
        assert!(is_plain_origin_form(
            "/?csp=%7B%22connectDomains%22%3A%5B%5D%7D"
        ));
    }

    #[test]
    fn content_length_is_read_as_hyper_reads_it() {
        let cases = [
            ("0", Ok(0)),
            ("000", Ok(0)),
            ("5", Err(Refusal::Body)),
            ("", Err(Refusal::Malformed)),
            ("+0", Err(Refusal::Malformed)),
            ("0,0", Err(Refusal::Malformed)),
            ("0x0", Err(Refusal::Malformed)),
        ];
        for (value, expected) in cases {
            let head = format!("POST / HTTP/1.1\r\nContent-Length: {value}\r\n\r\n");
            assert_eq!(check(head.as_bytes()), expected, "{value:?}");
        }
        let blank = "POST / HTTP/1.1\r\nContent-Length:   \r\n\r\n";
        assert_eq!(check(blank.as_bytes()), Err(Refusal::Malformed));
    }

    #[test]
    fn a_report_alone_may_announce_a_body_of_at_most_the_cap() {
        let cap = crate::limits::MAX_REPORT_BODY;
        let cases = [
            (
                "POST /csp-report?from=view",
                "Content-Length: 300\r\n",
                Ok(300),
            ),
            ("POST /csp-report", "Content-Length: 0\r\n", Ok(0)),
            ("POST /csp-report", "", Ok(0)),
            (
                "POST /csp-report",
                &format!("Content-Length: 000{cap}\r\n"),
                Ok(cap),
            ),
            (
                "POST /csp-report",
                &format!("Content-Length: {}\r\n", cap + 1),
                Err(Refusal::ReportTooLarge),
            ),
            (
                "POST /csp-report",
                "Content-Length: 99999999999999999999999\r\n",
                Err(Refusal::ReportTooLarge),
            ),
            (
                "POST /csp-report",
                "Content-Length: 5\r\nContent-Length: 5\r\n",
                Err(Refusal::Malformed),
            ),
            (
                "POST /csp-report",
                "Transfer-Encoding: chunked\r\n",
                Err(Refusal::Body),
            ),
            (
                "POST /csp-report/",
                "Content-Length: 5\r\n",
                Err(Refusal::Body),
            ),
            (
                "PUT /csp-report",
                "Content-Length: 5\r\n",
                Err(Refusal::Body),
            ),
            ("POST /sandbox", "Content-Length: 5\r\n", Err(Refusal::Body)),
        ];
        for (line, fields, expected) in cases {
            let head = format!("{line} HTTP/1.1\r\n{fields}\r\n");
            assert_eq!(check(head.as_bytes()), expected, "{head:?}");
        }
    }

    #[test]
    fn a_target_or_field_name_over_hypers_own_limits_is_refused_here() {
        let target = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_TARGET));
        assert_eq!(check(target.as_bytes()), Err(Refusal::TargetTooLong));
        let name = format!("GET / HTTP/1.1\r\n{}: v\r\n\r\n", "n".repeat(1 << 16));
        assert_eq!(check(name.as_bytes()), Err(Refusal::FieldsTooLarge));
    }
}
