// startsWithPolicy (proxy-page/relay/42-meta.js), under node --test: whether a view's HTML has
// its CSP <meta> in force from its start. Held to parse5, a parser that follows the HTML
// standard, on 20 000 generated documents: whenever the relay says a policy comes first, the
// parsed document has that policy in its <head> with nothing before it that runs, loads or
// starts the body. The relay may say no where parse5 says yes (it does not decode character
// references, say): a needless default is loud, a missing one is silent.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'parse5';
import { loadRelay, pageConfig } from './load.mjs';
import { generator } from './policy-strings.mjs';

const { startsWithPolicy } = loadRelay(['startsWithPolicy']);
const DEFAULT_POLICY = "default-src 'none'; script-src 'self' 'unsafe-inline'";
const { withPolicyOf } = loadRelay(['withPolicyOf'], { config: pageConfig({ hostPolicy: true, defaultPolicy: DEFAULT_POLICY }) });

const POLICY = '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'">';

describe('startsWithPolicy: a policy the view has from its first byte', () => {
  // [html, the relay's answer, parse5's where it differs: the relay errs towards the default]
  const cases = [
    [POLICY, true],
    [`<!doctype html><html><head>${POLICY}<meta charset="utf-8"></head><body>x</body></html>`, true],
    [` \n<!-- a comment --><!DOCTYPE html><HTML lang=en><HEAD><meta charset=utf-8><title>t</title>${POLICY}`, true],
    [`\ufeff${POLICY}`, false],
    ['<META HTTP-EQUIV=content-security-policy CONTENT=img-src><p>', true],
    ['<meta content="img-src a>b" http-equiv="Content-Security-Policy">', true],
    ['<meta/http-equiv="Content-Security-Policy"/content="img-src x">', true],
    ['', false],
    ['<p>view</p>', false],
    [`<!-- ${POLICY} -->`, false],
    [`<!-- unterminated ${POLICY}`, false],
    [`<script>fetch('//x')</script>${POLICY}`, false],
    [`<link rel=stylesheet href=//x>${POLICY}`, false],
    [`<base href=//x>${POLICY}`, false],
    [`text ${POLICY}`, false],
    [`<body>${POLICY}`, false],
    [`</head>${POLICY}`, false, true],
    ['<meta http-equiv="&#67;ontent-Security-Policy" content="img-src x">', true],
    [`<title>${POLICY}</title>`, false],
    ['<meta http-equiv="Content-Security-Policy-Report-Only" content="img-src x">', false],
    ['<meta http-equiv="Content-Security-Policy" content="">', false],
    ['<meta http-equiv="Content-Security-Policy" content=" ">', false],
    ['<meta http-equiv="Content-Security-Policy">', false],
    ['<meta http-equiv="refresh" http-equiv="Content-Security-Policy" content="img-src x">', false],
    ['<meta http-equiv="Content-Security-Policy" content="img-src x', false],
    // A comment ends at "--!>" too; a title only at "</title" and a space, "/" or ">", and its
    // end tag's quoted attribute values are read (a ">" in one ends nothing).
    [`<!-- --!><script>1</script><!-- -->${POLICY}`, false],
    [`<!----!>${POLICY}`, true],
    [`<!--!>${POLICY}-->`, false],
    [`<title>t</titlex>${POLICY}</title><script>1</script>`, false],
    [`<title>t</title a="${POLICY}"><script>1</script>`, false],
    [`<title>t</TITLE\n/>${POLICY}`, true],
    // Only HTML whitespace is not text: a byte order mark, U+00A0 or U+3000 starts the body.
    [`\u00a0${POLICY}`, false],
    [`\u3000<!doctype html>${POLICY}`, false],
    [`\v${POLICY}`, false],
    // A content that names no directive a <meta> enforces restricts nothing.
    ['<meta http-equiv="Content-Security-Policy" content="&#32;"><script>1</script>', false],
    ['<meta http-equiv="Content-Security-Policy" content="x"><script>1</script>', false],
    ['<meta http-equiv="Content-Security-Policy" content=" ; ;">', false],
    ["<meta http-equiv=\"Content-Security-Policy\" content=\"frame-ancestors 'none'; sandbox; report-uri /r\">", false],
    ["<meta http-equiv=\"Content-Security-Policy\" content=\"\u00a0default-src 'none'\">", false],
    ["<meta http-equiv=\"Content-Security-Policy\" content=\"x; DEFAULT-SRC\t'none'\">", true],
    // Character references decoded as the parser does: MCP Inspector 2.x writes its quotes so.
    ["<meta http-equiv=\"Content-Security-Policy\" content=\"&#x64;efault-src 'none'\">", true],
    ['<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; connect-src &#39;self&#39;">', true],
    ['<meta http-equiv="Content-Security-Polic&#121;" content="img-src &quot;x&quot;">', true],
    ['<meta http-equiv="Content-Security-Policy" content="&#x20;&#9;;&#59;">', false],
    ['<meta http-equiv="Content-Security-Policy" content="&#100efault-src">', true],
    ['<meta http-equiv="Content-Security-Policy" content="&#1636;efault-src">', false],
    ['<meta http-equiv="Content-Security-Policy" content="&nbsp;img-src x">', false],
    ['<meta http-equiv="Content-Security-Policy" content="img-src x &notit; y">', false, true],
  ];
  for (const [html, expected, parsed = expected] of cases) {
    it(`${expected ? 'yes' : 'no '}: ${JSON.stringify(html).slice(0, 110)}`, () => {
      assert.equal(startsWithPolicy(html), expected);
      assert.equal(reference(html), parsed, 'parse5');
    });
  }
});

