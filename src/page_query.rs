//! The page's query, read once: the parameters this service reads, each at most once, and the
//! whole query within `limits.max_query_bytes`. Every other parameter is the host's own (a
//! host library's version or theme) and is ignored.
//!
//! Everything downstream takes its part of one [`PageQuery`]: the embedder rule its `embedder`,
//! the signature its `csp`, `expires` and `signature`, the view policy its `csp`. No one splits
//! the raw query again, so no two readers can disagree on which of two values counts.

use crate::csp::{DeclarationError, OptIns, ViewPolicy};
use crate::vocabulary;

/// The parameter that carries the host's declared domains, as JSON.
pub const CSP_PARAMETER: &str = vocabulary::CSP_PARAMETER;
/// The declared domains as mcp-use's inspector names them (the same JSON): read as `csp` is,
/// where the query has no `csp`, so that its views mount with their domains in one load.
pub const WIDGET_CSP_PARAMETER: &str = vocabulary::WIDGET_CSP_PARAMETER;
/// The parameter a signed URL adds beside `csp` for its expiry, in Unix seconds (see `signing`).
pub const EXPIRES_PARAMETER: &str = "expires";
/// The parameter a signed URL adds beside `csp` for its signature, as hex (see `signing`).
pub const SIGNATURE_PARAMETER: &str = "signature";
/// The parameter naming the host page's exact origin (needed for a host pattern).
pub const EMBEDDER_PARAMETER: &str = "embedder";
/// The same, as LibreChat names it in its sandbox URL: read as `embedder` is.
pub const PARENT_ORIGIN_PARAMETER: &str = "parentOrigin";
/// LibreChat's ask for a stricter policy (`strictCsp=1`): the page's view policy then gets none
/// of the host entry's opt-ins that let a view run code it builds (see `OptIns::strict`).
pub const STRICT_CSP_PARAMETER: &str = "strictCsp";
/// The parameter that marks a page the relay asked for again, with the `csp` its resource
/// declared: the service counts it.
pub const UPGRADE_PARAMETER: &str = vocabulary::UPGRADE_PARAMETER;

/// The parameters this service reads, in the order the docs list them.
const PARAMETERS: [&str; 8] = [
    CSP_PARAMETER,
    WIDGET_CSP_PARAMETER,
    EXPIRES_PARAMETER,
    SIGNATURE_PARAMETER,
    EMBEDDER_PARAMETER,
    PARENT_ORIGIN_PARAMETER,
    STRICT_CSP_PARAMETER,
    UPGRADE_PARAMETER,
];

/// A page's query: each parameter this service reads, percent-decoded, if present.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageQuery {
    values: [Option<String>; PARAMETERS.len()],
}

/// Why a page's query cannot be served at all: answered with `400` and this text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    /// Longer than `limits.max_query_bytes`.
    #[error("the query is {len} bytes; the limit is {limit} (limits.max_query_bytes)")]
    TooLong {
        /// The query's bytes.
        len: usize,
        /// `limits.max_query_bytes`.
        limit: usize,
    },
    /// SECURITY: a parameter must count once. Were a second value kept or dropped, a cache,
    /// a signer or a front proxy that reads the other one would decide for another page.
    /// A parameter the service reads, given twice.
    #[error("the query has more than one {0} parameter")]
    Repeated(&'static str),
    /// The `csp` parameter cannot be read.
    #[error(transparent)]
    Declaration(#[from] DeclarationError),
    /// `embedder` and `parentOrigin` name different origins: which one the page is for is not
    /// the service's to guess.
    #[error(
        "the query's {EMBEDDER_PARAMETER} and {PARENT_ORIGIN_PARAMETER} name different origins"
    )]
    Embedders,
}

/// The origin a query names for the page's embedder, and the parameter that names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NamedEmbedder<'q> {
    /// `embedder`, or LibreChat's `parentOrigin`.
    pub parameter: &'static str,
    /// The origin, as written.
    pub origin: &'q str,
}

impl PageQuery {
    /// Reads a raw (still percent-encoded) query string.
    pub fn parse(raw: &str, max_query_bytes: usize) -> Result<Self, QueryError> {
        if raw.len() > max_query_bytes {
            return Err(QueryError::TooLong {
                len: raw.len(),
                limit: max_query_bytes,
            });
        }
        let mut query = PageQuery::default();
        for (key, value) in url::form_urlencoded::parse(raw.as_bytes()) {
            let Some(slot) = PARAMETERS.iter().position(|name| *name == key) else {
                continue;
            };
            if query.values[slot].replace(value.into_owned()).is_some() {
                return Err(QueryError::Repeated(PARAMETERS[slot]));
            }
        }
        if let (Some(embedder), Some(parent)) = (
            query.value(EMBEDDER_PARAMETER),
            query.value(PARENT_ORIGIN_PARAMETER),
        ) && embedder != parent
        {
            return Err(QueryError::Embedders);
        }
        Ok(query)
    }

    fn value(&self, name: &str) -> Option<&str> {
        let slot = PARAMETERS.iter().position(|known| *known == name)?;
        self.values[slot].as_deref()
    }

    /// The declared domains, as JSON not yet read: `csp`, or else `widget_csp`. What a
    /// signature covers and what the view policy is built from, so the two never differ.
    pub fn csp(&self) -> Option<&str> {
        self.value(CSP_PARAMETER)
            .or_else(|| self.value(WIDGET_CSP_PARAMETER))
    }

    pub(crate) fn expires(&self) -> Option<&str> {
        self.value(EXPIRES_PARAMETER)
    }

    pub(crate) fn signature(&self) -> Option<&str> {
        self.value(SIGNATURE_PARAMETER)
    }

    /// The origin the page is to be pinned to, as written: `embedder`, or `parentOrigin`
    /// (the two agree where both are given).
    pub(crate) fn embedder(&self) -> Option<NamedEmbedder<'_>> {
        [EMBEDDER_PARAMETER, PARENT_ORIGIN_PARAMETER]
            .into_iter()
            .find_map(|parameter| {
                let origin = self.value(parameter)?;
                Some(NamedEmbedder { parameter, origin })
            })
    }

    /// Whether the host asks for the stricter policy (`strictCsp=1`; any other value is not
    /// an ask, as LibreChat reads it).
    pub(crate) fn is_strict(&self) -> bool {
        self.value(STRICT_CSP_PARAMETER) == Some("1")
    }

    /// Whether the relay asked for this page (`upgrade=1`): it reloads its own page once,
    /// marked so, when a resource declares domains that the served policy lacks.
    pub(crate) fn is_policy_upgrade(&self) -> bool {
        self.value(UPGRADE_PARAMETER) == Some("1")
    }

    /// The view policy the query declares: the spec's default when it has no `csp`, the
    /// validated template when it has one, with the host's opt-ins either way.
    pub fn view_policy(&self, opt_ins: &OptIns) -> Result<ViewPolicy, QueryError> {
        Ok(ViewPolicy::declared_by(self.csp(), opt_ins)?)
    }
}

/// The view policy of a raw query, for callers that have nothing else to read from it (the
/// tests and fuzz targets that hold the service to a reference).
pub fn policy_for_query(
    raw: &str,
    max_query_bytes: usize,
    opt_ins: &OptIns,
) -> Result<ViewPolicy, QueryError> {
    PageQuery::parse(raw, max_query_bytes)?.view_policy(opt_ins)
}
