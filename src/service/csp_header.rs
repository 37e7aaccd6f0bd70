//! The page's own `Content-Security-Policy` header: the framing and sandbox rules, then the view
//! policy, with the report endpoint each names.

use crate::embedders::Pinned;

/// The page's `Content-Security-Policy`: `frame-ancestors <origin>` with the page's own
/// `sandbox` policy (see `sandbox`), then the view policy, as two policies, each enforced on
/// its own, so the framing and sandbox rules hold whatever the view policy says. They travel in
/// one header, separated by a comma (CSP's separator between policies, and what HTTP makes of
/// two headers of one name anyway), because scanners such as testssl.sh flag a repeated
/// `Content-Security-Policy` header. The page's own policy comes first: scanners that read the
/// header as one policy (the HTTP Observatory, CSP Evaluator) then see `frame-ancestors`;
/// browsers enforce both whatever the order. No source in a view policy can hold a comma
/// (`csp` drops such entries), so the split is exact.
///
/// No view policy (the host writes its own into the view's `<meta>`): framing and sandbox, and
/// `object-src 'none'`, a floor under the host's `<meta>`. Every template of the spec has it;
/// a host's that omits it must not let a view load plugins (`<object>`, `<embed>`).
pub(super) fn content_security_policy(
    view_policy: Option<&str>,
    origins: &Pinned<'_>,
    sandbox: &str,
    report_to: Option<&str>,
) -> String {
    // Each policy names the endpoint with its own mark, so a report says which it broke.
    // `report-uri` alone: Firefox ESR 153 drops a policy's `report-uri` when it also has
    // `report-to`, and then sends nothing (docs/http.md, tests/browser/reports.test.mjs).
    let report = |source: &str| match report_to {
        Some(url) => format!("; report-uri {url}?from={source}"),
        None => String::new(),
    };
    let page = format!("frame-ancestors {origins}; {sandbox}");
    match view_policy {
        Some(view_policy) => format!("{page}{}, {view_policy}{}", report("page"), report("view")),
        None => format!("{page}; {HOST_POLICY_FLOOR}{}", report("page")),
    }
}

/// What the page's own policy adds where the host writes the view's.
const HOST_POLICY_FLOOR: &str = "object-src 'none'";
