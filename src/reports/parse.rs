//! A report body read as browsers send it, with the stack's JSON parser, into the violations
//! it names: their directive and what was blocked, nothing else.
//!
//! Two shapes arrive. `report-uri` sends `application/csp-report`, one object whose
//! `csp-report` member holds the report in kebab-case (`effective-directive`, `blocked-uri`);
//! WebKit adds `type` and `url` beside it. The Reporting API sends `application/reports+json`,
//! an array of `{type: "csp-violation", body: {effectiveDirective, blockedURL}}`. A report
//! with no `effective-directive` names its `violated-directive` (CSP 2).

use serde_json::{Map, Value};

use super::blocked::Blocked;
use super::directive::{DIRECTIVES, directive_index};

/// The most violations one body may carry: the Reporting API batches a document's reports.
/// A longer array is refused as a whole.
pub(crate) const MAX_REPORTS_PER_BODY: usize = 32;

/// The two media types the endpoint takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MediaType {
    /// `application/csp-report`: `report-uri`.
    CspReport,
    /// `application/reports+json`: the Reporting API.
    Reports,
}

impl MediaType {
    /// The media type of a `Content-Type` value, parameters ignored; `None` for any other.
    pub(crate) fn of(content_type: &[u8]) -> Option<MediaType> {
        let essence = content_type.split(|b| *b == b';').next()?.trim_ascii();
        if essence.eq_ignore_ascii_case(b"application/csp-report") {
            Some(MediaType::CspReport)
        } else if essence.eq_ignore_ascii_case(b"application/reports+json") {
            Some(MediaType::Reports)
        } else {
            None
        }
    }
}

/// One violation, as kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Violation {
    /// An index into `DIRECTIVES`.
    pub(crate) directive: usize,
    pub(crate) blocked: Blocked,
}

/// Why a report body was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    /// A `Content-Type` other than the two the endpoint takes.
    #[error("not a report's media type")]
    MediaType,
    /// Not JSON, or nested deeper than serde_json's limit.
    #[error("the body is not JSON")]
    NotJson,
    /// JSON that names no CSP violation with a directive.
    #[error("the body is not a CSP report")]
    NotAReport,
    /// A batch longer than [`MAX_REPORTS_PER_BODY`].
    #[error("the body holds more than {MAX_REPORTS_PER_BODY} reports")]
    TooMany,
}

/// The violations a body of `media_type` names. Reports of other types in a Reporting API
/// batch (deprecations, interventions) are skipped; a body with no CSP report at all is
/// refused.
pub(crate) fn parse(media_type: MediaType, body: &[u8]) -> Result<Vec<Violation>, Malformed> {
    // serde_json refuses nesting deeper than 128 levels, so no body can exhaust the stack.
    let value: Value = serde_json::from_slice(body).map_err(|_| Malformed::NotJson)?;
    let violations = match (media_type, &value) {
        (MediaType::CspReport, Value::Object(object)) => one_report(object).into_iter().collect(),
        (MediaType::Reports, Value::Array(reports)) => {
            if reports.len() > MAX_REPORTS_PER_BODY {
                return Err(Malformed::TooMany);
            }
            reports
                .iter()
                .filter_map(Value::as_object)
                .filter_map(one_report)
                .collect()
        }
        _ => Vec::new(),
    };
    if violations.is_empty() {
        return Err(Malformed::NotAReport);
    }
    Ok(violations)
}

/// A body with the `Content-Type` `content_type`, read as the endpoint reads it: each
/// violation's directive and what is kept of what it blocked, or why the body is refused. For
/// the fuzz target and the property tests.
pub fn read_report(
    content_type: &[u8],
    body: &[u8],
) -> Result<Vec<(&'static str, String)>, Malformed> {
    let media_type = MediaType::of(content_type).ok_or(Malformed::MediaType)?;
    let violations = parse(media_type, body)?;
    let kept = violations
        .into_iter()
        .map(|v| (DIRECTIVES[v.directive], v.blocked.as_str().to_owned()))
        .collect();
    Ok(kept)
}

/// One report object of either shape, if it is a CSP violation that names a directive.
fn one_report(object: &Map<String, Value>) -> Option<Violation> {
    if let Some(Value::Object(report)) = object.get("csp-report") {
        return violation(
            report,
            "effective-directive",
            "violated-directive",
            "blocked-uri",
        );
    }
    if object.get("type").and_then(Value::as_str) != Some("csp-violation") {
        return None;
    }
    let Some(Value::Object(body)) = object.get("body") else {
        return None;
    };
    violation(
        body,
        "effectiveDirective",
        "violatedDirective",
        "blockedURL",
    )
}

