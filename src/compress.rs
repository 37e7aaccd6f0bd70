//! The page's compressed forms (brotli and gzip), and which one a request accepts.

use std::io::Write;

use bytes::Bytes;
use http::Request;
use http::header::{self, HeaderValue};

/// How a page body travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    Identity,
    Brotli,
    Gzip,
}

impl Encoding {
    /// The best form `Accept-Encoding` allows: brotli, then gzip, then the page as it is. A
    /// coding with `q=0` is refused; `*` stands for any coding not named.
    pub(crate) fn accepted_by<B>(req: &Request<B>) -> Encoding {
        let mut brotli = None;
        let mut gzip = None;
        let mut any = None;
        for value in req.headers().get_all(header::ACCEPT_ENCODING) {
            let Ok(value) = value.to_str() else { continue };
            for item in value.split(',') {
                let mut parts = item.split(';');
                let coding = parts.next().unwrap_or_default().trim();
                let accepted = parts
                    .filter_map(|p| p.trim().strip_prefix("q="))
                    .all(|q| q.trim().parse::<f32>().is_ok_and(|q| q > 0.0));
                if coding.eq_ignore_ascii_case("br") {
                    brotli = Some(accepted);
                } else if coding.eq_ignore_ascii_case("gzip") {
                    gzip = Some(accepted);
                } else if coding == "*" {
                    any = Some(accepted);
                }
            }
        }
        if brotli.or(any) == Some(true) {
            Encoding::Brotli
        } else if gzip.or(any) == Some(true) {
            Encoding::Gzip
        } else {
            Encoding::Identity
        }
    }

    /// The `Content-Encoding` value, if any.
    pub(crate) fn header(self) -> Option<HeaderValue> {
        match self {
            Encoding::Identity => None,
            Encoding::Brotli => Some(HeaderValue::from_static("br")),
            Encoding::Gzip => Some(HeaderValue::from_static("gzip")),
        }
    }
}

/// Brotli at quality 5: most of the gain of 11 at a small part of its time. A page is
/// compressed once per cache entry, but an attacker with ever-new queries pays for one each.
const BROTLI_QUALITY: u32 = 5;
const BROTLI_WINDOW: u32 = 22;

pub(crate) fn brotli(page: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(page.len() / 3);
    {
        let mut writer =
            brotli::CompressorWriter::new(&mut out, 4096, BROTLI_QUALITY, BROTLI_WINDOW);
        // Writing into a Vec cannot fail.
        let _ = writer.write_all(page);
    }
    Bytes::from(out)
}

pub(crate) fn gzip(page: &[u8]) -> Bytes {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(page.len() / 3),
        flate2::Compression::new(6),
    );
    // Writing into a Vec cannot fail; `finish` only writes the trailer into it.
    let _ = encoder.write_all(page);
    Bytes::from(encoder.finish().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepting(value: &str) -> Encoding {
        let req = Request::get("/")
            .header(header::ACCEPT_ENCODING, value)
            .body(())
            .unwrap();
        Encoding::accepted_by(&req)
    }

    #[test]
    fn negotiation_prefers_brotli_then_gzip_and_respects_q0() {
        assert_eq!(accepting("gzip, deflate, br, zstd"), Encoding::Brotli);
        assert_eq!(accepting("gzip"), Encoding::Gzip);
        assert_eq!(accepting("br;q=0, gzip;q=0.5"), Encoding::Gzip);
        assert_eq!(accepting("br;q=0, gzip;q=0"), Encoding::Identity);
        assert_eq!(accepting("identity"), Encoding::Identity);
        assert_eq!(accepting("*"), Encoding::Brotli);
        assert_eq!(accepting("*;q=0, gzip"), Encoding::Gzip);
        assert_eq!(accepting("BR"), Encoding::Brotli);
        assert_eq!(
            Encoding::accepted_by(&Request::get("/").body(()).unwrap()),
            Encoding::Identity
        );
    }

    #[test]
    fn both_forms_decode_to_the_page() {
        use std::io::Read;
        let page = "<!doctype html>".repeat(500);
        let mut back = String::new();
        brotli::Decompressor::new(&brotli(page.as_bytes())[..], 4096)
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, page);
        let mut back = String::new();
        flate2::read::GzDecoder::new(&gzip(page.as_bytes())[..])
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, page);
    }
}
