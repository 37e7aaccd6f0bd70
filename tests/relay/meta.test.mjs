// startsWithPolicy (proxy-page/relay/42-meta.js), under node --test: whether a view's HTML has
// its CSP <meta> in force from its start. Held to parse5, a parser that follows the HTML
// standard, on 20 000 generated documents: whenever the relay says a policy comes first, the
// parsed document has that policy in its <head> with nothing before it that runs, loads or
// starts the body. The relay may say no where parse5 says yes (it does not decode character
// references, say): a needless default is loud, a missing one is silent.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'parse5';
import { loadRelay } from './load.mjs';

const { startsWithPolicy } = loadRelay(['startsWithPolicy']);

const POLICY = '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'">';

describe('startsWithPolicy: a policy the view has from its first byte', () => {
  // [html, the relay's answer, parse5's where it differs: the relay errs towards the default]
  const cases = [
    [POLICY, true],
    [`<!doctype html><html><head>${POLICY}<meta charset="utf-8"></head><body>x</body></html>`, true],
    [` \n<!-- a comment --><!DOCTYPE html><HTML lang=en><HEAD><meta charset=utf-8><title>t</title>${POLICY}`, true],
    [`\ufeff${POLICY}`, false],
    ['<META HTTP-EQUIV=content-security-policy CONTENT=x><p>', true],
    ['<meta content="a>b" http-equiv="Content-Security-Policy">', true],
    ['<meta/http-equiv="Content-Security-Policy"/content="x">', true],
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
    ['<meta http-equiv="&#67;ontent-Security-Policy" content="x">', false, true],
    [`<title>${POLICY}</title>`, false],
    ['<meta http-equiv="Content-Security-Policy-Report-Only" content="x">', false],
    ['<meta http-equiv="Content-Security-Policy" content="">', false],
    ['<meta http-equiv="Content-Security-Policy" content=" ">', false],
    ['<meta http-equiv="Content-Security-Policy">', false],
    ['<meta http-equiv="refresh" http-equiv="Content-Security-Policy" content="x">', false],
    ['<meta http-equiv="Content-Security-Policy" content="x', false],
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

function isPolicy(meta) {
  const value = (name) => meta.attrs.find((a) => a.name === name)?.value;
  return value('http-equiv')?.toLowerCase() === 'content-security-policy' && (value('content') ?? '').trim() !== '';
}

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
  POLICY, "<META HTTP-EQUIV=Content-Security-Policy CONTENT=x>", "<meta http-equiv='content-security-policy' content=''>",
  '<meta http-equiv="Content-Security-Policy-Report-Only" content="x">', '<meta http-equiv="&#67;ontent-Security-Policy" content="x">',
  '<meta content="x" http-equiv="Content-Security-Policy">', '<meta http-equiv="Content-Security-Policy" http-equiv="refresh" content="x">',
  '<meta http-equiv = "Content-Security-Policy" content = "x" />', '<meta/http-equiv="Content-Security-Policy"/content="x">',
  '<meta http-equiv="Content-Security-Policy" content="x>y">', '<meta http-equiv="Content-Security-Policy" content="x',
  '<meta http-equiv=Content-Security-Policy content=&quot;x&quot;>', '<meta http-equiv="Content-Security-Policy"content="x">',
];

/** A small deterministic generator, so that a failure names a document that can be rerun. */
function generator(seed) {
  let state = seed >>> 0 || 1;
  return (n) => {
    state ^= state << 13; state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5; state >>>= 0;
    return state % n;
  };
}

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
    const plain = PIECES.filter((piece) => !/&|^<\/|^[<>]$/.test(piece));
    for (let n = 0; n < 20_000; n += 1) {
      let html = '';
      const pieces = 1 + next(8);
      for (let p = 0; p < pieces; p += 1) html += plain[next(plain.length)];
      if (reference(html)) assert.equal(startsWithPolicy(html), true, `a needless default for: ${JSON.stringify(html)}`);
    }
  });
});
