// Relaying: whom a message may come from and go to, what may pass, and holding host messages
// until the view listens.
//
// spec: only the host (window.parent, at the configured origin) and the mounted view speak to
// this page; JSON-RPC 2.0 passes unchanged both ways (any message for a host whose operator
// chose relay_messages = "any"); sandbox-resource-ready is for the proxy and mounts a view.
// SECURITY: posts to the host name its origin, never '*' (see 05-host.js). Each kind of refusal
// is said once per view (warnOnce): a peer that repeats one cannot flood the host developer's
// console.
//
// Offers the other parts: followTheme, forgetHeld, guide, holdAll, isJsonRpc, note, onMessage,
//   warn.

function onMessage(event) {
  // Nothing a peer sends may stop the relay: every failure is logged and the listener lives on.
  try {
    if (event.source === window.parent) {
      if (!acceptHost(event.origin)) {
        warnOnce('ignored a message from ' + event.origin + ': only ' +
          (state.hostOrigin || hostOriginsText()) + ' may drive this page');
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

// The view's window is the inner frame's contentWindow, in every engine (Chromium, Firefox and
// WebKit are tested): a same-origin view must also still be the document we wrote.
function isFromView(event) {
  if (!state.view || !event.source || event.source !== state.view.contentWindow) return false;
  if (state.viewTarget === '*') return viewIsMounted();
  return event.origin === window.location.origin && viewIsMounted();
}

// The view is the document we mounted in the inner frame, not whatever that frame shows
// later: a view that navigates itself elsewhere (a frameDomains page, say) is no longer the
// view, and nothing more is relayed for it.
function viewIsMounted() {
  if (!state.view || state.viewNavigated) return false;
  if (state.viewTarget === '*') return true; // opaque: the frame's load events tell (see mount)
  try {
    return state.view.contentDocument === state.viewDocument;
  } catch (crossOrigin) {
    return false;
  }
}

function isJsonRpc(data) {
  return data !== null && typeof data === 'object' && !Array.isArray(data) && data.jsonrpc === '2.0' &&
    (data.method === undefined || typeof data.method === 'string');
}

// Whether a message other than the proxy's own may pass: JSON-RPC, or anything if opted in.
function mayRelay(data, from) {
  if (isJsonRpc(data) || anyMessages) return true;
  warnOnce('dropped a non-JSON-RPC message from the ' + from + '.' + guide('non-json-rpc'));
  return false;
}

// Every line the relay prints starts with [sandbox], so a host developer can filter for them:
// a warning is something that did not happen as asked, a note is something to know.
function warn(text) {
  console.warn('[sandbox] ' + text);
}

function note(text) {
  console.info('[sandbox] ' + text);
}

// A warning said once for each view: the text is its kind (a refusal, and from whom), so the
// same refusal repeated, however often, is said once, and a new view hears it again.
function warnOnce(text) {
  if (!state.warned.has(text)) warn(text);
  state.warned.add(text);
}

// The end of a message whose why and fix are long: the link to its section of docs/console.md,
// where they are said once. The message itself still names what was wrong.
function guide(anchor) {
  return ' See ' + GUIDE + anchor;
}

// SECURITY: a document loaded from a URL is its own origin's, under its own policy: this page
// mounts only HTML it is sent, under the policy it was served with, so it loads no URL a host
// names. Said once per page; the message is not relayed (it was meant for a proxy).
function refuseLoadSrc() {
  if (state.loadSrcRefused) return;
  state.loadSrcRefused = true;
  warn('ignored ' + LOAD_SRC + ': this sandbox mounts only HTML, never a URL.' + guide('load-src'));
}

function fromHost(data) {
  if (isJsonRpc(data) && data.method === RESOURCE_READY) {
    // spec: resource-ready is for the proxy; it is never relayed. A later one replaces the
    // view (a host re-renders a resource whose HTML changed): one view at a time, always.
    mount(data.params, 0);
    return;
  }
  if (isReserved(data)) {
    warnOnce('dropped a ' + RESERVED_PREFIX + '* message from the host: reserved for the proxy');
    return;
  }
  if (isJsonRpc(data) && data.method === LOAD_SRC) {
    refuseLoadSrc();
    return;
  }
  if (!mayRelay(data, 'host')) return;
  if (isJsonRpc(data)) followTheme(data);
  if (!state.viewListening) {
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
    warnOnce('dropped a ' + RESERVED_PREFIX + '* message from the view: reserved for the proxy');
    return;
  }
  if (!mayRelay(data, 'view')) return;
  if (!state.viewListening) {
    // The view's first message shows it is listening: deliver what the host sent early.
    state.viewListening = true;
    state.held.splice(0).forEach(function (message) {
      try {
        postToView(message);
      } catch (error) {
        console.error('[sandbox] could not deliver a held host message:', error);
      }
    });
  }
  postToHost(data);
}

// Host messages held for the view now to be held for the view a reload of this page mounts
// (see takeKeptResource).
function holdAll(messages) {
  messages.forEach(hold);
}

// The view is gone: what was held for it, whether it listened, and the refusals said for it
// go with it; the next view's are said again.
function forgetHeld() {
  if (state.held.length) warn('dropped ' + state.held.length + ' host message(s) held for the replaced view');
  state.held = [];
  state.viewListening = false;
  state.warned.clear();
}

function hold(data) {
  if (state.held.length >= MAX_HELD) {
    warnOnce('dropped a host message: ' + MAX_HELD + ' are already waiting for the view');
    return;
  }
  state.held.push(data);
  carryHeld();
}

function postToView(message) {
  if (!viewIsMounted()) {
    warnOnce('dropped a host message: the view has navigated away');
    return;
  }
  state.view.contentWindow.postMessage(message, state.viewTarget);
}