/** parse5's answer: a CSP <meta> in <head> before which only html, head, meta and title
 * elements, comments and whitespace come, in document order. */
function reference(html) {
  const document = parse(html);
  let answer = null;
  const walk = (node, inTitle) => {
    if (answer !== null) return;
    if (node.nodeName === '#text') {
      if (!inTitle && node.value.trim() !== '') answer = false;
      return;
    }
    if (node.tagName) {
      if (node.tagName === 'meta' && node.parentNode.tagName === 'head' && isPolicy(node)) {
        answer = true;
        return;
      }
      if (!['html', 'head', 'meta', 'title'].includes(node.tagName)) {
        answer = false;
        return;
      }
    }
    for (const child of node.childNodes ?? []) walk(child, inTitle || node.tagName === 'title');
  };
  walk(document, false);
  return answer === true;
}

/** The browser's reading of a <meta>: a policy that enforces something (CSP: directives split
 * on ";", names end at ASCII whitespace; frame-ancestors, report-uri and sandbox are ignored
 * in a <meta>; unknown names are ignored everywhere). */
function isPolicy(meta) {
  const value = (name) => meta.attrs.find((a) => a.name === name)?.value;
  if (value('http-equiv')?.toLowerCase() !== 'content-security-policy') return false;
  return (value('content') ?? '').split(';').some((directive) => {
    const name = directive.replace(/^[\t\n\f\r ]+/, '').split(/[\t\n\f\r ]/)[0].toLowerCase();
    return ENFORCED_IN_META.has(name);
  });
}

// CSP Level 3 and its companions (Trusted Types, Fenced Frames, webrtc), less the three a
// <meta> ignores.
const ENFORCED_IN_META = new Set(`child-src connect-src default-src fenced-frame-src font-src form-action frame-src
  img-src manifest-src media-src object-src script-src script-src-attr script-src-elem style-src style-src-attr
  style-src-elem worker-src base-uri upgrade-insecure-requests require-trusted-types-for trusted-types webrtc`.split(/\s+/));

// The pieces documents are made of: what may come before a policy, what may not, policies
// that are and are not, and pieces that are not even whole.
const PIECES = [
  ' ', '\n', '\t', '\f', '<!-- x -->', '<!-->', '<!--->', '<!-- -- -->', `<!-- ${POLICY} -->`, '<!-- ',
  '<!doctype html>', '<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN">', '<?xml version="1.0"?>', '<!x>',
  '<html>', '<html lang="en">', '<HTML>', '<head>', '<HEAD >', '</head>', '</html>', '<body>', '</body>',
  '<title>t</title>', '<TITLE>a<b</TITLE>', `<title>${POLICY}</title>`, '<title>', '<meta charset="utf-8">',
  '<meta name=x content=y>', '<meta>', '<script>1</script>', '<script>', '<link rel=stylesheet href=x>',
  '<style>a{}</style>', '<base href="/">', '<noscript>', '<img src=x>', '<p>', 'text', '&amp;', '<', '>', '</',
  '<a b=">">', '<meta content=">" name=x>',
  POLICY, "<META HTTP-EQUIV=Content-Security-Policy CONTENT=img-src>", "<meta http-equiv='content-security-policy' content=''>",
  '<meta http-equiv="Content-Security-Policy-Report-Only" content="img-src x">', '<meta http-equiv="&#67;ontent-Security-Policy" content="img-src x">',
  '<meta content="img-src x" http-equiv="Content-Security-Policy">', '<meta http-equiv="Content-Security-Policy" http-equiv="refresh" content="img-src x">',
  '<meta http-equiv = "Content-Security-Policy" content = "x" />', '<meta/http-equiv="Content-Security-Policy"/content="img-src x">',
  '<meta http-equiv="Content-Security-Policy" content="img-src x>y">', '<meta http-equiv="Content-Security-Policy" content="img-src x',
  '<meta http-equiv=Content-Security-Policy content=&quot;img-src&quot;>', '<meta http-equiv="Content-Security-Policy"content="img-src x">',
  // Every way a comment ends or does not, a title's end tag that is and is not one, text that
  // looks like space, and contents that restrict nothing.
  '<!-- a --!>', '<!-- a --!', '<!-- a --!->', '<!-- a ---!>', '<!--!>', '<!---!>', '<!---->', '<!-- <!-- -->', '-->', '--!>',
  '<title>a</titlex>', '</title>', '<title>a</title x=">">', '<title>a</title/>', '<title>a</TITLE\n>', `<title>a</title a="${POLICY}">`,
  '\u00a0', '\u3000', '\ufeff', '\v', '\u2028', '\r\n',
  '<meta http-equiv="Content-Security-Policy" content="&#32;">', "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src &#39;none&#39;\">",
  '<meta http-equiv="Content-Security-Policy" content="&#x69;mg-src &amp;">', '<meta http-equiv="Content-Security-Policy" content="&#0;img-src">',
  '<meta http-equiv="Content-Security-Policy" content="&nbsp;">', '<meta http-equiv="Content-Security-Policy" content="img-src&#12288;x">', "<meta http-equiv=\"Content-Security-Policy\" content=\"&#x64;efault-src 'none'\">",
  '<meta http-equiv="Content-Security-Policy" content="x">', '<meta http-equiv="Content-Security-Policy" content=";">',
  "<meta http-equiv=\"Content-Security-Policy\" content=\"frame-ancestors 'none'\">", '<meta http-equiv="Content-Security-Policy" content="sandbox">',
  "<meta http-equiv=\"Content-Security-Policy\" content=\"\u00a0img-src 'none'\">", "<meta http-equiv=\"Content-Security-Policy\" content=\" ; IMG-SRC 'none'\">",
];

