//! The spec's policy template, filled in: a fixed directive order, the validated sources, and the
//! host's opt-ins in their places.

use std::collections::BTreeSet;

use super::domains::Domains;
use super::opt_in::{OptIn, OptIns};

/// The spec's policy for a resource that declares no domains at all.
pub const DEFAULT_POLICY: &str = "default-src 'none'; script-src 'self' 'unsafe-inline'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; \
     connect-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'self'";

/// The spec's template, filled in, with the host's opt-ins. Directive order is fixed; domains
/// are sorted. Which list fills a directive, and what each opt-in adds where, are the
/// vocabulary's (`LIST_DIRECTIVES`, `OPT_INS`), which the relay reads too. `spec_default`: the
/// policy for a resource that declares nothing (no `font-src`, `connect-src 'none'`), which with
/// no opt-in is exactly [`DEFAULT_POLICY`].
pub(super) fn template(d: &Domains, opt_ins: &OptIns, spec_default: bool) -> String {
    let mut out = String::with_capacity(512);
    let mut directive = |name: &str, fixed: &[&'static str], empty: &'static str| {
        let sources = if spec_default { None } else { d.filling(name) };
        if !out.is_empty() {
            out.push_str("; ");
        }
        out.push_str(name);
        let opted = opt_ins.sources_in(name);
        let empty = sources.is_none_or(BTreeSet::is_empty).then_some(empty);
        for word in fixed.iter().copied().chain(opted).chain(empty) {
            if !word.is_empty() {
                out.push(' ');
                out.push_str(word);
            }
        }
        for source in sources.into_iter().flatten() {
            out.push(' ');
            out.push_str(source.as_str());
        }
    };
    let workers = opt_ins.has(OptIn::WorkerBlob);
    if spec_default {
        // The spec's own order (see DEFAULT_POLICY), the opt-ins in their places.
        directive("default-src", &["'none'"], "");
        directive("script-src", &["'self'", "'unsafe-inline'"], "");
        directive("style-src", &["'self'", "'unsafe-inline'"], "");
        directive("img-src", &["'self'", "data:"], "");
        directive("media-src", &["'self'", "data:"], "");
        if workers {
            directive("worker-src", &["'self'"], "");
        }
        directive("connect-src", &["'none'"], "");
        directive("object-src", &["'none'"], "");
        directive("frame-src", &[], "'none'");
        directive("base-uri", &[], "'self'");
        return out;
    }
    directive("default-src", &["'none'"], "");
    directive("script-src", &["'self'", "'unsafe-inline'"], "");
    directive("style-src", &["'self'", "'unsafe-inline'"], "");
    directive("connect-src", &["'self'"], "");
    directive("img-src", &["'self'", "data:"], "");
    directive("font-src", &["'self'"], "");
    directive("media-src", &["'self'", "data:"], "");
    if workers {
        directive("worker-src", &["'self'"], "");
    }
    directive("frame-src", &[], "'none'");
    directive("object-src", &["'none'"], "");
    directive("base-uri", &[], "'self'");
    out
}
