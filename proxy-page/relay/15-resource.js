// The resource a host sends in sandbox-resource-ready, read into the spec's shape whatever shape
// the host library wrote it in, and never wider than what it said.
//
// spec: params = {html, sandbox?, csp?: {connectDomains?, resourceDomains?, frameDomains?,
// baseUriDomains?}, permissions?: {camera?, microphone?, geolocation?, clipboardWrite?}}.
// Real hosts send other shapes. The Vercel AI SDK writes csp as a ready-made policy string and
// the permissions as an `allow` string; MCP Inspector 2.x adds `src` for an app with an origin
// of its own; hosts of servers written for the Apps SDK pass its widgetCSP, snake_case keys. A policy string is read into the four lists and then takes the object's path (the
// service's grammar, the self-upgrade); an allow string stands for permissions when those are
// absent. Whatever cannot be honoured is named once, with a link to the fix.
//
// Offers the other parts: asciiTokens, noteQueryRedirectDomains, resourceParams.

// spec (CSP 3, "effective directive"): the directives a browser falls back to, in order, when
// a policy lacks one; and the element forms a load obeys before its directive (a <script src>
// obeys script-src-elem, not script-src).
var FALLBACKS = {
  'script-src': ['default-src'], 'style-src': ['default-src'], 'img-src': ['default-src'],
  'font-src': ['default-src'], 'media-src': ['default-src'], 'connect-src': ['default-src'],
  'frame-src': ['child-src', 'default-src'], 'worker-src': ['child-src', 'script-src', 'default-src'],
  'base-uri': []
};
var ELEMENT_FORMS = { 'script-src': 'script-src-elem', 'style-src': 'style-src-elem' };

// Each list → every chain of directives that governs its loads: the directives the service's
// policy puts the list into (POLICY_DIRECTIVES, the shared vocabulary), each with its element
// form and its fallbacks. A source is in a list only if each chain allows it; the service's
// policy gives resource domains to workers too.
var LIST_DIRECTIVES = listDirectives();

function listDirectives() {
  var chains = {};
  DOMAIN_LISTS.forEach(function (list) {
    chains[list] = [];
    POLICY_DIRECTIVES[list].forEach(function (directive) {
      var element = ELEMENT_FORMS[directive];
      if (element) chains[list].push([element, directive].concat(FALLBACKS[directive]));
      chains[list].push([directive].concat(FALLBACKS[directive]));
    });
  });
  return chains;
}

// The resource's params as the rest of the relay reads them: html, sandbox, permissions and an
// object csp (or none).
function resourceParams(params) {
  var read = { html: params.html, sandbox: params.sandbox, permissions: params.permissions, csp: params.csp };
  if (typeof params.csp === 'string') {
    read.csp = cspFromPolicy(params.csp);
  } else if (params.csp !== undefined && params.csp !== null &&
    (typeof params.csp !== 'object' || Array.isArray(params.csp))) {
    warn('params.csp is ' + (Array.isArray(params.csp) ? 'an array' : 'a ' + typeof params.csp) +
      ': ignored.' + guide('params-csp'));
    read.csp = undefined;
  } else if (params.csp !== undefined && params.csp !== null) {
    read.csp = specSpelling(params.csp, 'params.csp');
  }
  var noPermissions = params.permissions === undefined || params.permissions === null;
  if (noPermissions && typeof params.allow === 'string') read.permissions = permissionsFromAllow(params.allow);
  if (params.src !== undefined && params.src !== null) {
    warn('params.src (' + String(params.src).slice(0, 200) + ') is ignored.' + guide('params-src'));
  }
  return read;
}

// Servers written for the Apps SDK declare the lists as _meta["openai/widgetCSP"] spells them
// (connect_domains, ...), and several hosts pass that object on unchanged: each list is read
// under the Apps SDK's key where the spec's is absent or null (APPS_SDK_LISTS, the shared
// vocabulary, as the service reads ?csp=), so the rest of the relay reads the spec's spelling
// only, and nothing else of the object. Its redirect_domains names sites the host may send the
// user to without asking: no directive of a view policy grants that, which is said, so that a
// server author does not look for it in the policy. `where` names the object.
function specSpelling(csp, where) {
  var read = {};
  DOMAIN_LISTS.forEach(function (list) {
    var value = csp[list];
    if (value === undefined || value === null) value = csp[APPS_SDK_LISTS[list] || list];
    if (value !== undefined && value !== null) read[list] = value;
  });
  if (Object.prototype.hasOwnProperty.call(csp, APPS_SDK_REDIRECT_LIST)) {
    warn(where + '.' + APPS_SDK_REDIRECT_LIST + ' grants nothing in a view\'s policy.' +
      guide('redirect-domains'));
  }
  return read;
}

// The same note for the declaration in this page's own query, which the service read.
function noteQueryRedirectDomains() {
  try {
    var params = new URL(window.location.href).searchParams;
    specSpelling(JSON.parse(params.get(CSP_PARAMETER) || params.get(WIDGET_CSP_PARAMETER)) || {}, 'the query\'s csp');
  } catch (unreadable) {
    // The service answered such a query with a 400: nothing to add.
  }
}

