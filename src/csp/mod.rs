//! The view policy: `?csp=` JSON in, one validated Content-Security-Policy value out.
//!
//! The inner view frame inherits the proxy page's policy, so this header *is* the view's
//! sandbox. Every declared domain is parsed as a CSP host-source; anything that is not one is
//! dropped with a reason, never passed through: the spec lets a host narrow, never widen.
//!
//! By concern: `declared` reads the JSON, `source` holds each entry to the host-source grammar,
//! `domains` keeps what survives per list, `template` writes the spec's directives with the
//! host's `opt_in`s; [`ViewPolicy`] puts them together.

mod declared;
mod domains;
mod opt_in;
mod source;
mod template;

pub use declared::{DeclarationError, Declared};
pub use domains::{DomainList, Domains, Dropped};
pub use opt_in::{OptIn, OptIns};
pub use source::{DropReason, HostSource};
pub use template::DEFAULT_POLICY;

use template::template;

/// The policy a view runs under, and what was refused on the way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ViewPolicy {
    /// `None` when the request carried no `?csp=`: the spec's restrictive default applies.
    pub domains: Option<Domains>,
    /// Every declared entry that is not a safe host-source, with why.
    pub dropped: Vec<Dropped>,
    header: String,
}

impl ViewPolicy {
    /// The policy when no `?csp=` was given: the spec's default, with the host's opt-ins.
    pub fn spec_default(opt_ins: &OptIns) -> Self {
        let header = if opt_ins.is_empty() {
            DEFAULT_POLICY.to_owned()
        } else {
            template(&Domains::default(), opt_ins, true)
        };
        ViewPolicy {
            domains: None,
            dropped: Vec::new(),
            header,
        }
    }

    /// Validates each declared entry and builds the spec's template from what survives, with
    /// the host's opt-ins.
    pub fn from_declared(declared: &Declared, opt_ins: &OptIns) -> Self {
        let mut domains = Domains::default();
        let mut dropped = Vec::new();
        for (list, entries) in &declared.lists {
            for entry in entries {
                match entry.parse::<HostSource>() {
                    Ok(source) => {
                        domains.list_mut(*list).insert(source);
                    }
                    Err(reason) => dropped.push(Dropped {
                        list: *list,
                        entry: entry.clone(),
                        reason,
                    }),
                }
            }
        }
        let header = template(&domains, opt_ins, false);
        ViewPolicy {
            domains: Some(domains),
            dropped,
            header,
        }
    }

    /// The policy a `csp` parameter declares: the spec's default when there is none, the
    /// validated template when there is.
    pub fn declared_by(csp: Option<&str>, opt_ins: &OptIns) -> Result<Self, DeclarationError> {
        match csp {
            None => Ok(ViewPolicy::spec_default(opt_ins)),
            Some(json) => Ok(ViewPolicy::from_declared(
                &Declared::from_json(json)?,
                opt_ins,
            )),
        }
    }

    /// The `Content-Security-Policy` value for the page (and so for the view).
    pub fn header(&self) -> &str {
        &self.header
    }
}
