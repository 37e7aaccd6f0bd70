// The relay between one host page and one MCP App view (spec 2026-01-26, "Sandbox proxy").
//
// The server rendered this page for exactly one host origin and put it, with the view policy it
// applied, in #sandbox-config. Everything here follows from that: trust only that origin, mount
// one view, relay JSON-RPC both ways unchanged (or, for a host whose operator opted in, any
// message), keep the reserved sandbox-* messages to ourselves.
(function () {
  'use strict';

  var RESERVED_PREFIX = 'ui/notifications/sandbox-';
  var PROXY_READY = 'ui/notifications/sandbox-proxy-ready';
  var RESOURCE_READY = 'ui/notifications/sandbox-resource-ready';
  var CSP_VIOLATION = 'ui/notifications/sandbox-csp-violation';
  var DOMAIN_LISTS = ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'];
  // What a host source without a scheme stands for (see covers).
  var PAGE_SCHEME = window.location.protocol.slice(0, -1);
  // Host messages held until the view is listening; a host that floods before then loses the rest.
  var MAX_HELD = 256;
  // CSP violation notices passed to the host per page; a view in a loop of violations must not
  // flood it.
  var MAX_VIOLATIONS = 50;
  // A resource kept across this page's own reload (see upgrade): sessionStorage key prefix, the
  // fragment that names the one this page must take, the marker the service counts, and how
  // long an entry whose reload never came is kept.
  var KEPT_PREFIX = 'mcp-sandbox-proxy:kept:';
  var KEPT_FRAGMENT = '#sandbox-kept=';
  var UPGRADE_PARAMETER = 'upgrade';
  var KEPT_MAX_AGE_MS = 30000;
  // Reloads one resource may cost: one for its domains, and one more when it replaced another
  // resource while that one's reload was under way.
  var MAX_RELOADS = 2;
  var DEFAULT_SANDBOX = ['allow-scripts', 'allow-same-origin', 'allow-forms'];
  // spec: permissions keys → Permissions Policy features of the inner frame's `allow`.
  var PERMISSION_FEATURES = {
    camera: 'camera',
    microphone: 'microphone',
    geolocation: 'geolocation',
    clipboardWrite: 'clipboard-write'
  };

  var config = readConfig();
  var hostOrigin = config.hostOrigin;
  // The operator's per-host opt-in (relay_messages = "any"): views and host that speak a wire
  // of their own. Only what is relayed changes; whom messages come from and go to does not.
  var anyMessages = config.messages === 'any';
  // SECURITY: the tokens this host's views may ever get (the operator's view_sandbox); a host
  // override can only pick from these, and the default is cut to them. Never
  // allow-top-navigation*: a view must not replace the chat it is shown in. The page's own
  // header carries the same set as a CSP sandbox policy, so nothing below the page has more,
  // whatever a view does to its frames (WebKit forgets an ancestor's flags otherwise).
  var viewSandbox = config.viewSandbox || ['allow-scripts'];
  // SECURITY: the operator's per-host opt-in (policy_keys): the service serves a ?csp= only
  // with the host's signature, so this page never reloads itself for a policy (it cannot sign)
  // and no kept resource is ever meant for it. A view that can script this page can still
  // navigate it, but only to policies the host signed.
  var signedPolicies = config.signedPolicies === true;
  var view = null;          // the inner <iframe>, once a resource is mounted in it
  var viewTarget = null;    // targetOrigin for posts to the view: our origin, or '*' when opaque
  var viewDocument = null;  // the document we wrote, for a same-origin view
  var viewNavigated = false; // the inner frame left the view's document: relay nothing more
  var viewListening = false;
  var held = [];
  var violations = 0;
  var hinted = {};          // the opt-ins already named to this view's developer
  var upgrading = null;     // {key, resource, reloads} kept for this page's own reload, while it runs

  function readConfig() {
    var element = document.getElementById('sandbox-config');
    return JSON.parse(element.textContent);
  }

  // spec: the proxy exists to be framed by the host; alone it has nothing to relay.
  if (window.top === window) {
    refuse('This page is an MCP Apps sandbox proxy for ' + hostOrigin +
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
    console.warn('[sandbox] this page is not a secure context (plain http off loopback): the ' +
      'relay and the views can be changed in transit. Serve the sandbox over https.');
  }
  clearPlantedCookies();
  reportDroppedSources();
  reportRefusedPolicy();
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
    held = kept.held;
    held.forEach(function (message) {
      if (isJsonRpc(message)) followTheme(message);
    });
    mount(kept.resource, kept.reloads);
  }
  // The host signs its policies and this page's ?csp= did not verify: the service served the
  // spec's default policy instead, and says why.
  function reportRefusedPolicy() {
    if (typeof config.policyRefused !== 'string') return;
    console.warn('[sandbox] this page has the spec\'s default policy, not its ?csp=: ' +
      config.policyRefused + '. The host\'s backend signs ?csp= with the key the sandbox\'s ' +
      'operator gave it (policy_keys).');
  }

  // A host must never wait for nothing: without a view from a kept resource (or a reload under
  // way for it), say ready.
  if (!view && !upgrading) postToHost({ jsonrpc: '2.0', method: PROXY_READY, params: {} });

  // SECURITY: the service sets no cookie, so every cookie this page can see was set by a view,
  // for this name or a parent one that every MCP server's label shares: a note from one
  // server's view to another's, or a flood that costs later views their pages. The service's
  // answer clears them with Clear-Site-Data, which Chromium honours in a frame and Firefox
  // does not; so they are also expired here, for this host and each parent, before any view
  // is mounted. A view can only set cookies that script can see, so none escapes this.
  function clearPlantedCookies() {
    var jar = document.cookie;
    if (!jar) return;
    var names = jar.split(';').map(function (pair) {
      return pair.split('=')[0].trim();
    }).filter(Boolean);
    var labels = window.location.hostname.split('.');
    var domains = [''];
    for (var i = 0; i < labels.length - 1; i++) domains.push('; Domain=' + labels.slice(i).join('.'));
    var paths = ['/', window.location.pathname];
    var expired = '=; Expires=Thu, 01 Jan 1970 00:00:00 GMT';
    var kinds = ['', '; Secure; SameSite=None', '; Secure; SameSite=None; Partitioned'];
    names.forEach(function (name) {
      domains.forEach(function (domain) {
        paths.forEach(function (path) {
          kinds.forEach(function (kind) {
            document.cookie = name + expired + '; Path=' + path + domain + kind;
          });
        });
      });
    });
    console.warn('[sandbox] cleared ' + names.length + ' cookie(s) a view had set for this ' +
      'sandbox name: views must not use cookies here (another server\'s view could read them)');
  }

  // When the host removes this frame (or leaves), the view goes first, so that anything it does
  // on its way out (an unload handler planting cookies) is done, then the cookies are expired:
  // a flood of them would otherwise travel with the next proxy page request, and over HTTP/2 a
  // large one is refused before the service can clear it. A page kept for back/forward
  // (persisted) keeps its view.
  function onPageHide(event) {
    if (!event.persisted && view && view.parentNode) view.parentNode.removeChild(view);
    clearPlantedCookies();
    if (upgrading) keepResource(upgrading);
  }

  function refuse(reason) {
    var p = document.createElement('p');
    p.className = 'refusal';
    p.textContent = reason;
    document.body.appendChild(p);
    console.error('[sandbox] ' + reason);
  }

  function onMessage(event) {
    // Nothing a peer sends may stop the relay: every failure is logged and the listener lives on.
    try {
      if (event.source === window.parent) {
        if (event.origin !== hostOrigin) {
          console.warn('[sandbox] ignored a message from ' + event.origin + ': only ' + hostOrigin + ' may drive this page');
          return;
        }
        fromHost(event.data);
      } else if (isFromView(event)) {
        fromView(event.data);
      }
      // Anything else (sibling frames, popups, frames inside the view) is not a peer: ignored.
    } catch (error) {
      console.error('[sandbox] relay error (message dropped):', error);
    }
  }

  // The view is the document we mounted in the inner frame, not whatever that frame shows
  // later: a view that navigates itself elsewhere (a frameDomains page, say) is no longer the
  // view, and nothing more is relayed for it.
  function viewIsMounted() {
    if (!view || viewNavigated) return false;
    if (viewTarget === '*') return true; // opaque: the frame's load events tell (see mount)
    try {
      return view.contentDocument === viewDocument;
    } catch (crossOrigin) {
      return false;
    }
  }

  // The view's window is the inner frame's contentWindow, in every engine (Chromium, Firefox and
  // WebKit are tested): a same-origin view must also still be the document we wrote.
  function isFromView(event) {
    if (!view || !event.source || event.source !== view.contentWindow) return false;
    if (viewTarget === '*') return viewIsMounted();
    return event.origin === window.location.origin && viewIsMounted();
  }

  function isJsonRpc(data) {
    return data !== null && typeof data === 'object' && !Array.isArray(data) && data.jsonrpc === '2.0' &&
      (data.method === undefined || typeof data.method === 'string');
  }

  // spec: ui/notifications/sandbox-* are between proxy and host. Under any wire, so is anything
  // that names such a method, JSON-RPC or not: a message, an element of a batch (an array),
  // and a string (or String object) that is one.
  function isReserved(data) {
    if (Array.isArray(data)) return data.some(namesReserved);
    return namesReserved(data);
  }

  function namesReserved(data) {
    var method = data !== null && typeof data === 'object' &&
      Object.prototype.toString.call(data) !== '[object String]' ? data.method : data;
    return method !== null && method !== undefined && String(method).indexOf(RESERVED_PREFIX) === 0;
  }

  // SECURITY: under relay_messages = "any" a host reads the view's messages by a wire of its
  // own, and may decode what they carry: a JSON string (where the method can hide behind
  // escapes, "ui\/…" or "\u0075i/…"), a nested batch, a field of another object, bytes. So a
  // view message is refused if any string in it, any key, any text its bytes decode to, or
  // any JSON such a text parses to names a reserved method; a Blob cannot be read here, so it
  // is refused too. Each object is looked at once (structured clones may be cyclic).
  function carriesReserved(data) {
    var seen = new Set();
    var pending = [data];
    while (pending.length) {
      var value = pending.pop();
      if (typeof value === 'string') {
        if (value.indexOf(RESERVED_PREFIX) !== -1) return true;
        var json = parsedJson(value);
        if (json !== undefined) pending.push(json);
        continue;
      }
      if (value === null || typeof value !== 'object' || seen.has(value)) continue;
      seen.add(value);
      if (typeof Blob !== 'undefined' && value instanceof Blob) return true;
      if (value instanceof ArrayBuffer || ArrayBuffer.isView(value)) {
        pending.push(new TextDecoder().decode(value));
      } else if (value instanceof String || value instanceof RegExp) {
        pending.push(value instanceof RegExp ? value.source : String(value));
      } else if (value instanceof Map || value instanceof Set) {
        value.forEach(function (v, k) { pending.push(k, v); });
      } else {
        Object.keys(value).forEach(function (key) { pending.push(key, value[key]); });
        if (value instanceof Error) pending.push(value.name, value.message);
      }
    }
    return false;
  }

  // The value a text holds as JSON, if it looks like JSON and is; otherwise undefined.
  function parsedJson(text) {
    var first = text.trim().charAt(0);
    if (first !== '{' && first !== '[' && first !== '"') return undefined;
    try {
      return JSON.parse(text);
    } catch (error) {
      return undefined;
    }
  }

  // Whether a message other than the proxy's own may pass: JSON-RPC, or anything if opted in.
  function mayRelay(data, from) {
    if (isJsonRpc(data) || anyMessages) return true;
    console.warn('[sandbox] dropped a non-JSON-RPC message from the ' + from + ' (the operator can ' +
      'allow any message for this host: relay_messages = "any")');
    return false;
  }

  function fromHost(data) {
    if (isJsonRpc(data) && data.method === RESOURCE_READY) {
      // spec: resource-ready is for the proxy; it is never relayed. A later one replaces the
      // view (a host re-renders a resource whose HTML changed): one view at a time, always.
      mount(data.params, 0);
      return;
    }
    if (isReserved(data)) {
      console.warn('[sandbox] dropped a ' + RESERVED_PREFIX + '* message from the host: reserved for the proxy');
      return;
    }
    if (!mayRelay(data, 'host')) return;
    if (isJsonRpc(data)) followTheme(data);
    if (!viewListening) {
      hold(data);
      return;
    }
    postToView(data);
  }

  // The page must stay transparent over the host. Chromium paints an opaque backdrop behind a
  // frame whose color scheme differs from its embedder's, so the page takes the theme the host
  // gives the view: hostContext.theme in the ui/initialize result, and host-context-changed.
  function followTheme(data) {
    var context = data.method === 'ui/notifications/host-context-changed' ? data.params :
      data.result && typeof data.result === 'object' ? data.result.hostContext : null;
    var theme = context && typeof context === 'object' ? context.theme : null;
    if (theme === 'light' || theme === 'dark') {
      document.documentElement.style.colorScheme = theme;
    }
  }

  function fromView(data) {
    // spec: ui/notifications/sandbox-* are between proxy and host; a view may not forge them.
    if (isReserved(data) || (anyMessages && carriesReserved(data))) {
      console.warn('[sandbox] dropped a ' + RESERVED_PREFIX + '* message from the view: reserved for the proxy');
      return;
    }
    if (!mayRelay(data, 'view')) return;
    if (!viewListening) {
      // The view's first message shows it is listening: deliver what the host sent early.
      viewListening = true;
      held.splice(0).forEach(function (message) {
        try {
          postToView(message);
        } catch (error) {
          console.error('[sandbox] could not deliver a held host message:', error);
        }
      });
    }
    postToHost(data);
  }

  function hold(data) {
    if (held.length >= MAX_HELD) {
      console.warn('[sandbox] dropped a host message: ' + MAX_HELD + ' are already waiting for the view');
      return;
    }
    held.push(data);
  }

  function postToHost(message) {
    // SECURITY: the host's origin, never '*': nobody else may read what the view says.
    window.parent.postMessage(message, hostOrigin);
  }

  function postToView(message) {
    if (!viewIsMounted()) {
      console.warn('[sandbox] dropped a host message: the view has navigated away');
      return;
    }
    view.contentWindow.postMessage(message, viewTarget);
  }

  // The view goes with its frame: its document and timers end, and nothing it queued is
  // relayed (its window is no longer the inner frame's). Host messages held for it are dropped:
  // they were meant for a view that is gone, and holding starts again for the next one.
  function unmount() {
    if (!view) return;
    if (view.parentNode) view.parentNode.removeChild(view);
    if (held.length) console.warn('[sandbox] dropped ' + held.length + ' host message(s) held for the replaced view');
    view = null;
    viewTarget = null;
    viewDocument = null;
    viewNavigated = false;
    viewListening = false;
    held = [];
    violations = 0;
    hinted = {};
  }

  // `reloads`: how many times this page was reloaded for this resource (0: from the host).
  function mount(params, reloads) {
    if (params === null || typeof params !== 'object' || typeof params.html !== 'string') {
      // A bad resource replaces nothing: the view already there (if any) stays.
      console.error('[sandbox] sandbox-resource-ready without params.html: nothing to mount');
      return;
    }
    if (upgrading) {
      // This page is already on its way to a reload for an earlier resource, which no engine
      // reliably lets it cancel: this resource takes that one's place in the kept copy, and
      // the next page reloads once more if this one needs another policy.
      console.info('[sandbox] a new sandbox-resource-ready during this page\'s reload: it replaces the earlier one');
      upgrading.resource = keptCopy(params);
      keepResource(upgrading);
      return;
    }
    if (view) console.info('[sandbox] a new sandbox-resource-ready: the view is replaced');
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
        viewDocument = doc;
      } else {
        // An opaque view: srcdoc gives it a real opaque origin, which document.write cannot.
        // Its document cannot be inspected, so its frame's loads are counted: the first is
        // the view, any later one is a navigation away from it.
        var loads = 0;
        frame.addEventListener('load', function () {
          loads += 1;
          if (loads > 1 && frame === view && !viewNavigated) {
            viewNavigated = true;
            console.warn('[sandbox] the view navigated away: relaying stopped');
          }
        });
        frame.srcdoc = params.html;
        document.body.appendChild(frame);
      }
    } catch (error) {
      // Only a mounted view counts: a failure leaves the page ready for another resource.
      if (frame.parentNode) frame.parentNode.removeChild(frame);
      viewDocument = null;
      console.error('[sandbox] could not mount the view:', error);
      return;
    }
    view = frame;
    viewTarget = sameOrigin ? window.location.origin : '*';
    if (sameOrigin) noteWhatTheHostMustEnforce();
    warnAboutMissingDomains(params.csp);
    warnAboutPermissions(params.permissions, !sameOrigin);
  }

  // SECURITY: a same-origin view shares this page's origin, so it can script this page and
  // navigate this very frame to any URL, carrying data past its connect-src. Nothing in this
  // frame can stop that, and nothing here can see the host's own policy: the host must. Said
  // once per mount, as a note rather than a warning: it is the spec's default and usually fine.
  function noteWhatTheHostMustEnforce() {
    console.info('[sandbox] the view shares this page\'s origin (allow-same-origin): it can ' +
      'script this page and navigate its frame anywhere. The host keeps it in: its iframe\'s ' +
      'sandbox attribute without allow-top-navigation, and a Content-Security-Policy frame-src ' +
      'that lists only the sandbox names (see "Security requirements" in docs/hosts.md).');
  }

  function sandboxTokens(override) {
    if (override === undefined || override === null) {
      return DEFAULT_SANDBOX.filter(function (token) { return viewSandbox.indexOf(token) !== -1; });
    }
    if (typeof override !== 'string') {
      // A malformed override must not fall back to the wider default.
      console.warn('[sandbox] params.sandbox is not a string: mounting with "allow-scripts" only');
      return ['allow-scripts'];
    }
    var tokens = [];
    override.split(/\s+/).forEach(function (token) {
      if (!token) return;
      if (viewSandbox.indexOf(token) === -1) {
        console.warn('[sandbox] ignored sandbox token "' + token + '": not one this host\'s views ' +
          'may get (the operator\'s view_sandbox: ' + viewSandbox.join(' ') + ')');
      } else if (tokens.indexOf(token) === -1) {
        tokens.push(token);
      }
    });
    return tokens;
  }

  // spec: each requested permission becomes a feature of the inner frame's `allow`, joined
  // with "; ". A feature reaches the view only if the host's outer iframe delegates it too.
  // SECURITY: the features not requested are denied outright ('none'): their default allowlist
  // is 'self', so a same-origin view would otherwise inherit whatever the host delegated to us.
  // A bare feature means "the frame's own origin", which an opaque view's origin never is: for
  // an opaque view a requested feature is delegated to `*`, the only allowlist it matches (it
  // follows the frame, so a view that navigates itself away keeps it; the relay stops there).
  function allowAttribute(permissions, opaque) {
    var requested = requestedPermissions(permissions);
    return Object.keys(PERMISSION_FEATURES).map(function (key) {
      if (!requested[key]) return PERMISSION_FEATURES[key] + " 'none'";
      return PERMISSION_FEATURES[key] + (opaque ? ' *' : '');
    }).join('; ');
  }

  function requestedPermissions(permissions) {
    return permissions !== null && typeof permissions === 'object' ? permissions : {};
  }

  // Say when a requested permission cannot reach the view, where this page can tell: the
  // host's iframe does not delegate it (engines with a permissions-policy API), or the view is
  // opaque and wants a camera or microphone, which Chromium and Firefox never give an opaque
  // origin (WebKit does, through the `*` above).
  function warnAboutPermissions(permissions, opaque) {
    var requested = requestedPermissions(permissions);
    var policy = document.featurePolicy || document.permissionsPolicy;
    Object.keys(PERMISSION_FEATURES).forEach(function (key) {
      if (!requested[key]) return;
      var feature = PERMISSION_FEATURES[key];
      if (policy && typeof policy.allowsFeature === 'function' && !policy.allowsFeature(feature)) {
        console.warn('[sandbox] the view asks for ' + key + ' but the host\'s iframe does not delegate ' +
          feature + ' (add it to its allow attribute): the view cannot get it');
      } else if (opaque && (key === 'camera' || key === 'microphone')) {
        console.warn('[sandbox] the view asks for ' + key + ' but it is opaque (no allow-same-origin): ' +
          'Chromium and Firefox never give ' + key + ' to an opaque origin; only WebKit does');
      }
    });
  }

  // spec: the host applies the server's declared domains. The header was fixed when this page
  // was requested; domains it still lacks were left out of the host's ?csp=, dropped by the
  // service, or could not be carried by the relay's one reload (see upgrade): say which.
  function warnAboutMissingDomains(requested) {
    var why = 'the host\'s ?csp= did not name them (a host may narrow the policy), or the ' +
      'service dropped them (see above).';
    if (signedPolicies) {
      why = (typeof config.policyRefused === 'string' ?
        'the signature of this page\'s ?csp= was refused (see above).' :
        'this sandbox serves a policy only in a URL the host\'s backend signed, and its ?csp= ' +
          'did not name them (or the service dropped them, see above).') +
        ' Sign a ?csp= with these domains on the host\'s backend.';
    }
    missingDomains(requested).forEach(function (missing) {
      console.warn('[sandbox] the view asks for ' + missing.list + ' ' + missing.domains.join(', ') +
        ' but the policy served with this page does not allow them: ' + why +
        ' The policy is this page\'s Content-Security-Policy header.');
    });
  }

  // The declared domains the served policy does not cover, by list: [{list, domains}].
  function missingDomains(requested) {
    if (requested === null || typeof requested !== 'object') return [];
    var applied = config.applied || {};
    var missing = [];
    DOMAIN_LISTS.forEach(function (list) {
      var asked = Array.isArray(requested[list]) ? requested[list] : [];
      var have = Array.isArray(applied[list]) ? applied[list] : [];
      var domains = asked.filter(function (domain) {
        return typeof domain === 'string' && !have.some(function (source) {
          return covers(source, domain);
        });
      });
      if (domains.length) missing.push({ list: list, domains: domains });
    });
    return missing;
  }

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
    if (signedPolicies) return null;
    var url = new URL(window.location.href);
    var params = url.searchParams;
    var upgraded = params.get(UPGRADE_PARAMETER) === '1';
    if (params.has('csp') && !upgraded) return null;
    var lists = domainLists(csp);
    var declared = DOMAIN_LISTS.some(function (list) {
      return lists[list] && lists[list].length > 0;
    });
    // Compared as values, not as URLs: rewriting the query re-encodes the rest of it (an
    // ?embedder= written by hand), and a page must not reload for a policy it already has.
    var wanted = declared ? JSON.stringify(lists) : null;
    var current = upgraded ? params.get('csp') : null;
    if (wanted === current) return null;
    url.hash = '';
    params.delete('csp');
    params.delete(UPGRADE_PARAMETER);
    if (wanted !== null) {
      params.set('csp', wanted);
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
    upgrading = kept;
    url.hash = KEPT_FRAGMENT.slice(1) + kept.key.slice(KEPT_PREFIX.length);
    console.info('[sandbox] the resource needs another policy than this page\'s (the host sent ' +
      'its csp only in sandbox-resource-ready): reloading with it in ?csp=');
    window.location.replace(url.href);
    return true;
  }

  function keptCopy(params) {
    return { html: params.html, sandbox: params.sandbox, permissions: params.permissions, csp: params.csp };
  }

  // Writes the resource, and the host messages held for its view, for this page's reload. They
  // travel as JSON: a message JSON cannot carry (a cycle, a BigInt) is dropped with a warning.
  function keepResource(kept) {
    var carried = held.filter(function (message) {
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

  function reportDroppedSources() {
    (config.dropped || []).forEach(function (d) {
      console.warn('[sandbox] dropped ' + d.list + ' entry ' + JSON.stringify(d.entry) + ': ' + d.reason);
    });
    var unlisted = (config.droppedCount || 0) - (config.dropped || []).length;
    if (unlisted > 0) console.warn('[sandbox] ... and ' + unlisted + ' more dropped entries');
  }

  // Some refusals are not about domains: the operator can allow them per host (view_opt_ins in
  // docs/configuration.md). Name the one that would, once per view, rather than leave the
  // developer with the browser's bare "refused to evaluate".
  var OPT_IN_HINTS = [
    { blocked: 'eval', opt: 'unsafe-eval', what: 'eval or new Function' },
    { blocked: 'wasm-eval', opt: 'wasm-unsafe-eval', what: 'WebAssembly compilation' },
    { blocked: 'blob', directive: 'worker-src', opt: 'worker-blob', what: 'a worker from a blob: URL' },
    { blocked: 'blob', directive: 'img-src', opt: 'blob-media', what: 'a blob: image' },
    { blocked: 'blob', directive: 'media-src', opt: 'blob-media', what: 'blob: media' }
  ];

  function hintAtOptIn(directive, blockedURI) {
    var blocked = String(blockedURI || '').replace(/:.*$/, '');
    OPT_IN_HINTS.forEach(function (hint) {
      if (hint.blocked !== blocked || (hint.directive && hint.directive !== directive) || hinted[hint.opt]) return;
      hinted[hint.opt] = true;
      console.warn('[sandbox] the view\'s policy refused ' + hint.what + ' (' + directive + '). The ' +
        'operator can allow it for this host: view_opt_ins = ["' + hint.opt + '"] ' +
        '(see "View opt-ins" in docs/configuration.md).');
    });
  }

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
    if (view && (e.blockedURI === 'eval' || e.blockedURI === 'wasm-eval')) reportViolation(e);
  }

  function reportViolation(e) {
    // Only the browser's own reports: a view can dispatch a synthetic event.
    if (!e.isTrusted || violations >= MAX_VIOLATIONS) return;
    violations += 1;
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
  }
})();
