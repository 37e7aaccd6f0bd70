// The host: which of the origins this page serves is its parent's, and posting to it.
//
// spec: the relay accepts a message from the parent only if event.source === window.parent and
// event.origin is the host's origin, and posts to the parent only with that origin as
// targetOrigin, never '*'. A host entry may list several exact origins (the same app on
// localhost and 127.0.0.1, or on two domains): this page tells each of them it is ready, since
// postMessage delivers to the parent only under the parent's own origin and drops the others,
// and then pins to the origin its parent really has.
//
// Offers the other parts: acceptHost, hostOriginsText, knownHostOrigin, postToHost.

// The host's origin when it is known before any message: the one origin this page serves, or
// the parent's as the engine reports it (location.ancestorOrigins: Chromium, WebKit, Firefox
// 153 ESR) when it is one of them. Otherwise (engines without it) null, until the parent's first
// message.
function knownHostOrigin(origins) {
  if (origins.length === 1) return origins[0];
  var ancestors = window.location.ancestorOrigins;
  var parent = ancestors && ancestors.length > 0 ? ancestors[0] : null;
  return origins.indexOf(parent) >= 0 ? parent : null;
}

// Whether a message from the parent comes from the host; the first one that does pins the host
// to its origin, so that from then on no other listed origin counts.
function acceptHost(origin) {
  if (state.hostOrigin === null && hostOrigins.indexOf(origin) >= 0) state.hostOrigin = origin;
  return origin === state.hostOrigin;
}

function hostOriginsText() {
  return hostOrigins.join(' or ');
}

function postToHost(message) {
  // SECURITY: the host's origin, never '*': nobody else may read what the view says. Until it is
  // known, each origin this page serves: the browser delivers to the parent under its own only.
  var targets = state.hostOrigin !== null ? [state.hostOrigin] : hostOrigins;
  targets.forEach(function (target) {
    window.parent.postMessage(message, target);
  });
}
