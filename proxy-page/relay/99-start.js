// Runs the relay: the join calls start() once every part has defined its own (build.rs).
//
// spec: a host must never wait for nothing: a page that mounted no view (and is not on its way
// to a reload for one) says sandbox-proxy-ready.
//
// Offers the other parts nothing: the join calls start().

function start() {
  // spec: the proxy exists to be framed by the host; alone it has nothing to relay.
  if (window.top === window) {
    refuse('This page is an MCP Apps sandbox proxy for ' + hostOriginsText() +
      '. It only runs inside an iframe of that host.');
    return;
  }
  // spec: the host's iframe must allow-same-origin. Without it this page has an opaque origin,
  // cannot write the view into a same-origin frame, and 'self' in the policy means nothing.
  if (window.location.origin === 'null' || window.origin === 'null') {
    refuse('This MCP Apps sandbox proxy needs "allow-scripts allow-same-origin" in the sandbox ' +
      'attribute of the host\'s iframe.');
    return;
  }
  // SECURITY: over plain http off loopback, anyone on the path can rewrite this page, the relay
  // and every view; the service says so at start too, but the host developer looks here.
  if (!window.isSecureContext) {
    warn('this page is not a secure context (plain http off loopback).' +
      guide('not-secure-context'));
  }
  // A page made with an older frame name than its predecessor wrote reads no message and says
  // nothing: the page after it does.
  if (reloadForNewerName()) return;
  clearPlantedCookies();
  reportDroppedSources();
  reportRefusedPolicy();
  noteQueryRedirectDomains();
  window.addEventListener('message', onMessage);
  window.addEventListener('pagehide', onPageHide);
  document.addEventListener('securitypolicyviolation', onOwnViolation);
  var kept = null;
  try {
    kept = takeKeptResource();
  } catch (error) {
    console.error('[sandbox] could not read the resource kept for this page:', error);
  }
  if (kept) {
    // This page is the relay's own reload: the host already had its ready notification and
    // sent the resource, so it gets neither again; the kept resource is mounted at once, and
    // the theme the held host messages set is taken again.
    holdAll(kept.held);
    kept.held.forEach(function (message) {
      if (isJsonRpc(message)) followTheme(message);
    });
    mount(kept.resource, kept.reloads);
  }
  // A host must never wait for nothing: without a view from a kept resource (or a reload under
  // way for it), say ready.
  if (!state.view && !state.upgrading) postToHost({ jsonrpc: '2.0', method: PROXY_READY, params: {} });
}
