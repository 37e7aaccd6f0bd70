// CSP violations in a same-origin view, passed to the host.
//
// spec (extension): ui/notifications/sandbox-csp-violation, under the reserved prefix; for a
// host whose operator chose relay_messages = "any", also in the shape mcp-use's inspector
// reads from its own proxy ({type: "mcp-apps:csp-violation", ...}).
// SECURITY: only the browser's own reports, at most MAX_VIOLATIONS per page; nothing else of
// the view's (its console stays its own).
//
// Offers the other parts: forgetViolations, onOwnViolation, watchViolations.

// CSP violations inside a same-origin view are seen here and passed to the host under the
// reserved prefix, so a host can tell its user why something in the view did not load.
function watchViolations(doc) {
  doc.addEventListener('securitypolicyviolation', reportViolation);
}

// WebKit reports a view's refused eval on this page's document, whose policy the view's
// document inherited, rather than on the view's (Chromium and Firefox use the view's). This
// page never evaluates code, so such a refusal while a view is mounted is the view's. Other
// refusals here (this page's favicon) are not.
function onOwnViolation(e) {
  if (state.view && (e.blockedURI === 'eval' || e.blockedURI === 'wasm-eval')) reportViolation(e);
}

// A new view starts with the whole budget of notices.
function forgetViolations() {
  state.violations = 0;
}

function reportViolation(e) {
  // Only the browser's own reports: a view can dispatch a synthetic event.
  if (!e.isTrusted || state.violations >= MAX_VIOLATIONS) return;
  state.violations += 1;
  hintAtOptIn(e.effectiveDirective, e.blockedURI);
  postToHost({
    jsonrpc: '2.0',
    method: CSP_VIOLATION,
    params: {
      effectiveDirective: e.effectiveDirective,
      blockedURI: e.blockedURI,
      sourceFile: e.sourceFile,
      lineNumber: e.lineNumber,
      disposition: e.disposition
    }
  });
  if (anyMessages) postToHost(inspectorViolation(e));
}

// The same report as mcp-use's inspector reads it from its own proxy, for its CSP panel.
function inspectorViolation(e) {
  return {
    type: 'mcp-apps:csp-violation',
    directive: e.violatedDirective,
    effectiveDirective: e.effectiveDirective,
    blockedUri: e.blockedURI,
    sourceFile: e.sourceFile,
    lineNumber: e.lineNumber,
    columnNumber: e.columnNumber,
    originalPolicy: e.originalPolicy,
    disposition: e.disposition,
    timestamp: Date.now()
  };
}
