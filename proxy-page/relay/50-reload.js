// The self-upgrade: a page reloaded with the policy its resource declares, when the host sent
// the csp only in sandbox-resource-ready, and the resource carried to the new page.
//
// spec: the view's policy is built from the resource's csp metadata.
// SECURITY: never for a page the host requested with ?csp= (or mcp-use's ?widget_csp=), never
// for a host that signs its policies; a carried resource is read only when this page's own URL
// names it, from this frame's own name, which no other origin can read, and is cleared at
// once. policyUrl, domainLists, the carrier and parseKept are unit-tested in tests/relay/.
//
// Offers the other parts: carryHeld, keepInstead, keepResource, policyUrl, reload,
//   reloadForNewerName, takeKeptResource.

// spec: the view's policy is built from the resource's csp metadata. A host that sends the
// csp only in sandbox-resource-ready (as the spec's flow allows) reached a page whose header
// was fixed without it. The page cannot change its own header, so it reloads itself with the
// declared domains in ?csp= (the service builds the header with the same strict grammar as
// for any host), carrying the resource to the new page, which mounts it at once.
//
// The URL this page needs for a resource's policy, when it is not this page's own; null when
// this page serves it. SECURITY: never for a page the host requested with ?csp=: that host
// has decided the policy, and the spec lets a host narrow what a server declares, never the
// proxy widen it. Never for a host that signs its policies: only its backend can. Then the
// relay only says what is missing.
function policyUrl(csp) {
  if (signedPolicies || hostPolicy) return null;
  var url = new URL(window.location.href);
  var params = url.searchParams;
  var upgraded = params.get(UPGRADE_PARAMETER) === '1';
  if ((params.has(CSP_PARAMETER) || params.has(WIDGET_CSP_PARAMETER)) && !upgraded) return null;
  var lists = domainLists(csp);
  var declared = DOMAIN_LISTS.some(function (list) {
    return lists[list] && lists[list].length > 0;
  });
  // Compared as values, not as URLs: rewriting the query re-encodes the rest of it (an
  // ?embedder= written by hand), and a page must not reload for a policy it already has.
  var wanted = declared ? JSON.stringify(lists) : null;
  var current = upgraded ? params.get(CSP_PARAMETER) : null;
  if (wanted === current) return null;
  url.hash = '';
  params.delete(CSP_PARAMETER);
  params.delete(UPGRADE_PARAMETER);
  if (wanted !== null) {
    params.set(CSP_PARAMETER, wanted);
    params.set(UPGRADE_PARAMETER, '1');
  }
  return url.href;
}

// Reloads this page at `target` with the resource kept for it. Returns whether the reload is
// under way; if not, the view is mounted under this page's policy.
function reload(params, target, reloads) {
  var url = new URL(target);
  var queryBytes = new TextEncoder().encode(url.search.slice(1)).length;
  if (queryBytes > (config.maxQueryBytes || 0)) {
    warn('the declared domains need a ' + queryBytes + '-byte query, over the ' +
      'service\'s limit (' + config.maxQueryBytes + '): mounting under the served policy.' + guide('query-too-long'));
    return false;
  }
  var kept = { resource: keptCopy(params), reloads: reloads, url: url.href };
  if (!carry(kept)) return false;
  state.upgrading = kept;
  note('the resource needs another policy: reloading with it in ?csp=.' + guide('reload-for-policy'));
  return true;
}

// Writes what the new page needs into the frame's name, under a token of its own, and starts
// the navigation to it, or starts it again. Chromium gives the new page the frame's name as it
// was when the navigation began, and a later write is lost: so whatever changes meanwhile (a
// resource that replaces the first, a host message held for it) stops the navigation under
// way, writes, and starts it again. Even then Chromium may finish the page it began for the
// stopped navigation, with the older name: the fresh token is how that page knows (see
// reloadForNewerName).
function carry(kept) {
  kept.key = KEPT_PREFIX + randomToken();
  if (!keepResource(kept)) return false;
  var url = new URL(kept.url);
  url.hash = KEPT_FRAGMENT.slice(1) + kept.key.slice(KEPT_PREFIX.length);
  window.stop();
  var here = new URL(window.location.href);
  here.hash = url.hash;
  if (here.href !== url.href) {
    window.location.replace(url.href);
  } else {
    // The same page again: a new fragment alone would load no new page, so it is reloaded.
    window.history.replaceState(null, '', url.href);
    window.location.reload();
  }
  return true;
}

