// The reserved methods: ui/notifications/sandbox-* are between proxy and host.
//
// spec: neither side relays them, and a view must not forge them.
// SECURITY: under relay_messages = "any", a view message that carries one in any form a host
// could decode is refused too (carriesReserved). Pure functions, unit-tested in tests/relay/.
//
// Offers the other parts: carriesReserved, isReserved.

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
