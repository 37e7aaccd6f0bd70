//! Signed policies as the service honours them: a host entry's keys, what a page's signature
//! was found to be, and the verdict the `headers` command prints. Which policy a page gets is
//! `render::decide`'s.

use crate::page_query::{PageQuery, QueryError};
use crate::signing::{PolicyKeys, SignatureRefusal, Signed};

/// A host entry's signing keys. SECURITY: a signature must be verified over the name the page
/// is served on (a per-server label included), never the entry's: signed for the entry's name,
/// one URL got its policy on every label, so a view on one server's origin could load another
/// server's signed policy and reach that server's domains.
#[derive(Clone, Copy, Debug)]
pub(super) struct Signing<'h> {
    pub(super) keys: &'h PolicyKeys,
    /// Seconds a signed URL may still be valid for (`policy_max_lifetime`).
    pub(super) max_lifetime: u64,
}

/// What a host entry that signs its policies makes of a page's query (see `verify_policy`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyVerdict {
    /// No host entry that signs serves the name: every valid `?csp=` is served.
    Unsigned,
    /// The query has no `csp`: the spec's default policy, which needs no signature.
    NothingDeclared,
    /// Signed by the host, valid until `expires` (Unix seconds).
    Signed {
        /// The first second the URL is refused at.
        expires: u64,
    },
    /// The spec's default policy instead of the declared one, and why.
    Refused(SignatureRefusal),
    /// The query cannot be read at all: the page is a `400`.
    Unreadable(QueryError),
}

/// Where a page's view policy came from, as far as signatures go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Signature {
    /// The host does not sign, or the query declares nothing: there was nothing to verify.
    NotChecked,
    /// The declared policy, signed by the host, until its expiry.
    Valid(Signed),
    /// The spec's default policy instead of the declared one.
    Refused(SignatureRefusal),
}

impl Signing<'_> {
    pub(super) fn verify(
        &self,
        served_as: &str,
        query: &PageQuery,
        now: u64,
    ) -> Result<Option<Signed>, SignatureRefusal> {
        self.keys.verify(served_as, query, now, self.max_lifetime)
    }

    /// What `verify` found, as `headers` reports it.
    pub(super) fn verdict(&self, served_as: &str, query: &PageQuery, now: u64) -> PolicyVerdict {
        match self.verify(served_as, query, now) {
            Ok(None) => PolicyVerdict::NothingDeclared,
            Ok(Some(signed)) => PolicyVerdict::Signed {
                expires: signed.expires,
            },
            Err(refused) => PolicyVerdict::Refused(refused),
        }
    }
}