describe('startsWithPolicy against parse5', () => {
  it('never says a policy comes first where the parsed document has none in force first (20 000 documents)', () => {
    const next = generator(0x5eed);
    let policies = 0;
    for (let n = 0; n < 20_000; n += 1) {
      let html = next(8) === 0 ? '\ufeff' : '';
      const pieces = 1 + next(8);
      for (let p = 0; p < pieces; p += 1) html += PIECES[next(PIECES.length)];
      const ours = startsWithPolicy(html);
      if (ours) {
        policies += 1;
        assert.equal(reference(html), true, `the relay took this for a policy first: ${JSON.stringify(html)}`);
      }
    }
    assert.ok(policies > 1000, `the generator makes documents with a policy first (${policies})`);
  });

  it('says so for every plain document where parse5 does (no character references, end tags or stray brackets)', () => {
    const next = generator(0xc0ffee);
    const plain = PIECES.filter((piece) => !/&|^<\/|^(<|>|-->|--!>)$/.test(piece));
    for (let n = 0; n < 20_000; n += 1) {
      let html = '';
      const pieces = 1 + next(8);
      for (let p = 0; p < pieces; p += 1) html += plain[next(plain.length)];
      if (reference(html)) assert.equal(startsWithPolicy(html), true, `a needless default for: ${JSON.stringify(html)}`);
    }
  });
});

describe('withPolicyOf: the default a view without a policy first gets', () => {
  it('is in force first wherever the document starts (20 000 documents)', () => {
    const next = generator(0xbadd0c);
    const meta = (html) => parse(html).childNodes.find((n) => n.tagName === 'html')
      .childNodes[0].childNodes.find((n) => n.tagName === 'meta');
    let defaulted = 0;
    for (let n = 0; n < 20_000; n += 1) {
      let html = '';
      const pieces = 1 + next(8);
      for (let p = 0; p < pieces; p += 1) html += PIECES[next(PIECES.length)];
      const served = withPolicyOf(html);
      if (served === html) continue;
      defaulted += 1;
      assert.equal(reference(served), true, `no policy first in: ${JSON.stringify(served)}`);
      const first = meta(served);
      assert.equal(first?.attrs.find((a) => a.name === 'content')?.value, DEFAULT_POLICY, JSON.stringify(served));
    }
    assert.ok(defaulted > 5000, `the generator makes documents without a policy first (${defaulted})`);
  });

  it('keeps a doctype first only when HTML whitespace alone comes before it', () => {
    const policy = withPolicyOf('<!doctype html>').indexOf('<meta');
    assert.ok(policy > 0 && withPolicyOf(' \n<!DOCTYPE html><p>').startsWith(' \n<!DOCTYPE html><meta'));
    for (const before of ['\ufeff', '\u00a0', '\u3000', 'x']) {
      assert.ok(withPolicyOf(`${before}<!doctype html><p>`).startsWith('<meta'), JSON.stringify(before));
    }
  });
});
