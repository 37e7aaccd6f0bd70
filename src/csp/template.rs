//! The spec's policy template, filled in: a fixed directive order, the validated sources, and the
//! host's opt-ins in their places.

use std::collections::BTreeSet;

use super::domains::{DomainList, Domains};
use super::opt_in::{OptIn, OptIns};
use super::source::HostSource;

/// The spec's policy for a resource that declares no domains at all.
pub const DEFAULT_POLICY: &str = "default-src 'none'; script-src 'self' 'unsafe-inline'; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; \
     connect-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'self'";

/// The spec's template, filled in, with the host's opt-ins. Directive order is fixed; domains
/// are sorted. `spec_default`: the policy for a resource that declares nothing (no `font-src`,
/// `connect-src 'none'`), which with no opt-in is exactly [`DEFAULT_POLICY`].
pub(super) fn template(d: &Domains, opt_ins: &OptIns, spec_default: bool) -> String {
    let mut out = String::with_capacity(512);
    let mut directive =
        |name: &str, fixed: &[&str], sources: &BTreeSet<HostSource>, empty: &str| {
            if !out.is_empty() {
                out.push_str("; ");
            }
            out.push_str(name);
            let empty = if sources.is_empty() { empty } else { "" };
            for word in fixed.iter().chain([&empty]) {
                if !word.is_empty() {
                    out.push(' ');
                    out.push_str(word);
                }
            }
            for source in sources {
                out.push(' ');
                out.push_str(source.as_str());
            }
        };
    let none = BTreeSet::new();
    let eval = if opt_ins.has(OptIn::UnsafeEval) {
        "'unsafe-eval'"
    } else {
        ""
    };
    let wasm = if opt_ins.has(OptIn::WasmUnsafeEval) {
        "'wasm-unsafe-eval'"
    } else {
        ""
    };
    let data = if opt_ins.has(OptIn::ScriptData) {
        "data:"
    } else {
        ""
    };
    let blob = if opt_ins.has(OptIn::BlobMedia) {
        "blob:"
    } else {
        ""
    };
    let workers = opt_ins.has(OptIn::WorkerBlob);
    if spec_default {
        // The spec's own order (see DEFAULT_POLICY), the opt-ins in their places.
        directive("default-src", &["'none'"], &none, "");
        directive(
            "script-src",
            &["'self'", "'unsafe-inline'", eval, wasm, data],
            &none,
            "",
        );
        directive("style-src", &["'self'", "'unsafe-inline'"], &none, "");
        directive("img-src", &["'self'", "data:", blob], &none, "");
        directive("media-src", &["'self'", "data:", blob], &none, "");
        if workers {
            directive("worker-src", &["'self'", "blob:"], &none, "");
        }
        directive("connect-src", &["'none'"], &none, "");
        directive("object-src", &["'none'"], &none, "");
        directive("frame-src", &[], &none, "'none'");
        directive("base-uri", &[], &none, "'self'");
        return out;
    }
    directive("default-src", &["'none'"], &none, "");
    directive(
        "script-src",
        &["'self'", "'unsafe-inline'", eval, wasm, data],
        d.list(DomainList::Resource),
        "",
    );
    directive(
        "style-src",
        &["'self'", "'unsafe-inline'"],
        d.list(DomainList::Resource),
        "",
    );
    directive("connect-src", &["'self'"], d.list(DomainList::Connect), "");
    directive(
        "img-src",
        &["'self'", "data:", blob],
        d.list(DomainList::Resource),
        "",
    );
    directive("font-src", &["'self'"], d.list(DomainList::Resource), "");
    directive(
        "media-src",
        &["'self'", "data:", blob],
        d.list(DomainList::Resource),
        "",
    );
    if workers {
        directive(
            "worker-src",
            &["'self'", "blob:"],
            d.list(DomainList::Resource),
            "",
        );
    }
    directive("frame-src", &[], d.list(DomainList::Frame), "'none'");
    directive("object-src", &["'none'"], &none, "");
    directive("base-uri", &[], d.list(DomainList::BaseUri), "'self'");
    out
}
