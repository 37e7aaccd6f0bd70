//! Build-time stripping of the proxy page's own sources (`proxy-page/`): whole-line comments,
//! trailing `// ` comments, indentation, blank lines, and in the relay the spaces beside
//! punctuation and the line breaks after `;`, `{`, `,`, `(` and `[` go; every other line break
//! stays, so no statement can run into the next, and no name, string or regular expression
//! changes. Written for those two files and checked on them; it is
//! not a general minifier (`tests/relay/faces.test.mjs` holds the relay's tokens to its
//! sources'). `build.rs` uses it; the readable sources stay what reviewers read.

/// The relay's JavaScript with comments, indentation and the spaces beside punctuation
/// stripped.
pub fn javascript(source: &str) -> String {
    let mut out = String::with_capacity(source.len() / 2);
    for line in source.lines() {
        let code = strip_trailing_comment(line.trim());
        if code.is_empty() || code.starts_with("//") {
            continue;
        }
        squeeze(code, &mut out);
        if !out.ends_with(CONTINUES) {
            out.push('\n');
        }
    }
    out
}

/// What a line may end with and have the next joined to it: after these, no semicolon is ever
/// inserted and no rule of JavaScript reads a line break, so the break changes nothing. After
/// anything else (`}` closing an expression, `)`, a name) a break can end a statement, and it
/// stays.
const CONTINUES: [char; 5] = [';', '{', ',', '(', '['];

/// Punctuation a space beside may go: no token of JavaScript runs across it. `/` and `.` are
/// not among them (a division, a regular expression, a comment, a number's dot).
const PUNCTUATION: &str = "=+-*%<>!&|?:,;{}()[]";

/// Words after which a `/` starts a regular expression, not a division.
const BEFORE_REGEX: [&str; 10] = [
    "return", "typeof", "case", "do", "else", "in", "of", "new", "void", "throw",
];

/// `line` (one line of code, comments gone) onto `out` without the spaces beside punctuation,
/// strings and regular expressions copied as they are. A space stays between two of `+` and
/// `-` (`a - -b`), and where `<!` or `->` would form: in a `<script>`, `<!--` and `-->` begin
/// comments.
fn squeeze(line: &str, out: &mut String) {
    let chars: Vec<char> = line.chars().collect();
    let mut previous: Option<char> = None;
    let mut word = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == ' ' {
            let next = chars[i..].iter().find(|c| **c != ' ').copied();
            i += chars[i..].iter().take_while(|c| **c == ' ').count();
            if !(previous.is_some_and(is_punctuation) || next.is_some_and(is_punctuation))
                || runs_together(previous, next)
            {
                out.push(' ');
            }
            continue;
        }
        let end = match c {
            '\'' | '"' => literal_end(&chars, i, c),
            '/' if starts_regex(previous, &word) => regex_end(&chars, i),
            _ => i + 1,
        };
        out.extend(&chars[i..end]);
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' {
            word.push(c);
        } else {
            word.clear();
        }
        previous = Some(chars[end - 1]);
        i = end;
    }
}

fn is_punctuation(c: char) -> bool {
    PUNCTUATION.contains(c)
}

/// Whether `previous` and `next`, written together, would read as another token.
fn runs_together(previous: Option<char>, next: Option<char>) -> bool {
    let (Some(a), Some(b)) = (previous, next) else {
        return false;
    };
    matches!((a, b), ('+' | '-', '+' | '-') | ('<', '!') | ('-', '>'))
}

/// Whether a `/` after `previous` (the last character written, `word` the name it ends, if
/// any) starts a regular expression: at the start of a line, after punctuation other than a
/// closing bracket, or after a keyword that takes an expression.
fn starts_regex(previous: Option<char>, word: &str) -> bool {
    match previous {
        None => true,
        Some(')' | ']') => false,
        Some(c) if is_punctuation(c) => true,
        Some(_) => BEFORE_REGEX.contains(&word),
    }
}

/// The index past a string literal opened by `quote` at `start` (the line's end if it never
/// closes: the source is checked JavaScript, so it does).
fn literal_end(chars: &[char], start: usize, quote: char) -> usize {
    let mut i = start + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == quote => return i + 1,
            _ => i += 1,
        }
    }
    chars.len()
}

/// The index past a regular expression literal opened at `start`, its flags included: a `/`
/// inside a class (`[/]`) or escaped does not close it.
fn regex_end(chars: &[char], start: usize) -> usize {
    let mut i = start + 1;
    let mut in_class = false;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '[' => {
                in_class = true;
                i += 1;
            }
            ']' => {
                in_class = false;
                i += 1;
            }
            '/' if !in_class => {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_alphabetic() {
                    i += 1;
                }
                return i;
            }
            _ => i += 1,
        }
    }
    chars.len()
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
            "var a=1;var b='http://x // y';var c=\"a // b\";f(/a\\/\\/b/);"
        );
    }

    #[test]
    fn spaces_beside_punctuation_go_and_tokens_stay() {
        let source = "if (a && b) { x = f(y, 'a , b'); }\nreturn / +/.test(z) ? i / 2 : -1;\nvar c = a - -b + +d;\nif (x < !y) z = w-- > 0;\nvar r = [/ [/] /g, \"q = 1\"];\n";
        assert_eq!(
            javascript(source),
            "if(a&&b){x=f(y,'a , b');}\nreturn / +/.test(z)?i / 2:-1;var c=a- -b+ +d;if(x< !y)z=w-- >0;var r=[/ [/] /g,\"q = 1\"];"
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
