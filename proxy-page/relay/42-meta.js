// Whether a view's HTML starts with its own policy: a CSP <meta> the browser applies before
// anything in the document runs or loads (for a host that writes its views' policies).
//
// spec (HTML): a <meta http-equiv="Content-Security-Policy"> applies only in <head>, and only
// from where it is parsed on. SECURITY: the document is read as the parser reads its start, and
// only what cannot run or load may come first: whitespace, comments, the doctype, <html>,
// <head>, other <meta> elements and <title>. A policy in a comment, in the body, after a script
// or after anything else is not one the view has from its start; in doubt, the answer is no.

var META_PREFIX_ALLOWED = { html: true, head: true, meta: true, title: true };
var TITLE_END = /<\/title/gi;

// The HTML is a string the relay writes (document.write, srcdoc), not bytes to decode: a byte
// order mark in it is a character, and starts the body like any text.
function startsWithPolicy(html) {
  var at = 0;
  for (;;) {
    at = skipSpace(html, at);
    if (at >= html.length) return false;
    if (html.charAt(at) !== '<') return false; // text: the body has begun
    // Written escaped: the relay is inline in the page, where a literal "<!--" would change how
    // the HTML parser reads the rest of its script element.
    if (html.startsWith('\u003c!--', at)) {
      // spec: "<!-->" and "<!--->" are whole comments, so "-->" is looked for from the "--".
      var end = html.indexOf('-->', at + 2);
      if (end === -1) return false;
      at = end + 3;
      continue;
    }
    if (/^<[!?]/.test(html.slice(at, at + 2))) {
      // The doctype, or a bogus comment: either ends at the first ">".
      var close = html.indexOf('>', at);
      if (close === -1) return false;
      at = close + 1;
      continue;
    }
    var tag = readTag(html, at);
    if (tag === null || !META_PREFIX_ALLOWED[tag.name]) return false;
    if (tag.name === 'meta' && isPolicyMeta(tag.attributes)) return true;
    at = tag.end;
    if (tag.name === 'title') {
      // Its text is not markup; the element ends at the first "</title", in any case (searched
      // from here, so that a large view is not copied to be lowered).
      TITLE_END.lastIndex = at;
      var closing = TITLE_END.exec(html);
      if (closing === null) return false;
      var after = html.indexOf('>', closing.index);
      if (after === -1) return false;
      at = after + 1;
    }
  }
}

function skipSpace(html, at) {
  while (at < html.length && '\t\n\f\r '.indexOf(html.charAt(at)) !== -1) at += 1;
  return at;
}

// A start tag at `at`: its lower-case name, its attributes (the first of each name, as the
// parser keeps it) and where it ends; null for anything else (an end tag, a bare "<").
function readTag(html, at) {
  var name = /^<([a-zA-Z][^\t\n\f\r \/>]*)/.exec(html.slice(at, at + 64));
  if (name === null) return null;
  var attributes = {};
  var i = at + name[0].length;
  for (;;) {
    while (i < html.length && '\t\n\f\r /'.indexOf(html.charAt(i)) !== -1) i += 1;
    if (i >= html.length) return null;
    if (html.charAt(i) === '>') return { name: name[1].toLowerCase(), attributes: attributes, end: i + 1 };
    var key = /^.[^\t\n\f\r \/>=]*/.exec(html.slice(i))[0];
    i += key.length;
    var j = skipSpace(html, i);
    var value = '';
    if (html.charAt(j) === '=') {
      j = skipSpace(html, j + 1);
      var quote = html.charAt(j);
      if (quote === '"' || quote === '\'') {
        var endQuote = html.indexOf(quote, j + 1);
        if (endQuote === -1) return null;
        value = html.slice(j + 1, endQuote);
        j = endQuote + 1;
      } else {
        value = /^[^\t\n\f\r >]*/.exec(html.slice(j))[0];
        j += value.length;
      }
      i = j;
    }
    key = key.toLowerCase();
    if (!Object.prototype.hasOwnProperty.call(attributes, key)) attributes[key] = value;
  }
}

// An enforced policy: http-equiv names it exactly (report-only policies block nothing), and it
// has a content. A value written with character references is not read as one: in doubt, no.
function isPolicyMeta(attributes) {
  var equiv = attributes['http-equiv'];
  var content = attributes.content;
  return typeof equiv === 'string' && equiv.toLowerCase() === 'content-security-policy' &&
    typeof content === 'string' && content.trim() !== '';
}
