// An in-memory Storage for opaque views, where the operator allows it (opaque_view_storage =
// "memory"): a view without allow-same-origin has an opaque origin, whose localStorage and
// sessionStorage throw on first touch, so a view that reads a saved theme at startup renders
// blank.
//
// SECURITY: the stand-in is the view's own: made in its document by a script that runs before
// any of the view's, it holds what that view writes and nothing else, shared with no other view
// and not with this page, and gone with the view (nothing persists). It adds no source to any
// policy: it is an inline script, which every view policy of the spec's template allows, placed
// after the doctype (so the view keeps its rendering mode) and before everything else.
//
// Offers the other parts: withMemoryStorage.

// The operator's per-host opt-in: read once.
var memoryStorage = config.memoryStorage === true;

// `html`, for an opaque view of a host that opted in, with the stand-in's script first.
function withMemoryStorage(html) {
  if (!memoryStorage) return html;
  var doctype = /^\s*<!doctype[^>]*>/i.exec(html);
  var at = doctype ? doctype[0].length : 0;
  // Split, as this page's own <script> would otherwise end here.
  var script = '<' + 'script>(' + installMemoryStorage.toString() + ')();<' + '/script>';
  return html.slice(0, at) + script + html.slice(at);
}

// Runs in the view's document, before its scripts: each storage that throws is replaced by a
// Storage kept in a Map, with the Storage methods and named access (localStorage.theme).
function installMemoryStorage() {
  ['localStorage', 'sessionStorage'].forEach(function (name) {
    try {
      if (window[name]) return;
    } catch (opaque) {
      // The opaque origin's storage: replaced below.
    }
    var items = new Map();
    var methods = {
      getItem: function (key) { key = String(key); return items.has(key) ? items.get(key) : null; },
      setItem: function (key, value) { items.set(String(key), String(value)); },
      removeItem: function (key) { items.delete(String(key)); },
      clear: function () { items.clear(); },
      key: function (index) { var keys = Array.from(items.keys()); return index < keys.length ? keys[index] : null; }
    };
    var storage = new Proxy(methods, {
      get: function (target, key) {
        if (key === 'length') return items.size;
        if (typeof key !== 'string' || Object.prototype.hasOwnProperty.call(methods, key)) return target[key];
        return items.has(key) ? items.get(key) : undefined;
      },
      set: function (target, key, value) { items.set(String(key), String(value)); return true; },
      deleteProperty: function (target, key) { items.delete(String(key)); return true; },
      has: function (target, key) { return items.has(String(key)) || key in target; },
      ownKeys: function () { return Array.from(items.keys()); },
      getOwnPropertyDescriptor: function (target, key) {
        if (!items.has(String(key))) return undefined;
        return { value: items.get(String(key)), writable: true, enumerable: true, configurable: true };
      }
    });
    Object.defineProperty(window, name, { value: storage, configurable: true, enumerable: true });
  });
}
