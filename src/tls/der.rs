//! The few lines of DER a certificate's validity takes: `Certificate → tbsCertificate →
//! validity`, instead of an X.509 crate.

/// The `notAfter` of a DER certificate, in seconds since the epoch.
pub(super) fn not_after(der: &[u8]) -> Option<i64> {
    validity(der).map(|(_, not_after)| not_after)
}

/// `notBefore` and `notAfter` of a DER certificate, in seconds since the epoch. A few lines of
/// DER instead of an X.509 crate: `Certificate → tbsCertificate → validity` is all that is read.
pub(crate) fn validity(der: &[u8]) -> Option<(i64, i64)> {
    let (_, certificate, _) = der_element(der)?;
    let (_, mut tbs, _) = der_element(certificate)?;
    // An explicit [0] version comes first when present.
    if tbs.first() == Some(&0xa0) {
        tbs = der_element(tbs)?.2;
    }
    let rest = der_element(tbs)?.2; // serialNumber
    let rest = der_element(rest)?.2; // signature
    let rest = der_element(rest)?.2; // issuer
    let (_, validity, _) = der_element(rest)?;
    let (tag, time, after_not_before) = der_element(validity)?;
    let not_before = parse_der_time(tag, time)?;
    let (tag, time, _) = der_element(after_not_before)?;
    Some((not_before, parse_der_time(tag, time)?))
}

/// One DER element: (tag, contents, the bytes after it).
fn der_element(bytes: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = bytes.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let len = rest[..count]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[count..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// UTCTime (`YYMMDDHHMMSSZ`) or GeneralizedTime (`YYYYMMDDHHMMSSZ`), UTC only.
fn parse_der_time(tag: u8, time: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(time).ok()?.strip_suffix('Z')?;
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (year, rest) = match tag {
        0x17 if text.len() == 12 => {
            let yy: i64 = text[..2].parse().ok()?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, &text[2..])
        }
        0x18 if text.len() == 14 => (text[..4].parse().ok()?, &text[4..]),
        _ => return None,
    };
    let field = |i: usize| -> Option<i64> { rest.get(i..i + 2)?.parse().ok() };
    let (month, day, hour, minute, second) =
        (field(0)?, field(2)?, field(4)?, field(6)?, field(8)?);
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(parse_der_time(0x17, b"491231235959Z"), Some(2_524_607_999));
        assert_eq!(
            parse_der_time(0x18, b"20260126000000Z"),
            Some(1_769_385_600)
        );
        assert_eq!(parse_der_time(0x17, b"2601260000Z"), None);
        assert_eq!(
            parse_der_time(0x17, "26012600000\u{e9}Z".as_bytes()),
            None,
            "no panic on non-ASCII"
        );
    }
}
