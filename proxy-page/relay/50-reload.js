// The self-upgrade: a page reloaded with the policy its resource declares, when the host sent
// the csp only in sandbox-resource-ready, and the resource kept for the new page.
//
// spec: the view's policy is built from the resource's csp metadata.
// SECURITY: never for a page the host requested with ?csp=, never for a host that signs its
// policies; a kept resource is read only when this page's own URL names it. policyUrl,
// domainLists and parseKept are unit-tested in tests/relay/.

// spec: the view's policy is built from the resource's csp metadata. A host that sends the
// csp only in sandbox-resource-ready (as the spec's flow allows) reached a page whose header
// was fixed without it. The page cannot change its own header, so it reloads itself with the
// declared domains in ?csp= (the service builds the header with the same strict grammar as
// for any host), keeping the resource in this origin's sessionStorage for the new page, which
// mounts it at once.
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
  if (params.has(CSP_PARAMETER) && !upgraded) return null;
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
    console.warn('[sandbox] the declared domains need a ' + queryBytes + '-byte query, over the ' +
      'service\'s limit (' + config.maxQueryBytes + '): mounting under the served policy. Pass ' +
      'the csp in ?csp= yourself, or ask the operator to raise limits.max_query_bytes.');
    return false;
  }
  var kept = { key: KEPT_PREFIX + randomToken(), resource: keptCopy(params), reloads: reloads };
  if (!keepResource(kept)) return false;
  state.upgrading = kept;
  url.hash = KEPT_FRAGMENT.slice(1) + kept.key.slice(KEPT_PREFIX.length);
  console.info('[sandbox] the resource needs another policy than this page\'s (the host sent ' +
    'its csp only in sandbox-resource-ready): reloading with it in ?csp=');
  window.location.replace(url.href);
  return true;
}

// A resource that arrived while this page's reload for an earlier one is under way takes that
// one's place in the kept copy.
function keepInstead(params) {
  state.upgrading.resource = keptCopy(params);
  keepResource(state.upgrading);
}

function keptCopy(params) {
  return { html: params.html, sandbox: params.sandbox, permissions: params.permissions, csp: params.csp };
}

// Writes the resource, and the host messages held for its view, for this page's reload. They
// travel as JSON: a message JSON cannot carry (a cycle, a BigInt) is dropped with a warning.
function keepResource(kept) {
  var carried = state.held.filter(function (message) {
    try {
      JSON.stringify(message);
      return true;
    } catch (notJson) {
      console.warn('[sandbox] dropped a held host message that cannot cross this page\'s reload (not JSON)');
      return false;
    }
  });
  try {
    window.sessionStorage.setItem(kept.key, JSON.stringify({
      at: Date.now(), resource: kept.resource, held: carried, reloads: kept.reloads
    }));
    return true;
  } catch (error) {
    console.warn('[sandbox] cannot keep the resource for a reload with its domains (' + error +
      '): mounting under the served policy. Pass the csp in ?csp= to avoid the reload.');
    return false;
  }
}

// The resource this page's predecessor kept for it, named by this page's own fragment, if
// any; deleted at once, whatever happens next. SECURITY: only the entry this page's URL names
// is read, so an entry a same-origin view planted cannot reach a proxy page the host loads:
// the host's URLs carry no such fragment. Entries whose reload never came are removed.
function takeKeptResource() {
  var token = window.location.hash.indexOf(KEPT_FRAGMENT) === 0 ?
    window.location.hash.slice(KEPT_FRAGMENT.length) : null;
  var store;
  try {
    store = window.sessionStorage;
  } catch (unavailable) {
    return null;
  }
  var text = null;
  if (token) {
    text = store.getItem(KEPT_PREFIX + token);
    store.removeItem(KEPT_PREFIX + token);
  }
  // Swept from a copy of the keys: removing an item may reorder the rest.
  var keys = [];
  for (var i = 0; i < store.length; i++) keys.push(store.key(i));
  keys.forEach(function (key) {
    if (key && key.indexOf(KEPT_PREFIX) === 0 && isStale(store.getItem(key))) store.removeItem(key);
  });
  if (!token) return null;
  // A reload of this page by the user must not look for the resource again.
  window.history.replaceState(null, '', window.location.pathname + window.location.search);
  if (signedPolicies) {
    // This relay never reloads for a host that signs, so the entry is not its own: a view
    // wrote it, to be mounted under a policy the host signed for another resource.
    console.warn('[sandbox] ignored a kept resource: this sandbox\'s policies are signed, and ' +
      'the relay never reloads for one, so it was not kept by this relay');
    return null;
  }
  var kept = parseKept(text);
  if (!kept) console.warn('[sandbox] this page was reloaded for a resource that was not kept: send sandbox-resource-ready again');
  return kept;
}

function isStale(text) {
  try {
    return !(Date.now() - JSON.parse(text).at < KEPT_MAX_AGE_MS);
  } catch (malformed) {
    return true;
  }
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
