// Mounting one view in the inner frame, and removing it.
//
// spec: exactly one view per page; a later sandbox-resource-ready replaces it; a same-origin
// view is written into a real same-origin document, an opaque one gets srcdoc.
// SECURITY: both the frame's sandbox and its allow attribute are set before it is inserted.
//
// Offers the other parts: mount.

// `reloads`: how many times this page was reloaded for this resource (0: from the host).
function mount(params, reloads) {
  if (params === null || typeof params !== 'object' || typeof params.html !== 'string') {
    // A bad resource replaces nothing: the view already there (if any) stays.
    console.error('[sandbox] sandbox-resource-ready without params.html: nothing to mount');
    return;
  }
  params = resourceParams(params);
  if (hostPolicy) params.html = withPolicyOf(params.html);
  else noteHostWrittenPolicy(params);
  if (state.upgrading) {
    // This page is already on its way to a reload for an earlier resource: this one takes
    // its place, and the reload goes where this one needs (see keepInstead).
    note('a new sandbox-resource-ready during this page\'s reload: it replaces the earlier one');
    keepInstead(params);
    return;
  }
  if (state.view) note('a new sandbox-resource-ready: the view is replaced');
  unmount();
  var target = policyUrl(params.csp);
  if (target !== null && reloads < MAX_RELOADS && reload(params, target, reloads + 1)) return;
  var tokens = sandboxTokens(params.sandbox);
  var sameOrigin = tokens.indexOf('allow-same-origin') !== -1;
  // Both attributes must be set before the frame is inserted: a frame's sandbox flags and
  // permissions policy are fixed when its document is created, and document.open/write
  // reuses the initial about:blank document rather than creating a new one.
  var frame = document.createElement('iframe');
  frame.setAttribute('sandbox', tokens.join(' '));
  frame.setAttribute('allow', allowAttribute(params.permissions, !sameOrigin));
  frame.setAttribute('title', 'MCP App view');
  try {
    if (sameOrigin) {
      // A real same-origin document (not srcdoc): WebGL and referrer-bound APIs need it.
      document.body.appendChild(frame);
      var doc = frame.contentDocument;
      doc.open();
      watchViolations(doc);
      doc.write(params.html);
      doc.close();
      state.viewDocument = doc;
    } else {
      // An opaque view: srcdoc gives it a real opaque origin, which document.write cannot.
      // Its document cannot be inspected, so its frame's loads are counted: the first is
      // the view, any later one is a navigation away from it.
      var loads = 0;
      frame.addEventListener('load', function () {
        loads += 1;
        if (loads > 1 && frame === state.view && !state.viewNavigated) {
          state.viewNavigated = true;
          warn('the view navigated away: relaying stopped');
        }
      });
      frame.srcdoc = withMemoryStorage(params.html);
      document.body.appendChild(frame);
    }
  } catch (error) {
    // Only a mounted view counts: a failure leaves the page ready for another resource.
    if (frame.parentNode) frame.parentNode.removeChild(frame);
    state.viewDocument = null;
    console.error('[sandbox] could not mount the view:', error);
    return;
  }
  state.view = frame;
  state.viewTarget = sameOrigin ? window.location.origin : '*';
  if (sameOrigin) noteWhatTheHostMustEnforce();
  // A policy URL that is still wanted here is one this page could not reload itself with.
  warnAboutMissingDomains(params.csp, target !== null);
  warnAboutPermissions(params.permissions, !sameOrigin);
}

// The view goes with its frame: its document and timers end, and nothing it queued is
// relayed (its window is no longer the inner frame's). Host messages held for it are dropped:
// they were meant for a view that is gone, and holding starts again for the next one. So do
// the refusals said once per view, the budget of violation notices and the opt-in hints.
function unmount() {
  if (!state.view) return;
  if (state.view.parentNode) state.view.parentNode.removeChild(state.view);
  state.view = null;
  state.viewTarget = null;
  state.viewDocument = null;
  state.viewNavigated = false;
  forgetHeld();
  forgetViolations();
  forgetHints();
}

// SECURITY: a same-origin view shares this page's origin, so it can script this page and
// navigate this very frame to any URL, carrying data past its connect-src. Nothing in this
// frame can stop that, and nothing here can see the host's own policy: the host must. Said
// once per mount, as a note rather than a warning: it is the spec's default and usually fine.
function noteWhatTheHostMustEnforce() {
  note('the view shares this page\'s origin (allow-same-origin).' + guide('same-origin-view'));
}
