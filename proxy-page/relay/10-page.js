// The proxy page itself: refusing to run where it cannot be what the spec asks (unframed, or
// framed without allow-same-origin), and the cookies views leave for the sandbox name.
//
// spec: the proxy is framed by the host; its origin must be a real one.
// SECURITY: no cookie a view set survives to the next view's page.
//
// Offers the other parts: clearPlantedCookies, onPageHide, refuse.

function refuse(reason) {
  var p = document.createElement('p');
  p.className = 'refusal';
  p.textContent = reason;
  document.body.appendChild(p);
  console.error('[sandbox] ' + reason);
}

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
  warn('cleared ' + names.length + ' cookie(s) a view had set.' + guide('cookies'));
}

// When the host removes this frame (or leaves), the view goes first, so that anything it does
// on its way out (an unload handler planting cookies) is done, then the cookies are expired:
// a flood of them would otherwise travel with the next proxy page request, and over HTTP/2 a
// large one is refused before the service can clear it. A page kept for back/forward
// (persisted) keeps its view.
function onPageHide(event) {
  if (!event.persisted && state.view && state.view.parentNode) state.view.parentNode.removeChild(state.view);
  clearPlantedCookies();
  if (state.upgrading) keepResource(state.upgrading);
}