fn violation(
    report: &Map<String, Value>,
    effective: &str,
    violated: &str,
    blocked: &str,
) -> Option<Violation> {
    let directive = report
        .get(effective)
        .or_else(|| report.get(violated))
        .and_then(Value::as_str)?;
    // CSP 2's violated-directive is the whole directive ("img-src 'self'"): its name counts.
    let directive = directive
        .split_ascii_whitespace()
        .next()
        .unwrap_or_default();
    let blocked = report
        .get(blocked)
        .and_then(Value::as_str)
        .unwrap_or_default();
    Some(Violation {
        directive: directive_index(directive),
        blocked: Blocked::reduce(blocked),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(media_type: MediaType, body: &str) -> Vec<(&'static str, String)> {
        parse(media_type, body.as_bytes())
            .unwrap()
            .into_iter()
            .map(|v| (DIRECTIVES[v.directive], v.blocked.as_str().to_owned()))
            .collect()
    }

    #[test]
    fn a_report_uri_body_of_each_engine_is_read() {
        // Chromium and Firefox.
        let chromium = r#"{"csp-report":{"document-uri":"about","referrer":"https://s.example/","violated-directive":"connect-src","effective-directive":"connect-src","original-policy":"default-src 'none'","disposition":"enforce","blocked-uri":"https://api.example.com/p?secret=1","line-number":1,"status-code":0,"script-sample":""}}"#;
        assert_eq!(
            read(MediaType::CspReport, chromium),
            [("connect-src", "https://api.example.com".to_owned())]
        );
        // WebKit: `type` and `url` beside `csp-report`.
        let webkit = r#"{"type":"csp-violation","url":"https://s.example/?csp=x","csp-report":{"document-uri":"about","violated-directive":"script-src","effective-directive":"script-src","blocked-uri":"eval"}}"#;
        assert_eq!(
            read(MediaType::CspReport, webkit),
            [("script-src", "eval".to_owned())]
        );
        // CSP 2: only the violated directive, whole.
        let csp2 =
            r#"{"csp-report":{"violated-directive":"img-src 'self' data:","blocked-uri":"data"}}"#;
        assert_eq!(
            read(MediaType::CspReport, csp2),
            [("img-src", "data".to_owned())]
        );
    }

    #[test]
    fn a_reporting_api_batch_is_read_and_other_report_types_skipped() {
        let batch = r#"[{"age":1,"type":"csp-violation","url":"https://s.example/","user_agent":"x","body":{"blockedURL":"https://img.example.com/a.png?u=1","disposition":"enforce","documentURL":"https://s.example/?csp=1","effectiveDirective":"img-src","originalPolicy":"img-src 'self'","statusCode":200}},
            {"type":"deprecation","body":{"id":"x"}},
            {"type":"csp-violation","body":{"effectiveDirective":"script-src-elem","blockedURL":"inline"}}]"#;
        assert_eq!(
            read(MediaType::Reports, batch),
            [
                ("img-src", "https://img.example.com".to_owned()),
                ("script-src-elem", "inline".to_owned())
            ]
        );
    }

    #[test]
    fn hostile_bodies_are_refused_with_the_reason() {
        for (media_type, body, reason) in [
            (MediaType::CspReport, "", Malformed::NotJson),
            (MediaType::CspReport, "{\"csp-report\":", Malformed::NotJson),
            (
                MediaType::CspReport,
                &"[".repeat(10_000),
                Malformed::NotJson,
            ),
            (MediaType::CspReport, "[]", Malformed::NotAReport),
            (
                MediaType::CspReport,
                "{\"csp-report\":[]}",
                Malformed::NotAReport,
            ),
            (
                MediaType::CspReport,
                "{\"csp-report\":{\"effective-directive\":7}}",
                Malformed::NotAReport,
            ),
            (MediaType::Reports, "{}", Malformed::NotAReport),
            (
                MediaType::Reports,
                "[1,\"a\",null,{}]",
                Malformed::NotAReport,
            ),
            (
                MediaType::Reports,
                &format!("[{}{{}}]", "{},".repeat(MAX_REPORTS_PER_BODY)),
                Malformed::TooMany,
            ),
        ] {
            assert_eq!(
                parse(media_type, body.as_bytes()),
                Err(reason),
                "{}",
                &body[..body.len().min(40)]
            );
        }
    }

    #[test]
    fn wrong_types_inside_a_report_are_read_as_nothing_rather_than_refused() {
        let body = r#"{"csp-report":{"effective-directive":"connect-src","blocked-uri":{"a":1}}}"#;
        assert_eq!(
            read(MediaType::CspReport, body),
            [("connect-src", "other".to_owned())]
        );
    }

    #[test]
    fn the_media_type_is_read_without_its_parameters() {
        assert_eq!(
            MediaType::of(b"application/csp-report"),
            Some(MediaType::CspReport)
        );
        assert_eq!(
            MediaType::of(b"Application/Reports+JSON; charset=utf-8"),
            Some(MediaType::Reports)
        );
        for other in [
            &b"application/json"[..],
            b"text/plain",
            b"",
            b"application/csp-report-x",
        ] {
            assert_eq!(MediaType::of(other), None);
        }
    }
}