// A CSP policy string (or several, comma-separated, all of which apply) read into the spec's
// lists, as the browser reads it: a source is in a list only if every directive that governs
// the list's loads (LIST_DIRECTIVES, fallbacks included) names it. Keywords, nonces, hashes,
// bare schemes and `*` are dropped: the lists hold hosts only, and a source no directive names
// is not allowed. An unreadable string declares nothing, said once.
function cspFromPolicy(text) {
  if (!plainlyWritten(text, 'csp')) return undefined;
  var policies = text.split(',').map(parsePolicy).filter(function (policy) { return policy !== null; });
  if (!policies.length) {
    warn('params.csp is a string with no CSP directive in it: ignored.' + guide('params-csp'));
    return undefined;
  }
  var read = {};
  DOMAIN_LISTS.forEach(function (list) {
    // Every policy applies, and in each every directive of the list: a source must be in all.
    // Each is a Set, so that a source is looked up, not searched for: the reading stays linear
    // in the string, however many sources it names.
    var allowing = [];
    policies.forEach(function (directives) {
      LIST_DIRECTIVES[list].forEach(function (names) { allowing.push(new Set(effectiveSources(directives, names))); });
    });
    read[list] = hostSources(Array.from(allowing[0])).filter(function (source) {
      return allowing.every(function (sources) { return sources.has(source); });
    });
  });
  return read;
}

// Directive name → its sources, the first of a name winning; null when the text holds no
// directive. spec (CSP): a policy is split on ";", a directive on ASCII whitespace only (a
// U+00A0 or U+3000 is part of a token, not between two), and a name outside CSP's grammar
// (letters, digits, "-") names no directive. Kept without a prototype, so that a directive
// named like an object's member (constructor) is only a directive.
function parsePolicy(text) {
  var directives = Object.create(null);
  var found = false;
  text.split(';').forEach(function (part) {
    var tokens = asciiTokens(part);
    if (!tokens.length || !/^[a-z0-9-]+$/i.test(tokens[0])) return;
    var name = tokens[0].toLowerCase();
    found = true;
    if (!(name in directives)) directives[name] = tokens.slice(1);
  });
  return found ? directives : null;
}

// The sources of the first of `names` the policy has; none when it has none of them.
function effectiveSources(directives, names) {
  for (var i = 0; i < names.length; i++) {
    if (names[i] in directives) return directives[names[i]];
  }
  return [];
}

// The sources that name hosts: not a keyword, nonce or hash ('…'), not a bare scheme (https:),
// not `*`.
function hostSources(tokens) {
  return tokens.filter(function (token) {
    return token.charAt(0) !== "'" && token !== '*' && !/^[a-z][a-z0-9+.-]*:$/i.test(token);
  });
}

// spec (Infra): the only whitespace CSP, Permissions Policy and the HTML tokenizer split on.
function asciiTokens(text) {
  return text.split(/[\t\n\f\r ]+/).filter(Boolean);
}

// The spec's permission key that is `feature` (PERMISSION_FEATURES read backwards), or null.
function permissionOf(feature) {
  var keys = Object.keys(PERMISSION_FEATURES).filter(function (key) { return PERMISSION_FEATURES[key] === feature; });
  return keys.length ? keys[0] : null;
}

// SECURITY: a policy string is read only when it is written in printable ASCII and ASCII
// whitespace, as every one a host library makes is. Engines read other characters each their
// own way (Chromium and WebKit split on U+000B, which the spec does not; Chromium drops a
// directive with a non-ASCII source, Firefox keeps it), and no one reading is narrower than
// the others, so such a string declares and grants nothing, said once. The character is named
// by its code point (U+1F600, not the first half of its UTF-16 pair), read whole by the `u` flag.
function plainlyWritten(text, field) {
  var odd = /[^\x20-\x7e\t\n\f\r]/u.exec(text);
  if (odd === null) return true;
  var code = odd[0].codePointAt(0).toString(16).toUpperCase();
  warn('params.' + field + ' holds U+' + code.padStart(4, '0') + ' at ' + odd.index +
    ', outside printable ASCII: ignored.' + guide('not-ascii'));
  return false;
}

// An allow attribute's text read into the spec's permissions, never granting more than the
// browser would give the view. spec (Permissions Policy): declarations split on ";", tokens on
// ASCII whitespace; a feature name is matched exactly and its first declaration wins; an
// empty allowlist means 'src', the frame's own document. So a feature is granted when its
// first declaration's allowlist is empty, "*" or "'src'", and holds no "'none'". "'self'" (the
// host's origin, where the host wrote the string) and named origins are another document's:
// they give the view nothing. Features not the spec's are named once.
function permissionsFromAllow(text) {
  var permissions = {};
  if (!plainlyWritten(text, 'allow')) return permissions;
  var declared = new Set();
  var unknown = [];
  text.split(';').forEach(function (part) {
    var tokens = asciiTokens(part);
    if (!tokens.length || declared.has(tokens[0])) return;
    var feature = tokens[0];
    var allowlist = tokens.slice(1);
    declared.add(feature);
    var key = permissionOf(feature);
    if (key === null) {
      unknown.push(feature);
      return;
    }
    var grants = allowlist.indexOf("'none'") === -1 && (allowlist.length === 0 ||
      allowlist.indexOf('*') !== -1 || allowlist.indexOf("'src'") !== -1);
    if (grants) permissions[key] = {};
  });
  if (unknown.length) {
    warn('params.allow asks for ' + unknown.join(', ') + ', not a permission of the spec: ' +
      'not given.' + guide('params-allow'));
  }
  return permissions;
}
