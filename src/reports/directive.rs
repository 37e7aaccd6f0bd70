//! The directives a report may name: a fixed list, so that what is counted per directive is
//! bounded by this file, never by what clients send.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Every fetch, document and navigation directive CSP 3 and its drafts define, then `other`
/// for anything else a report names.
pub(crate) const DIRECTIVES: [&str; 24] = [
    "default-src",
    "script-src",
    "script-src-elem",
    "script-src-attr",
    "style-src",
    "style-src-elem",
    "style-src-attr",
    "img-src",
    "font-src",
    "connect-src",
    "media-src",
    "object-src",
    "frame-src",
    "child-src",
    "worker-src",
    "manifest-src",
    "fenced-frame-src",
    "base-uri",
    "form-action",
    "frame-ancestors",
    "trusted-types",
    "require-trusted-types-for",
    "webrtc",
    "other",
];

/// Reported violations of one host entry, by directive (an index into [`DIRECTIVES`]).
#[derive(Debug, Default)]
pub(crate) struct ViolationCounts([AtomicU64; DIRECTIVES.len()]);

impl ViolationCounts {
    pub(crate) fn count(&self, directive: usize) {
        if let Some(count) = self.0.get(directive) {
            count.fetch_add(1, Relaxed);
        }
    }

    /// Each directive with its count.
    pub(crate) fn counts(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        DIRECTIVES
            .iter()
            .copied()
            .zip(self.0.iter().map(|c| c.load(Relaxed)))
    }
}

/// The index in [`DIRECTIVES`] of what a report names; `other` for anything not listed.
/// Browsers send lower case; a report in another case is read as the directive it names.
pub(crate) fn directive_index(named: &str) -> usize {
    DIRECTIVES
        .iter()
        .position(|d| d.eq_ignore_ascii_case(named))
        .unwrap_or(DIRECTIVES.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_directive_is_itself_and_anything_else_is_other() {
        assert_eq!(DIRECTIVES[directive_index("connect-src")], "connect-src");
        assert_eq!(DIRECTIVES[directive_index("IMG-SRC")], "img-src");
        for named in ["", "connect", "script-src ", "x".repeat(10_000).as_str()] {
            assert_eq!(DIRECTIVES[directive_index(named)], "other");
        }
    }
}
