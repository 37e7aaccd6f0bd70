//! Build-time stripping of the proxy page's own sources (`proxy-page/`): whole-line comments,
//! trailing `// ` comments, indentation and blank lines go; every line break stays, so no
//! statement can run into the next. Written for those two files and checked on them; it is not
//! a general minifier. `build.rs` uses it; the readable sources stay what reviewers read.

/// The relay's JavaScript with comments and indentation stripped.
pub fn javascript(source: &str) -> String {
    let mut out = String::with_capacity(source.len() / 2);
    for line in source.lines() {
        let code = strip_trailing_comment(line.trim());
        if code.is_empty() || code.starts_with("//") {
            continue;
        }
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// The page's HTML (and its style sheet) with indentation, blank lines and whole-line CSS
/// comments stripped; the `/*…*/` slots the server fills are kept.
pub fn html(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    for line in source.lines() {
        let line = line.trim();
        let css_comment = line.starts_with("/*") && line.ends_with("*/") && line.contains(' ');
        if line.is_empty() || css_comment {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// `code // comment` → `code`, when the ` // ` is outside any string on the line (an even
/// number of each quote before it) and the line has no template literal or regular expression
/// that could hide one.
fn strip_trailing_comment(line: &str) -> &str {
    if line.contains('`') {
        return line;
    }
    let mut from = 0;
    while let Some(at) = line[from..].find(" // ") {
        let cut = from + at;
        let before = &line[..cut];
        let quotes_closed = before.matches('\'').count().is_multiple_of(2)
            && before.matches('"').count().is_multiple_of(2);
        if quotes_closed && !before.contains("/(") && !before.contains("= /") {
            return before.trim_end();
        }
        from = cut + 1;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_indentation_go_and_strings_stay() {
        let source = "// a comment line\n  var a = 1; // trailing\n\n  var b = 'http://x // y'; // note\n  var c = \"a // b\";\n  f(/a\\/\\/b/); // regex\n";
        assert_eq!(
            javascript(source),
            "var a = 1;\nvar b = 'http://x // y';\nvar c = \"a // b\";\nf(/a\\/\\/b/);\n"
        );
    }

    #[test]
    fn the_page_keeps_its_slots() {
        let page = "<style>\n  /* a note */\n  a { b: c }\n</style>\n<script>/*SANDBOX_CONFIG*/</script>\n  /*RELAY_JS*/\n";
        assert_eq!(
            html(page),
            "<style>\na { b: c }\n</style>\n<script>/*SANDBOX_CONFIG*/</script>\n/*RELAY_JS*/\n"
        );
    }
}
