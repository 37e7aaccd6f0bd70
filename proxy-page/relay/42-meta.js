// Whether a view's HTML starts with its own policy: a CSP <meta> the browser applies before
// anything in the document runs or loads (for a host that writes its views' policies).
//
// spec (HTML): a <meta http-equiv="Content-Security-Policy"> applies only in <head>, and only
// from where it is parsed on. SECURITY: the document is read as the HTML tokenizer reads its
// start, and only what cannot run or load may come first: ASCII whitespace, comments, the
// doctype, <html>, <head>, other <meta> elements and <title>. A policy in a comment, in the
// body, after a script or after anything else is not one the view has from its start; in
// doubt, the answer is no (the view then gets the spec's default, loudly).
//
// Offers the other parts: startsWithPolicy.

var META_PREFIX_ALLOWED = { html: true, head: true, meta: true, title: true };
// spec (HTML): the tokenizer's whitespace, ASCII's; a carriage return is read as a line feed.
// Anything else (a byte order mark, U+00A0) is text, and text starts the body.
var HTML_SPACE = '\t\n\f\r ';
// spec (HTML, RCDATA): a title ends only at "</title" followed by whitespace, "/" or ">".
var TITLE_END = /<\/title[\t\n\f\r \/>]/gi;
// spec (CSP): the directives a <meta> policy enforces. A policy naming none of them (an empty
// one, "x", or only frame-ancestors, report-uri or sandbox, which a <meta> ignores) restricts
// nothing, so it is no policy here.
var META_DIRECTIVES = [
  'default-src', 'script-src', 'script-src-elem', 'script-src-attr', 'style-src', 'style-src-elem',
  'style-src-attr', 'img-src', 'font-src', 'connect-src', 'media-src', 'object-src', 'frame-src',
  'child-src', 'worker-src', 'manifest-src', 'base-uri', 'form-action', 'fenced-frame-src',
  'upgrade-insecure-requests', 'require-trusted-types-for', 'trusted-types', 'webrtc'
];

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
      at = commentEnd(html, at);
    } else if (/^<[!?]/.test(html.slice(at, at + 2))) {
      // The doctype, or a bogus comment: either ends at the first ">", quoted or not.
      var close = html.indexOf('>', at);
      at = close === -1 ? -1 : close + 1;
    } else {
      var tag = readTag(html, at);
      if (tag === null || !META_PREFIX_ALLOWED[tag.name]) return false;
      if (tag.name === 'meta' && isPolicyMeta(tag.attributes)) return true;
      at = tag.name === 'title' ? titleEnd(html, tag.end) : tag.end;
    }
    if (at === -1) return false; // the document ended inside it
  }
}

function skipSpace(html, at) {
  while (at < html.length && HTML_SPACE.indexOf(html.charAt(at)) !== -1) at += 1;
  return at;
}

// Where the comment opened at `at` ends, or -1. spec (HTML): at its first "-->" or "--!>";
// "<!-->" and "<!--->" are whole comments, so "-->" is looked for from the opening's dashes.
function commentEnd(html, at) {
  var plain = html.indexOf('-->', at + 2);
  var bang = html.indexOf('--!>', at + 4);
  if (plain === -1 && bang === -1) return -1;
  if (bang === -1 || (plain !== -1 && plain < bang)) return plain + 3;
  return bang + 4;
}

// Where the title whose text starts at `at` ends, or -1: past its end tag, whose attributes
// (a parse error, but read) may hold a quoted ">".
function titleEnd(html, at) {
  TITLE_END.lastIndex = at;
  var closing = TITLE_END.exec(html);
  if (closing === null) return -1;
  var tag = readAttributes(html, closing.index + '</title'.length);
  return tag === null ? -1 : tag.end;
}

// A start tag at `at`: its lower-case name, its attributes (the first of each name, as the
// parser keeps it) and where it ends; null for anything else (an end tag, a bare "<").
function readTag(html, at) {
  var name = /^<([a-zA-Z][^\t\n\f\r \/>]*)/.exec(html.slice(at, at + 64));
  if (name === null) return null;
  var tag = readAttributes(html, at + name[0].length);
  if (tag !== null) tag.name = name[1].toLowerCase();
  return tag;
}

// The attributes of a tag from `i`, just past its name, to its ">": {attributes, end}, or null
// when the document ends first (the parser then drops the tag).
function readAttributes(html, i) {
  var attributes = {};
  for (;;) {
    while (i < html.length && (HTML_SPACE + '/').indexOf(html.charAt(i)) !== -1) i += 1;
    if (i >= html.length) return null;
    if (html.charAt(i) === '>') return { attributes: attributes, end: i + 1 };
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

// An enforced policy: http-equiv names it exactly (report-only policies block nothing), and its
// content, read as the parser decodes it, names a directive a <meta> enforces.
function isPolicyMeta(attributes) {
  var equiv = decodeReferences(attributes['http-equiv']);
  var content = decodeReferences(attributes.content);
  if (equiv === null || content === null || equiv.toLowerCase() !== 'content-security-policy') return false;
  return content.split(';').some(function (directive) {
    var name = asciiTokens(directive)[0];
    return name !== undefined && META_DIRECTIVES.indexOf(name.toLowerCase()) !== -1;
  });
}

// spec (HTML): an attribute value with its character references decoded (MCP Inspector 2.x
// writes each quote of its policy as "&#39;"; "&#32;" is a space), as far as a policy's
// reading needs it: a code point past ASCII stands as U+FFFD, which no directive name holds.
// A named reference other than the five an escaping function writes is not decoded here: in
// doubt (null), no policy. Undefined (no attribute) is null too.
var NAMED_REFERENCES = { amp: '&', quot: '"', apos: '\'', lt: '<', gt: '>' };

function decodeReferences(value) {
  if (typeof value !== 'string') return null;
  var unknown = false;
  var decoded = value.replace(/&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[a-zA-Z][a-zA-Z0-9]*;?)/g, function (whole, body) {
    if (body.charAt(0) === '#') {
      var code = /^#[xX]/.test(body) ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code > 0 && code < 0x80 ? String.fromCharCode(code) : '\ufffd';
    }
    var name = body.replace(/;$/, '');
    if (body.slice(-1) === ';' && Object.prototype.hasOwnProperty.call(NAMED_REFERENCES, name)) {
      return NAMED_REFERENCES[name];
    }
    unknown = true;
    return whole;
  });
  return unknown ? null : decoded;
}
