//! A page's forms: the page in each coding a client accepts, made the first time one is asked
//! for and kept with the page, each with its length, its tag, and its answer's headers once one
//! was sent.

use std::sync::OnceLock;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};

use crate::compress::{self, Encoding};

/// One form of a page, with its `Content-Length`, its strong `ETag`, and its answer's headers
/// once one was sent.
#[derive(Debug)]
pub(super) struct Encoded {
    pub(super) body: Bytes,
    pub(super) length: HeaderValue,
    pub(super) etag: HeaderValue,
    pub(super) headers: OnceLock<HeaderMap>,
}

/// The forms of one page made so far, one per coding.
#[derive(Debug, Default)]
pub(super) struct Forms {
    identity: OnceLock<Encoded>,
    brotli: OnceLock<Encoded>,
    gzip: OnceLock<Encoded>,
}

impl Forms {
    /// `page` (tagged `tag`) in `encoding`, made now if this is the first time it is asked for.
    pub(super) fn encoded(&self, page: &Bytes, tag: u64, encoding: Encoding) -> &Encoded {
        let forms = self;
        match encoding {
            Encoding::Identity => forms
                .identity
                .get_or_init(|| Encoded::new(page.clone(), tag, encoding)),
            Encoding::Brotli => forms
                .brotli
                .get_or_init(|| Encoded::new(compress::brotli(page), tag, encoding)),
            Encoding::Gzip => forms
                .gzip
                .get_or_init(|| Encoded::new(compress::gzip(page), tag, encoding)),
        }
    }
}

impl Encoded {
    /// `tag` names everything the answer's bytes depend on (see `render::page_tag`); each
    /// coding is a representation of its own, so it has a tag of its own.
    fn new(body: Bytes, tag: u64, encoding: Encoding) -> Self {
        let etag = match encoding.header() {
            Some(coding) => format!("\"{tag:016x}-{}\"", coding.to_str().unwrap_or_default()),
            None => format!("\"{tag:016x}\""),
        };
        Encoded {
            length: HeaderValue::from(body.len()),
            // Quotes, hex digits, a dash and a coding name: always a valid header value.
            etag: HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"\"")),
            headers: OnceLock::new(),
            body,
        }
    }
}
