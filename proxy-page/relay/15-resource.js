// The resource a host sends in sandbox-resource-ready, read into the spec's shape whatever shape
// the host library wrote it in, and never wider than what it said.
//
// spec: params = {html, sandbox?, csp?: {connectDomains?, resourceDomains?, frameDomains?,
// baseUriDomains?}, permissions?: {camera?, microphone?, geolocation?, clipboardWrite?}}.
// Real hosts send other shapes. The Vercel AI SDK writes csp as a ready-made policy string and
// the permissions as an `allow` string; MCP Inspector 2.x adds `src` for an app with an origin
// of its own. A policy string is read into the four lists and then takes the object's path (the
// service's grammar, the self-upgrade); an allow string stands for permissions when those are
// absent. Whatever cannot be honoured is named once, with the fix.

// Where a CSP source is allowed for a view's resources: every one of these must allow it.
var RESOURCE_DIRECTIVES = ['script-src', 'style-src', 'img-src', 'font-src', 'media-src'];
// Features of an allow string → the spec's permission keys.
var ALLOW_PERMISSIONS = {
  camera: 'camera',
  microphone: 'microphone',
  geolocation: 'geolocation',
  'clipboard-write': 'clipboardWrite'
};

// The resource's params as the rest of the relay reads them: html, sandbox, permissions and an
// object csp (or none).
function resourceParams(params) {
  var read = { html: params.html, sandbox: params.sandbox, permissions: params.permissions, csp: params.csp };
  if (typeof params.csp === 'string') {
    read.csp = cspFromPolicy(params.csp);
  } else if (params.csp !== undefined && params.csp !== null &&
    (typeof params.csp !== 'object' || Array.isArray(params.csp))) {
    console.warn('[sandbox] params.csp is ' + (Array.isArray(params.csp) ? 'an array' : 'a ' + typeof params.csp) +
      ', neither the spec\'s object of domain lists nor a policy string: ignored, so the view gets ' +
      'no declared domain. Send {connectDomains, resourceDomains, frameDomains, baseUriDomains}.');
    read.csp = undefined;
  }
  var noPermissions = params.permissions === undefined || params.permissions === null;
  if (noPermissions && typeof params.allow === 'string') read.permissions = permissionsFromAllow(params.allow);
  if (params.src !== undefined && params.src !== null) {
    console.warn('[sandbox] params.src (' + String(params.src).slice(0, 200) + ') is ignored: this proxy ' +
      'mounts params.html itself, on its own origin. An app that needs an origin of its own ' +
      '(_meta.ui.domain) gets one as a per-server label of this sandbox (docs/hosts.md).');
  }
  return read;
}

// A CSP policy string (or several, comma-separated, all of which apply) read into the spec's
// lists: connect-src, frame-src and base-uri give theirs (with CSP's fallbacks to child-src and
// default-src); a source is a resource domain only if every resource directive allows it.
// Keywords, nonces, hashes, bare schemes and `*` are dropped: the lists hold hosts only, and a
// source no directive names is not allowed. An unreadable string declares nothing, said once.
function cspFromPolicy(text) {
  var policies = text.split(',').map(parsePolicy).filter(function (policy) { return policy !== null; });
  if (!policies.length) {
    console.warn('[sandbox] params.csp is a string with no CSP directive in it: ignored, so the view ' +
      'gets no declared domain. Send the spec\'s object of domain lists, or a policy string.');
    return undefined;
  }
  var lists = policies.map(listsOfPolicy);
  var read = {};
  DOMAIN_LISTS.forEach(function (list) {
    // Every policy applies, so a source must be in each of them.
    read[list] = lists.reduce(function (kept, next) {
      return kept.filter(function (source) { return next[list].indexOf(source) !== -1; });
    }, lists[0][list]);
  });
  return read;
}

// Directive name → its sources, the first of a name winning (as CSP has it); null when the text
// holds no directive.
function parsePolicy(text) {
  var directives = {};
  var found = false;
  text.split(';').forEach(function (part) {
    var tokens = part.trim().split(/\s+/).filter(Boolean);
    if (!tokens.length || !/^[a-z-]+$/i.test(tokens[0])) return;
    var name = tokens[0].toLowerCase();
    found = true;
    if (!Object.prototype.hasOwnProperty.call(directives, name)) directives[name] = tokens.slice(1);
  });
  return found ? directives : null;
}

function listsOfPolicy(directives) {
  function effective(name, fallbacks) {
    var names = [name].concat(fallbacks);
    for (var i = 0; i < names.length; i++) {
      if (Object.prototype.hasOwnProperty.call(directives, names[i])) return hostSources(directives[names[i]]);
    }
    return [];
  }
  var resources = RESOURCE_DIRECTIVES.map(function (name) { return effective(name, ['default-src']); });
  return {
    connectDomains: effective('connect-src', ['default-src']),
    resourceDomains: resources[0].filter(function (source) {
      return resources.every(function (allowed) { return allowed.indexOf(source) !== -1; });
    }),
    frameDomains: effective('frame-src', ['child-src', 'default-src']),
    baseUriDomains: effective('base-uri', [])
  };
}

// The sources that name hosts: not a keyword, nonce or hash ('…'), not a bare scheme (https:),
// not `*`.
function hostSources(tokens) {
  return tokens.filter(function (token) {
    return token.charAt(0) !== "'" && token !== '*' && !/^[a-z][a-z0-9+.-]*:$/i.test(token);
  });
}

// An allow attribute's text read into the spec's permissions: each feature it grants that is
// one of the spec's; a feature whose allowlist is 'none' is not granted. Others are named once.
function permissionsFromAllow(text) {
  var permissions = {};
  var unknown = [];
  text.split(';').forEach(function (part) {
    var tokens = part.trim().split(/\s+/).filter(Boolean);
    if (!tokens.length || tokens.indexOf("'none'") !== -1) return;
    var feature = tokens[0].toLowerCase();
    if (Object.prototype.hasOwnProperty.call(ALLOW_PERMISSIONS, feature)) {
      permissions[ALLOW_PERMISSIONS[feature]] = {};
    } else {
      unknown.push(feature);
    }
  });
  if (unknown.length) {
    console.warn('[sandbox] params.allow asks for ' + unknown.join(', ') + ': not one of the spec\'s ' +
      'permissions (camera, microphone, geolocation, clipboard-write), so the view is not given it.');
  }
  return permissions;
}
