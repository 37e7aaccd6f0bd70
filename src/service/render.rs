//! One page built for one query: pinned to its embedder, under the view policy `policy`
//! decided, with the page's header and the relay's settings; and its compressed forms, each
//! with its tag, made the first time a client accepts one.

use std::sync::OnceLock;

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};

use crate::compress::{self, Encoding};
use crate::csp::Dropped;
use crate::csp::ViewPolicy;
use crate::embedders::EmbedderError;
use crate::page::{PageTemplate, RelaySettings};
use crate::page_query::{PageQuery, QueryError};
use crate::reports::REPORT_PATH;

use super::csp_header::content_security_policy;
use super::host::Host;
use super::policy::Signature;

/// Why a page cannot be served: its `400`, with this text.
#[derive(Debug, thiserror::Error)]
pub(super) enum PageError {
    #[error(transparent)]
    Embedder(#[from] EmbedderError),
    #[error(transparent)]
    Query(#[from] QueryError),
    /// Unreachable: every source in a policy passed `HostSource`, which admits visible ASCII
    /// only. Refused rather than a page sent without its policy.
    #[error("the declared domains cannot form a header")]
    Header,
}

/// The page of `host` served as `served_as` (its route key: lower case, the default port left
/// out) for `query`, at `now` (Unix seconds). An error is the `400`'s reason.
pub(super) fn render(
    template: &PageTemplate,
    host: &Host,
    served_as: &str,
    query: &PageQuery,
    now: u64,
    max_query_bytes: usize,
) -> Result<RenderedPage, PageError> {
    let entry = &host.config;
    let origins = entry.origin.pin(query.embedder())?;
    let (policy, signature) = decide(host, served_as, query, now)?;
    let sandbox = entry.view_sandbox.page_policy();
    // A host that writes its views' policies gets the page framed and sandboxed only; the
    // spec's default, built all the same, is the relay's for a view that came without one.
    let view_policy = (!host.writes_view_policies()).then(|| policy.header());
    // Absolute: WebKit sends no report of a blocked load in a srcdoc or about:blank frame for
    // a relative `report-uri`.
    let report_to = entry
        .csp_reports
        .then(|| format!("{}://{served_as}{REPORT_PATH}", host.report_scheme));
    let csp = content_security_policy(view_policy, &origins, &sandbox, report_to.as_deref());
    let Ok(csp) = HeaderValue::from_str(&csp) else {
        return Err(PageError::Header);
    };
    let refused = match &signature {
        Signature::Refused(refused) => Some(refused.to_string()),
        Signature::NotChecked | Signature::Valid(_) => None,
    };
    let relay = RelaySettings {
        max_query_bytes,
        messages: entry.relay_messages,
        view_sandbox: &entry.view_sandbox,
        view_sandbox_default: entry.view_sandbox_default.as_ref(),
        signed_policies: entry.policy_keys.is_some(),
        host_policy: host.writes_view_policies(),
        policy_refused: refused.as_deref(),
    };
    let body = template.render(&origins, &policy, &relay);
    let tag = page_tag(&body, &csp);
    Ok(RenderedPage {
        brotli: OnceLock::new(),
        gzip: OnceLock::new(),
        page: Encoded::new(body, tag, Encoding::Identity),
        csp,
        tag,
        dropped: policy.dropped,
        embedder: origins.to_string(),
        policy_upgrade: query.is_policy_upgrade(),
        signature,
    })
}

/// The view policy of a page of `host` served as `served_as` (its route key) for `query`, at
/// `now`, and what its signature was found to be: the declared one; for a host that signs its
/// policies, only with a valid signature; for a host that writes its views' policies itself,
/// none but the spec's default, kept for the relay.
fn decide(
    host: &Host,
    served_as: &str,
    query: &PageQuery,
    now: u64,
) -> Result<(ViewPolicy, Signature), QueryError> {
    let opt_ins = &host.config.view_opt_ins;
    if host.writes_view_policies() {
        // `?csp=` is not this host's way: its views carry their own policy.
        return Ok((ViewPolicy::spec_default(opt_ins), Signature::NotChecked));
    }
    let signature = match host.signing() {
        None => Signature::NotChecked,
        Some(signing) => match signing.verify(served_as, query, now) {
            Ok(None) => Signature::NotChecked,
            Ok(Some(signed)) => Signature::Valid(signed),
            Err(refused) => Signature::Refused(refused),
        },
    };
    if let Signature::Refused(_) = signature {
        return Ok((ViewPolicy::spec_default(opt_ins), signature));
    }
    Ok((query.view_policy(opt_ins)?, signature))
}

/// Roughly what one form's header map holds: a dozen entries and their index.
const HEADER_MAP_BYTES: usize = 1024;

/// A page and the headers that depend on its query, built once; its compressed forms are made
/// the first time a client accepts one, and kept with it.
#[derive(Debug)]
pub(super) struct RenderedPage {
    pub(super) page: Encoded,
    pub(super) brotli: OnceLock<Encoded>,
    pub(super) gzip: OnceLock<Encoded>,
    /// Two policies in one header, `<view policy>, frame-ancestors <host origin>`: see
    /// `content_security_policy`.
    pub(super) csp: HeaderValue,
    /// Names the page's bytes and policy: the base of every form's `ETag`.
    pub(super) tag: u64,
    pub(super) dropped: Vec<Dropped>,
    /// The origins allowed to frame this page (`frame-ancestors`), as browsers serialize
    /// them, separated by spaces.
    pub(super) embedder: String,
    /// The query marks the relay asking for its page again (see `PageQuery::is_policy_upgrade`).
    pub(super) policy_upgrade: bool,
    pub(super) signature: Signature,
}

/// One form of a page, with its `Content-Length`, its strong `ETag`, and its answer's headers
/// once one was sent.
#[derive(Debug)]
pub(super) struct Encoded {
    pub(super) body: Bytes,
    pub(super) length: HeaderValue,
    pub(super) etag: HeaderValue,
    pub(super) headers: OnceLock<HeaderMap>,
}

impl Encoded {
    /// `tag` names everything the answer's bytes depend on (see `page_tag`); each coding is a
    /// representation of its own, so it has a tag of its own.
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

impl RenderedPage {
    /// What keeping it costs, roughly: the page, its policy, and the query that keys it.
    pub(super) fn bytes(&self, query: &str) -> usize {
        // The compressed forms, once made, are each smaller than the page itself; each form's
        // header map is about a kilobyte.
        2 * self.page.body.len() + self.csp.len() + query.len() + 3 * HEADER_MAP_BYTES
    }

    /// Whether the page may still be served at `now`: a signed policy ends at its expiry.
    pub(super) fn is_valid_at(&self, now: u64) -> bool {
        match self.signature {
            Signature::Valid(signed) => now < signed.expires,
            Signature::NotChecked | Signature::Refused(_) => true,
        }
    }

    /// The page in `encoding`, compressed now if this is the first time it is asked for.
    pub(super) fn encoded(&self, encoding: Encoding) -> &Encoded {
        let (page, tag) = (&self.page.body, self.tag);
        match encoding {
            Encoding::Identity => &self.page,
            Encoding::Brotli => self
                .brotli
                .get_or_init(|| Encoded::new(compress::brotli(page), tag, encoding)),
            Encoding::Gzip => self
                .gzip
                .get_or_init(|| Encoded::new(compress::gzip(page), tag, encoding)),
        }
    }
}

/// What a page's answer depends on besides its coding: the page (which holds the relay, the
/// host origin and the view policy) and its `Content-Security-Policy`. Any change to either
/// gives a new tag, so a cache that revalidates never keeps a stale page. The hash is stable
/// for a given build, so replicas of one release agree behind a shared cache; a tag that
/// differs between releases costs one full answer, never a wrong one.
fn page_tag(body: &[u8], csp: &HeaderValue) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    body.hash(&mut hasher);
    csp.as_bytes().hash(&mut hasher);
    hasher.finish()
}
