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

/// What ACME Renewal Information names a certificate by (RFC 9773, 4.1): the `keyIdentifier`
/// of its Authority Key Identifier extension and its serial number, each as the contents of
/// its DER element (no tag, no length). `None` for a certificate without that extension.
pub(crate) fn ari_identifier(der: &[u8]) -> Option<(&[u8], &[u8])> {
    let (_, certificate, _) = der_element(der)?;
    let (_, mut tbs, _) = der_element(certificate)?;
    if tbs.first() == Some(&0xa0) {
        tbs = der_element(tbs)?.2;
    }
    let (_, serial, rest) = der_element(tbs)?;
    // signature, issuer, validity, subject, subjectPublicKeyInfo
    let mut rest = rest;
    for _ in 0..5 {
        rest = der_element(rest)?.2;
    }
    // Optional issuerUniqueID [1] and subjectUniqueID [2], then extensions [3].
    while let Some((tag, contents, after)) = der_element(rest) {
        if tag == 0xa3 {
            let (_, mut extensions, _) = der_element(contents)?;
            while let Some((_, extension, after)) = der_element(extensions) {
                let (_, oid, fields) = der_element(extension)?;
                if oid == AUTHORITY_KEY_IDENTIFIER {
                    return Some((key_identifier(fields)?, serial));
                }
                extensions = after;
            }
            return None;
        }
        rest = after;
    }
    None
}

/// The OID 2.5.29.35 (id-ce-authorityKeyIdentifier), as DER contents.
const AUTHORITY_KEY_IDENTIFIER: &[u8] = &[0x55, 0x1d, 0x23];

/// An extension's fields after its OID (`critical` perhaps, then `extnValue`): the
/// `keyIdentifier [0] IMPLICIT OCTET STRING` of the AuthorityKeyIdentifier inside.
fn key_identifier(mut fields: &[u8]) -> Option<&[u8]> {
    let (mut tag, mut value, after) = der_element(fields)?;
    if tag == 0x01 {
        fields = after;
        (tag, value, _) = der_element(fields)?;
    }
    if tag != 0x04 {
        return None;
    }
    let (_, aki, _) = der_element(value)?;
    let (tag, key_id, _) = der_element(aki)?;
    (tag == 0x80).then_some(key_id)
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

    /// A leaf signed by a CA of its own, as a CA issues: with an Authority Key Identifier.
    fn issued_leaf(serial: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = rcgen::Issuer::new(ca, ca_key);
        let key = rcgen::KeyPair::generate().unwrap();
        let mut leaf = rcgen::CertificateParams::new(vec!["chat.test".to_owned()]).unwrap();
        leaf.serial_number = Some(rcgen::SerialNumber::from_slice(serial));
        leaf.use_authority_key_identifier_extension = true;
        let cert = leaf.signed_by(&key, &issuer).unwrap();
        (cert.der().to_vec(), ca_cert.der().to_vec())
    }

    #[test]
    fn the_renewal_identifier_is_the_issuers_key_id_and_the_serial() {
        let (leaf, _) = issued_leaf(&[0x00, 0x87, 0x65, 0x43, 0x21]);
        let (key_id, serial) = ari_identifier(&leaf).expect("an AKI");
        assert_eq!(
            serial,
            [0x00, 0x87, 0x65, 0x43, 0x21],
            "the serial's DER contents"
        );
        assert_eq!(key_id.len(), 20, "rcgen's key identifier: 20 bytes");
        let self_signed = rcgen::CertificateParams::new(vec!["a.test".to_owned()])
            .unwrap()
            .self_signed(&rcgen::KeyPair::generate().unwrap())
            .unwrap();
        assert_eq!(
            ari_identifier(self_signed.der()),
            None,
            "no AKI, no identifier"
        );
    }

    /// Held to OpenSSL's reading of the same certificate.
    #[test]
    #[ignore = "needs the openssl command (scripts/test rust installs it)"]
    fn the_renewal_identifier_matches_openssl() {
        let (leaf, _) = issued_leaf(&[0x0f, 0xee, 0x01]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("leaf.der");
        std::fs::write(&path, &leaf).unwrap();
        let out = std::process::Command::new("openssl")
            .args([
                "x509",
                "-inform",
                "DER",
                "-noout",
                "-serial",
                "-ext",
                "authorityKeyIdentifier",
                "-in",
            ])
            .arg(&path)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout)
            .unwrap()
            .to_ascii_lowercase()
            .replace([':', ' '], "");
        let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let (key_id, serial) = ari_identifier(&leaf).unwrap();
        assert!(text.contains(&format!("serial={}", hex(serial))), "{text}");
        assert!(text.contains(&hex(key_id)), "{text}");
    }

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
