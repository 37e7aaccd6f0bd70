// CSP source matching, as far as the relay's warnings need it: whether an applied source allows
// every URL a requested one does. Pure functions, unit-tested in tests/relay/.
//
// Offers the other parts: covers.

// A host source as the server writes it ([scheme://]host[:port][path]): scheme and host
// lower-cased, the path as it is; `scheme` is null when the source has none.
function parseSource(source) {
  var at = source.indexOf('://');
  var scheme = at === -1 ? null : source.slice(0, at).toLowerCase();
  var rest = at === -1 ? source : source.slice(at + 3);
  var slash = rest.indexOf('/');
  var authority = (slash === -1 ? rest : rest.slice(0, slash)).toLowerCase();
  var colon = authority.lastIndexOf(':');
  return {
    scheme: scheme,
    host: colon === -1 ? authority : authority.slice(0, colon),
    port: colon === -1 ? '' : authority.slice(colon + 1),
    path: slash === -1 ? '' : rest.slice(slash)
  };
}

// CSP's matching, as far as the warning needs it: whether every URL the requested source
// allows is allowed by the applied one. The scheme: the same, or its secure form (http →
// https, ws → wss); a source without one stands for this page's scheme and its WebSocket
// form, secure forms included. The host: the same, or under the applied wildcard. The port:
// the same, or the applied `*`. The path: the applied one is empty, the same, or a directory
// (`/`-ended) holding the requested one.
function covers(appliedSource, requestedSource) {
  var applied = parseSource(appliedSource);
  var requested = parseSource(requestedSource);
  return schemeCovers(applied.scheme, requested.scheme || PAGE_SCHEME) &&
    hostCovers(applied.host, requested.host) &&
    (applied.port === '*' || applied.port === requested.port) &&
    (applied.path === '' || applied.path === requested.path ||
      (applied.path.slice(-1) === '/' && requested.path.indexOf(applied.path) === 0));
}

function schemeCovers(applied, requested) {
  if (applied === null) {
    var own = PAGE_SCHEME === 'http' ? ['http', 'https', 'ws', 'wss'] : ['https', 'wss'];
    return own.indexOf(requested) !== -1;
  }
  return applied === requested || (applied === 'http' && requested === 'https') ||
    (applied === 'ws' && requested === 'wss');
}

function hostCovers(applied, requested) {
  if (applied === requested) return true;
  if (applied.indexOf('*.') !== 0) return false;
  var suffix = applied.slice(1);
  var name = requested.indexOf('*.') === 0 ? requested.slice(1) : requested;
  return name.length > suffix.length && name.slice(-suffix.length) === suffix;
}
