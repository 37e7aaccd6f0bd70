//! Head limits and refusals: what an HTTP/1 head may spend on what, and why the head reader
//! (`io::head`) refused one.
//!
//! hyper answers a head it refuses itself, with a bare status line and none of the security
//! headers. So the head reader refuses first, and hands hyper a plain request of its own in the
//! refused head's place (`connection: close`, and nothing after it). The connection notes which
//! of its requests that is (`io::activity`), and gives the handler the [`Refusal`] with it, as a
//! typed value in the request's extensions: the front door answers it with its own error.

/// At most this many fields in a head, as hyper is configured (its default `max_headers`).
pub(crate) const MAX_FIELDS: usize = 100;

/// What a head may hold besides its query: method, path, version and their separators.
pub(crate) const REQUEST_LINE_SLACK: usize = 4096;

/// The longest request target hyper takes; a longer one is its own bare `414`.
pub(crate) const MAX_TARGET: usize = u16::MAX as usize - 1;

/// The highest `limits.max_query_bytes`: the request line may then be [`MAX_TARGET`] long,
/// and the target within it is shorter, so hyper never answers a target itself.
pub(crate) const MAX_QUERY_BYTES: usize = MAX_TARGET - REQUEST_LINE_SLACK;

/// The longest field name hyper takes; a longer one is its own bare `431`.
pub(crate) const MAX_FIELD_NAME: usize = (1 << 16) - 1;

/// Why a head was not passed on. The service answers each with its own status and text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The fields other than `Cookie` are over `limits.max_header_bytes`, or more than
    /// `MAX_FIELDS`.
    FieldsTooLarge,
    /// The request line is longer than the query limit and the slack allow.
    TargetTooLong,
    /// hyper could not read it.
    Malformed,
    /// It announces a body (`Content-Length` other than 0, or `Transfer-Encoding`), and is no
    /// report.
    Body,
    /// A report whose `Content-Length` is over `reports::MAX_REPORT_BODY`.
    ReportTooLarge,
}

impl Refusal {
    /// The request hyper reads in a refused head's place: answered by what the request's
    /// extensions carry, never by anything in it (it names no host).
    pub(crate) const REQUEST: &'static str = "GET / HTTP/1.1\r\nconnection: close\r\n\r\n";
}

/// How much of a head may be spent on what. Every byte the head reader keeps is charged to one
/// of these first.
#[derive(Clone, Copy, Debug)]
pub struct HeadLimits {
    /// Bytes of the request line, its line ending included (empty lines before it are
    /// dropped and cost nothing).
    pub request_line: usize,
    /// Bytes of the head after its request line, line endings and the empty line that ends it
    /// included, with each `Cookie` line counted as its marker `cookie: -\r\n`.
    pub fields: usize,
}

impl HeadLimits {
    /// The most a head can be once filtered: what hyper's buffer must hold.
    pub fn filtered_max(&self) -> usize {
        self.request_line + self.fields
    }

    /// hyper's limit on its read buffer and on a head: above the largest filtered head, so
    /// that hyper only ever sees heads the head reader checked and never refuses one itself
    /// (its answers carry no headers).
    pub fn hyper_buffer(&self) -> usize {
        (self.filtered_max() + 1024).max(8192)
    }
}

/// The path of the CSP report endpoint, on every sandbox name the service answers.
pub const REPORT_PATH: &str = "/csp-report";

/// The most bytes a report's body may have. A report carries the policy it broke
/// (`original-policy`), so this is what the longest policy a page's query can declare needs;
/// a larger body is a `413`, counted.
pub const MAX_REPORT_BODY: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_line_within_the_highest_query_limit_fits_hypers_target_limit() {
        // The shortest method, the version and the shortest line end around the target.
        let around_target = "A  HTTP/1.1\n".len();
        let longest_line = MAX_QUERY_BYTES + REQUEST_LINE_SLACK;
        assert!(longest_line - around_target <= MAX_TARGET);
    }
}
