//! What a page's view policy is, as far as its host entry honours the query: the declared one;
//! for a host that signs its policies, only with a valid signature; for a host that writes its
//! views' policies itself, none but the spec's default, kept for the relay.

use crate::csp::ViewPolicy;
use crate::page_query::{PageQuery, QueryError};
use crate::signing::{PolicyKeys, SignatureRefusal, Signed};

use super::Entry;

/// A host entry's signing keys. SECURITY: a signature must be verified over the name the page
/// is served on (a per-server label included), never the entry's: signed for the entry's name,
/// one URL got its policy on every label, so a view on one server's origin could load another
/// server's signed policy and reach that server's domains.
#[derive(Debug)]
pub(super) struct Signing {
    pub(super) keys: PolicyKeys,
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

impl Signing {
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

/// The view policy of a page of `entry` served as `served_as` (its route key) for `query`, at
/// `now`, and what its signature was found to be.
pub(super) fn decide(
    entry: &Entry,
    served_as: &str,
    query: &PageQuery,
    now: u64,
) -> Result<(ViewPolicy, Signature), QueryError> {
    if entry.host_policy {
        // `?csp=` is not this host's way: its views carry their own policy.
        return Ok((
            ViewPolicy::spec_default(&entry.opt_ins),
            Signature::NotChecked,
        ));
    }
    let signature = match &entry.signing {
        None => Signature::NotChecked,
        Some(signing) => match signing.verify(served_as, query, now) {
            Ok(None) => Signature::NotChecked,
            Ok(Some(signed)) => Signature::Valid(signed),
            Err(refused) => Signature::Refused(refused),
        },
    };
    if let Signature::Refused(_) = signature {
        return Ok((ViewPolicy::spec_default(&entry.opt_ins), signature));
    }
    Ok((query.view_policy(&entry.opt_ins)?, signature))
}
