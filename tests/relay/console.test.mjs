// The console's guidance lives once, in docs/console.md: the relay links each long message's
// section by its anchor (guide('…'), GUIDE in 00-state.js), and each section is there for a
// message. Read from the relay as the binary carries it (acorn) and from the doc, so that a
// message linking a section that is not there, or a section no message links, fails here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';
import { loadRelay, relayBody, nodes } from './load.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'console.md'), 'utf8');

/**
 * The anchors `source` links: the argument of each guide('…') call. `unread` holds every other
 * use of the name guide (a computed anchor, the function passed around), which this test could
 * not follow, besides the function's own declaration.
 */
function links(source) {
  const program = parse(source, { ecmaVersion: 2020, sourceType: 'script', allowReturnOutsideFunction: true });
  const anchors = [];
  const unread = [];
  const read = new Set();
  for (const node of nodes(program)) {
    if (node.type === 'FunctionDeclaration' && node.id.name === 'guide') read.add(node.id);
    if (node.type !== 'CallExpression' || node.callee.type !== 'Identifier' || node.callee.name !== 'guide') continue;
    read.add(node.callee);
    const [anchor, ...more] = node.arguments;
    if (anchor && anchor.type === 'Literal' && typeof anchor.value === 'string' && !more.length) anchors.push(anchor.value);
    else unread.push(source.slice(node.start, node.end));
  }
  for (const node of nodes(program)) {
    if (node.type === 'Identifier' && node.name === 'guide' && !read.has(node)) unread.push(source.slice(node.start, node.end));
  }
  return { anchors, unread };
}

/**
 * The doc's sections: each `## ` heading with the `<a id="…"></a>` line just before it (blank
 * lines between allowed), or null where it has none. Headings inside code blocks are text.
 */
function sections(markdown) {
  const found = [];
  let anchor = null;
  let code = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) code = !code;
    if (code) continue;
    const id = /^<a id="([^"]+)"><\/a>$/.exec(line.trim());
    if (id) {
      anchor = id[1];
    } else if (line.startsWith('## ')) {
      found.push({ heading: line.slice(3), anchor });
      anchor = null;
    } else if (line.trim() !== '') {
      anchor = null;
    }
  }
  return found;
}

describe('the console links its guidance, and the guidance is there', () => {
  const linked = links(relayBody());
  const documented = sections(DOC);

  it("links docs/console.md in the project's repository", () => {
    const repository = /^repository = "([^"]+)"$/m.exec(readFileSync(join(ROOT, 'Cargo.toml'), 'utf8'))[1];
    const { GUIDE, guide } = loadRelay(['GUIDE', 'guide']);
    assert.equal(GUIDE, `${repository}/blob/main/docs/console.md#`);
    assert.equal(guide('query-too-long'), ` See ${repository}/blob/main/docs/console.md#query-too-long`);
  });

  it('names each anchor as written, so every one is read here', () => {
    assert.deepEqual(linked.unread, []);
    assert.ok(linked.anchors.length >= 20, linked.anchors.join(' '));
    for (const anchor of linked.anchors) assert.match(anchor, /^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  it('every anchor the relay links is a section of docs/console.md', () => {
    const ids = new Set(documented.map((section) => section.anchor));
    assert.deepEqual([...new Set(linked.anchors)].filter((anchor) => !ids.has(anchor)), []);
  });

  it('every section of docs/console.md has an anchor of its own, and the relay links it', () => {
    assert.deepEqual(documented.filter((section) => section.anchor === null).map((section) => section.heading), []);
    const ids = documented.map((section) => section.anchor);
    assert.deepEqual(ids.filter((id, i) => ids.indexOf(id) !== i), [], 'each anchor once');
    const used = new Set(linked.anchors);
    assert.deepEqual(ids.filter((id) => !used.has(id)), []);
  });

  it('the checks can fail: a computed anchor, a section without an anchor, one no message links', () => {
    const hostile = links("function guide(a) { return a; }\nvar x = guide('a') + guide(name) + guide('b', 1);\nvar g = guide;");
    assert.deepEqual(hostile.anchors, ['a']);
    assert.deepEqual(hostile.unread, ['guide(name)', "guide('b', 1)", 'guide']);
    const doc = sections('intro\n\n<a id="a"></a>\n## A\n\ntext\n## B\n\n```\n## not a heading\n```\n<a id="c"></a>\ntext\n## C\n');
    assert.deepEqual(doc, [{ heading: 'A', anchor: 'a' }, { heading: 'B', anchor: null }, { heading: 'C', anchor: null }]);
  });
});
