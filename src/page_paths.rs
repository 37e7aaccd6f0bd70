//! The paths the proxy page answers on (`page_paths`): the URLs host libraries already use, so a
//! host's existing sandbox URL keeps working. Every other path is a `404`.

use std::fmt;
use std::str::FromStr;

/// At most this many paths per host entry: a short list, looked through for each request.
const MAX_PATHS: usize = 16;
/// A path longer than this is no sandbox URL anyone writes.
const MAX_PATH_BYTES: usize = 200;

/// Why a list of paths is no entry's `page_paths`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathListError {
    /// No path at all.
    #[error("must hold a path, like [\"/\", \"/sandbox.html\"]")]
    Empty,
    /// More than `MAX_PATHS`.
    #[error("holds {0} paths: at most {MAX_PATHS}")]
    TooMany(usize),
    /// One of them twice.
    #[error("names {0:?} twice")]
    Twice(String),
}

/// One path of the page, as a request's path must equal it (case-sensitive, no query).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagePath(String);

impl FromStr for PagePath {
    type Err = String;

    /// A path of plain segments: `/`, then letters, digits, `-`, `.`, `_` and `~` separated by
    /// single `/`; no `.` or `..` segment, no percent-encoding, no query or fragment. So a path
    /// is one spelling of itself, and never one a browser or a front end would rewrite.
    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let Some(rest) = raw.strip_prefix('/') else {
            return Err(format!("{raw:?} does not start with \"/\""));
        };
        if raw.len() > MAX_PATH_BYTES {
            return Err(format!("{raw:?} is over {MAX_PATH_BYTES} bytes"));
        }
        let plain = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~');
        if let Some(bad) = rest.bytes().find(|b| !plain(*b) && *b != b'/') {
            return Err(format!(
                "{raw:?} holds {:?}: a page path is letters, digits, -, ., _, ~ and / only",
                char::from(bad)
            ));
        }
        let segments: Vec<&str> = rest.split('/').collect();
        let last = segments.len() - 1;
        // An empty segment only at the end: `/sandbox/` is a path of its own, `/a//b` is not.
        let odd_segment = segments.iter().enumerate().any(|(i, segment)| {
            matches!(*segment, "." | "..") || (segment.is_empty() && i > 0 && i < last)
        });
        if odd_segment || rest.starts_with('/') {
            return Err(format!(
                "{raw:?} has an empty, \".\" or \"..\" segment: a browser would read it as another path"
            ));
        }
        if raw == crate::limits::REPORT_PATH {
            return Err(format!(
                "{raw:?} is where browsers send CSP reports on every sandbox name: not a page path"
            ));
        }
        Ok(PagePath(raw.to_owned()))
    }
}

/// The paths one host entry's page answers on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PagePaths(Vec<PagePath>);

impl Default for PagePaths {
    /// `/` and `/sandbox.html` (this service's own), `/sandbox` (what MCP Inspector 2.x makes of
    /// an address ending in `/`), `/proxy.html` and `/mcp-app-sandbox` (the paths other hosts'
    /// documentation gives).
    fn default() -> Self {
        let paths = [
            "/",
            "/sandbox.html",
            "/sandbox",
            "/proxy.html",
            "/mcp-app-sandbox",
        ];
        PagePaths(paths.into_iter().map(|p| PagePath(p.to_owned())).collect())
    }
}

impl PagePaths {
    /// One to `MAX_PATHS` paths, each once.
    pub fn new(paths: Vec<PagePath>) -> Result<Self, PathListError> {
        if paths.is_empty() {
            return Err(PathListError::Empty);
        }
        if paths.len() > MAX_PATHS {
            return Err(PathListError::TooMany(paths.len()));
        }
        for (i, path) in paths.iter().enumerate() {
            if paths[..i].contains(path) {
                return Err(PathListError::Twice(path.0.clone()));
            }
        }
        Ok(PagePaths(paths))
    }

    /// Whether a request's path is one of them.
    pub fn contains(&self, path: &str) -> bool {
        self.0.iter().any(|p| p.0 == path)
    }
}

impl fmt::Display for PagePaths {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let paths: Vec<&str> = self.0.iter().map(|p| p.0.as_str()).collect();
        f.write_str(&paths.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_path_is_one_plain_spelling() {
        for good in [
            "/",
            "/sandbox",
            "/sandbox/",
            "/mcp/proxy.html",
            "/a-b_c~d.e",
        ] {
            assert!(good.parse::<PagePath>().is_ok(), "{good}");
        }
        for bad in [
            "", "sandbox", "//", "/a//b", "/a//", "/./a", "/a/..", "/a?b", "/a#b", "/%61", "/a b",
            "/é",
        ] {
            assert!(bad.parse::<PagePath>().is_err(), "{bad}");
        }
    }
}