// A resource that arrived while this page's reload for an earlier one is under way takes that
// one's place, and the reload goes where it needs: its own policy, or this page's again.
function keepInstead(params) {
  var kept = state.upgrading;
  kept.resource = keptCopy(params);
  kept.text = undefined;
  kept.url = policyUrl(params.csp) || window.location.href;
  if (carry(kept)) return;
  // Not to be carried: the reload stops, and the resource is mounted here as it is.
  window.stop();
  state.upgrading = null;
  mount(params, MAX_RELOADS);
}

// A host message held while this page's reload is under way goes with it.
function carryHeld() {
  if (state.upgrading) carry(state.upgrading);
}

function keptCopy(params) {
  return { html: params.html, sandbox: params.sandbox, permissions: params.permissions, csp: params.csp };
}

// The resource crosses the reload in this frame's own name (window.name), which a frame keeps
// across its navigations: no storage API, so it works where a browser denies this third-party
// frame its storage (Safari, Brave, Firefox or Chromium blocking third-party cookies) and for
// a resource over a storage quota. SECURITY: a frame's name is readable only by documents of
// its own origin (this page and a same-origin view, which shares all of this page anyway),
// never by the host or another site; it holds the resource only from the reload to the new
// page's start, which takes it back at once. Written as the prefix, the token the new page's
// URL names, the frame's own name as JSON (a host may name its iframe, and gets it back), a
// line feed, and the carried JSON.

// Writes the resource, and the host messages held for its view, for this page's reload. They
// travel as JSON: a message JSON cannot carry (a cycle, a BigInt) is dropped with a warning.
// Where the resource cannot be carried at all, says exactly why and returns false.
function keepResource(kept) {
  var carried = state.held.filter(function (message) {
    try {
      JSON.stringify(message);
      return true;
    } catch (notJson) {
      warn('dropped a held host message that cannot cross this page\'s reload (not JSON)');
      return false;
    }
  });
  try {
    // Made once per resource: held messages may make the name written again and again.
    if (kept.text === undefined) kept.text = JSON.stringify(kept.resource);
  } catch (notJson) {
    return cannotCarry('it is not JSON: ' + notJson);
  }
  var text = '{"resource":' + kept.text + ',"held":' + JSON.stringify(carried) + ',"reloads":' + kept.reloads + '}';
  try {
    window.name = kept.key + ':' + JSON.stringify(state.frameName) + '\n' + text;
    return true;
  } catch (error) {
    return cannotCarry(text.length + ' characters, and the browser refused them: ' + error);
  }
}

function cannotCarry(why) {
  warn('cannot carry the resource across the reload for its domains (' + why + '): ' +
    'mounting under the served policy.' + guide('cannot-carry'));
  return false;
}

// What a previous page of this frame carried in its name: the token and the JSON, or null. A
// name of the relay's is given back to the frame's own at once, whatever happens next.
function takeCarried() {
  var name = String(window.name);
  state.frameName = name;
  if (name.indexOf(KEPT_PREFIX) !== 0) return null;
  var colon = name.indexOf(':', KEPT_PREFIX.length);
  var newline = colon === -1 ? -1 : name.indexOf('\n', colon);
  state.frameName = newline === -1 ? '' : ownName(name.slice(colon + 1, newline));
  window.name = state.frameName;
  if (newline === -1) return null;
  return { token: name.slice(KEPT_PREFIX.length, colon), text: name.slice(newline + 1) };
}

