// Each part of the relay has a face: its opening comment says what it offers the other parts
// ("Offers the other parts: a, b."), and a part reaches into another only through that. Read
// from the parts' sources with acorn (the join shares one scope, so nothing else holds it): a
// part that calls another's own helper, or an offer no other part takes, fails here. Writes to
// another part's state are state.test.mjs's.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';
import { nodes } from './load.mjs';

const RELAY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'proxy-page', 'relay');

/** The relay's parts as written: file name → source. */
function relayParts() {
  const parts = {};
  for (const file of readdirSync(RELAY).filter((f) => f.endsWith('.js')).sort()) {
    parts[file] = readFileSync(join(RELAY, file), 'utf8');
  }
  return parts;
}

/** What a part's opening comment says it offers: the names after "Offers the other parts:". */
function offers(text) {
  const opening = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('//')) break;
    opening.push(line.replace(/^\/\/\s?/, ''));
  }
  const said = /Offers the other parts: ([^.]*)\./.exec(opening.join(' ').replace(/\s+/g, ' '));
  return said ? said[1].split(',').map((name) => name.trim()).filter(Boolean) : [];
}

/**
 * Where `parts` break their faces: names a part takes from another that the other does not
 * offer, and offers that are not the part's own or that no other part takes.
 */
function breaches(parts) {
  const definedBy = Object.create(null);
  const programs = {};
  for (const [part, text] of Object.entries(parts)) {
    programs[part] = parse(text, { ecmaVersion: 2020, sourceType: 'script' });
    for (const node of programs[part].body) {
      if (node.type === 'FunctionDeclaration') definedBy[node.id.name] = part;
      if (node.type === 'VariableDeclaration') for (const d of node.declarations) definedBy[d.id.name] = part;
    }
  }
  const taken = Object.create(null);
  const unoffered = [];
  for (const [part, program] of Object.entries(programs)) {
    for (const node of nodes(program)) {
      const owner = node.type === 'Identifier' ? definedBy[node.name] : undefined;
      if (!owner || owner === part) continue;
      (taken[owner] ||= new Set()).add(node.name);
      if (!offers(parts[owner]).includes(node.name)) unoffered.push(`${part} takes ${owner}'s ${node.name}`);
    }
  }
  const stale = [];
  for (const [part, text] of Object.entries(parts)) {
    for (const name of offers(text)) {
      if (definedBy[name] !== part) stale.push(`${part} offers ${name}, which it does not define`);
      else if (!taken[part]?.has(name)) stale.push(`${part} offers ${name}, which no other part takes`);
    }
  }
  return { unoffered: [...new Set(unoffered)].sort(), stale: stale.sort() };
}

describe("the relay's parts", () => {
  it('take from one another only what each offers, and offer only what another takes', () => {
    const parts = relayParts();
    assert.ok(Object.keys(parts).length >= 10);
    assert.deepEqual(breaches(parts), { unoffered: [], stale: [] });
  });

  it('the check can fail: a private helper taken, an offer not defined, an offer nobody takes', () => {
    const parts = {
      '10-a.js': '// A.\n//\n// Offers the other parts: shared, ghost, unused.\nfunction shared() {}\nfunction own() {}\nfunction unused() {}\n',
      '20-b.js': '// B.\nfunction b() { shared(); own(); }\n',
    };
    assert.deepEqual(breaches(parts), {
      unoffered: ["20-b.js takes 10-a.js's own"],
      stale: ['10-a.js offers ghost, which it does not define', '10-a.js offers unused, which no other part takes'],
    });
  });
});
