// The relay between one host page and one MCP App view (spec 2026-01-26, "Sandbox proxy").
//
// The server rendered this page for exactly one host (one origin, or the few its operator
// listed for one app) and put it, with the view policy it applied, in #sandbox-config.
// Everything here follows from that: trust only the host's origin, mount
// one view, relay JSON-RPC both ways unchanged (or, for a host whose operator opted in, any
// message), keep the reserved sandbox-* messages to ourselves.
//
// The files of proxy-page/relay/ are joined in name order inside one function (build.rs), so
// they share one scope. Before them the join writes the names the service shares with the
// relay (src/vocabulary.rs): DOMAIN_LISTS, POLICY_DIRECTIVES, OPT_INS, CSP_PARAMETER and
// UPGRADE_PARAMETER, typed nowhere here. This file holds the relay's own constants, the page's
// config and every piece of state the others change; each other file opens with what it owns,
// the rules it enforces and what it offers the other parts, which take nothing else of it
// (tests/relay/faces.test.mjs); the join ends by calling start() (99-start.js).
//
// Offers the other parts: CSP_VIOLATION, DEFAULT_SANDBOX, GUIDE, KEPT_FRAGMENT, KEPT_PREFIX,
//   LOAD_SRC, MAX_HELD, MAX_NAME_RELOADS, MAX_RELOADS, MAX_VIOLATIONS, PAGE_SCHEME,
//   PERMISSION_FEATURES, PROXY_READY, RESERVED_PREFIX, RESOURCE_READY, anyMessages, config,
//   hostOrigins, hostPolicy, signedPolicies, state, viewFeatures, viewSandbox.

var RESERVED_PREFIX = 'ui/notifications/sandbox-';
var PROXY_READY = 'ui/notifications/sandbox-proxy-ready';
var RESOURCE_READY = 'ui/notifications/sandbox-resource-ready';
var CSP_VIOLATION = 'ui/notifications/sandbox-csp-violation';
// sunpeak's dev mode asks its own proxy to load a URL of the host's in the inner frame; this
// page mounts only HTML it is sent, under its policy (see 20-messages.js).
var LOAD_SRC = 'sunpeak/sandbox-load-src';
// What a host source without a scheme stands for (see covers).
var PAGE_SCHEME = window.location.protocol.slice(0, -1);
// Host messages held until the view is listening; a host that floods before then loses the rest.
var MAX_HELD = 256;
// CSP violation notices passed to the host per page; a view in a loop of violations must not
// flood it.
var MAX_VIOLATIONS = 50;
// A resource carried across this page's own reload (see 50-reload): the prefix of the frame
// name that carries it, and the fragment that names the one this page must take.
var KEPT_PREFIX = 'mcp-sandbox-proxy:kept:';
var KEPT_FRAGMENT = '#sandbox-kept=';
// Reloads one resource may cost: one for its domains, and one more when it replaced another
// resource while that one's reload was under way.
var MAX_RELOADS = 2;
// Reloads a page may make to read a frame name newer than the one the browser gave it (see
// reloadForNewerName).
var MAX_NAME_RELOADS = 2;
var DEFAULT_SANDBOX = ['allow-scripts', 'allow-same-origin', 'allow-forms'];
// Where the console's long guidance lives, once: docs/console.md, a section per message. A
// message names what was wrong and ends with its section's link (see guide, 20-messages.js);
// tests/relay/console.test.mjs holds the anchors and the sections to each other.
var GUIDE = 'https://github.com/mcp-sandbox-proxy/mcp-sandbox-proxy/blob/main/docs/console.md#';
// spec: permissions keys → Permissions Policy features of the inner frame's `allow`.
var PERMISSION_FEATURES = {
  camera: 'camera',
  microphone: 'microphone',
  geolocation: 'geolocation',
  clipboardWrite: 'clipboard-write'
};
// The page config: read once, written by no part.
var config = Object.freeze(readConfig());
// The origins this page serves (frame-ancestors); the one of them that is its parent's is
// state.hostOrigin, once known (see 05-host.js).
var hostOrigins = config.hostOrigins;
// The operator's per-host opt-in (relay_messages = "any"): views and host that speak a wire
// of their own. Only what is relayed changes; whom messages come from and go to does not.
var anyMessages = config.anyMessages === true;
// SECURITY: the tokens this host's views may ever get (the operator's view_sandbox); a host
// override can only pick from these, and the default is cut to them. Never
// allow-top-navigation*: a view must not replace the chat it is shown in. The page's own
// header carries the same set as a CSP sandbox policy, so nothing below the page has more,
// whatever a view does to its frames (WebKit forgets an ancestor's flags otherwise).
var viewSandbox = config.viewSandbox || ['allow-scripts'];
// The operator's per-host grant (view_features): browser features beyond the spec's four
// permissions (fullscreen, autoplay, ...) that every view of this host gets, beside what its
// host asked for. A feature reaches a view only if the host's iframe delegates it too.
var viewFeatures = config.viewFeatures || [];
// SECURITY: the operator's per-host opt-in (policy_keys): the service serves a ?csp= only
// with the host's signature, so this page never reloads itself for a policy (it cannot sign)
// and no kept resource is ever meant for it. A view that can script this page can still
// navigate it, but only to policies the host signed.
var signedPolicies = config.signedPolicies === true;
// The operator's per-host opt-in (view_policy = "host"): the host writes each view's policy
// into its HTML, as a CSP <meta>; this page's header carries none, so the relay never reloads
// for one and cannot say what a view's policy lacks.
var hostPolicy = config.hostPolicy === true;

// Everything the relay changes while it runs, in one place. Each field is written only by the
// part named beside it; every other part reads it, or asks that part through its functions
// (tests/relay/state.test.mjs holds the parts to this).
var state = {
  hostOrigin: knownHostOrigin(hostOrigins), // 05-host.js: the parent's origin, once known
  view: null,             // 30-view.js: the inner <iframe>, once a resource is mounted in it
  viewTarget: null,       // 30-view.js: targetOrigin for posts to the view: ours, or '*' when opaque
  viewDocument: null,     // 30-view.js: the document we wrote, for a same-origin view
  viewNavigated: false,   // 30-view.js: the inner frame left the view's document: relay nothing more
  viewListening: false,   // 20-messages.js: the view sent its first message
  held: [],               // 20-messages.js: host messages held until the view listens
  violations: 0,          // 60-violations.js: CSP violation notices passed to the host for this view
  hinted: {},             // 40-policy.js: the opt-ins already named to this view's developer
  warned: new Set(),      // 20-messages.js: the refusals already said for this view, each once
  sandboxWarned: new Set(), // 35-frame.js: the refused sandbox tokens already named on this page
  featuresWarned: false,  // 35-frame.js: granted features the host does not delegate, named on this page
  loadSrcRefused: false,  // 20-messages.js: a host's sunpeak/sandbox-load-src already named
  upgrading: null,        // 50-reload.js: {key, resource, reloads, url, text} carried to this page's reload
  frameName: ''           // 50-reload.js: the frame's own name, given back once a carried resource is taken
};

function readConfig() {
  var element = document.getElementById('sandbox-config');
  return JSON.parse(element.textContent);
}