// The token a name of the relay's was written under; null for any other name.
function carriedToken(name) {
  if (name.indexOf(KEPT_PREFIX) !== 0) return null;
  var colon = name.indexOf(':', KEPT_PREFIX.length);
  return colon === -1 ? null : name.slice(KEPT_PREFIX.length, colon);
}

// The carried resource this page's URL names: its token, and how many times this page was
// reloaded to read it (written after a dot); null when the URL names none.
function keptFragment() {
  var hash = window.location.hash;
  if (hash.indexOf(KEPT_FRAGMENT) !== 0) return null;
  var named = hash.slice(KEPT_FRAGMENT.length).split('.');
  if (!named[0]) return null;
  return { token: named[0], nameReloads: Number(named[1]) || 0 };
}

// Chromium may give this page a frame name older than the last one its predecessor wrote: a
// page it began making for a navigation the relay stopped goes on to the next one, with the
// name as it was then. The browser keeps the newer name, and a page made afresh gets it. So a
// page whose URL names a token its name does not carry reloads, leaving the name untouched (a
// write would replace the newer one), at most MAX_NAME_RELOADS times; then reads what it has.
// Returns whether this page is reloading.
function reloadForNewerName() {
  var named = keptFragment();
  if (!named || named.nameReloads >= MAX_NAME_RELOADS) return false;
  if (carriedToken(String(window.name)) === named.token) return false;
  note('this page has an older frame name than its predecessor wrote: reloading');
  window.history.replaceState(null, '', KEPT_FRAGMENT + named.token + '.' + (named.nameReloads + 1));
  window.location.reload();
  return true;
}

// The frame's own name as the relay wrote it (JSON); none where it is not.
function ownName(json) {
  try {
    return String(JSON.parse(json));
  } catch (malformed) {
    return '';
  }
}

// The resource this page's predecessor carried for it, named by this page's own fragment, if
// any. SECURITY: only what this page's URL names is taken, so a name a same-origin view wrote
// cannot reach a proxy page the host loads: the host's URLs carry no such fragment.
function takeKeptResource() {
  var named = keptFragment();
  var carried = takeCarried();
  if (!named) return null;
  // A reload of this page by the user must not look for the resource again.
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  if (signedPolicies) {
    // This relay never reloads for a host that signs, so the resource is not its own: a view
    // wrote it, to be mounted under a policy the host signed for another resource.
    warn('ignored a kept resource: this sandbox\'s policies are signed.' +
      guide('kept-resource-ignored'));
    return null;
  }
  var kept = carried && carried.token === named.token ? parseKept(carried.text) : null;
  if (!kept) warn('this page was reloaded for a resource that was not kept.' + guide('resource-not-kept'));
  return kept;
}

function parseKept(text) {
  try {
    var kept = JSON.parse(text);
    if (!kept || !kept.resource || typeof kept.resource !== 'object' || !Array.isArray(kept.held)) return null;
    var reloads = typeof kept.reloads === 'number' ? kept.reloads : MAX_RELOADS;
    return { resource: kept.resource, held: kept.held.slice(0, MAX_HELD), reloads: reloads };
  } catch (malformed) {
    return null;
  }
}

// Only the four lists of the spec's csp object go in the query, and only their strings: the
// service ignores other keys, and answers 400 to an entry that is not a string, which would
// leave the frame with an error page instead of the view.
function domainLists(csp) {
  var lists = {};
  if (csp === null || typeof csp !== 'object') return lists;
  DOMAIN_LISTS.forEach(function (list) {
    if (Array.isArray(csp[list])) {
      lists[list] = csp[list].filter(function (entry) {
        return typeof entry === 'string';
      });
    }
  });
  return lists;
}

function randomToken() {
  var bytes = new Uint8Array(16);
  window.crypto.getRandomValues(bytes);
  return Array.prototype.map.call(bytes, function (b) {
    return (b < 16 ? '0' : '') + b.toString(16);
  }).join('');
}
