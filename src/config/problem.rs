//! What a loader reports: a problem with its file, line and key, shown with control
//! characters escaped.

use std::fmt;

/// One problem in a config file, located by key and line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub(crate) file: String,
    /// `None` for a problem with the whole file, such as one that cannot be read.
    pub(crate) line: Option<usize>,
    pub(crate) key: String,
    pub(crate) message: String,
}

impl Problem {
    /// The file's name with control characters escaped.
    pub(crate) fn file_shown(&self) -> String {
        escape_controls(&self.file)
    }

    /// The key with control characters escaped.
    pub(crate) fn key_shown(&self) -> String {
        escape_controls(&self.key)
    }

    /// The message with control characters escaped.
    pub(crate) fn message_shown(&self) -> String {
        escape_controls(&self.message)
    }
}

/// `text` with every control character escaped (`\n`, `\u{1b}`), and every character that
/// moves or reorders what follows it (`\u{2028}`, `\u{202e}`). SECURITY: file names, keys and
/// values may come from tenant tooling; a newline, a line separator, a bidirectional override
/// or a terminal escape in one must not forge a line of `check`'s output or of a text log,
/// make it read otherwise than it is, nor drive the operator's terminal. Every problem is
/// shown through this, so no message can forget it.
pub(super) fn escape_controls(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || is_layout_control(c) {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// Characters that are not `char::is_control` (Unicode's Cc) but still break or reorder a
/// line: the line and paragraph separators, and the bidirectional marks, embeddings,
/// overrides and isolates (Unicode's Zl, Zp and the Cf characters of the bidi algorithm).
fn is_layout_control(c: char) -> bool {
    matches!(
        c,
        '\u{2028}' | '\u{2029}'
            | '\u{061c}'
            | '\u{200e}' | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
    )
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file_shown())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if !self.key.is_empty() {
            write!(f, "{} ", self.key_shown())?;
        }
        f.write_str(&self.message_shown())
    }
}

/// Every error found in a file; the config is refused as a whole.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// Each problem, in file and line order.
    pub problems: Vec<Problem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, problem) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{problem}")?;
        }
        Ok(())
    }
}
