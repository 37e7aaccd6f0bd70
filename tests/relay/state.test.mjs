// The relay's state has owners: every field of `state` (00-state.js) is written only by the part
// its comment names, and no part keeps state of its own in a top-level variable. Read from the
// parts' sources with acorn, so a new global or a write from the wrong part fails here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'acorn';
import { nodes } from './load.mjs';

const RELAY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'proxy-page', 'relay');
const PARTS = readdirSync(RELAY).filter((f) => f.endsWith('.js')).sort();
const source = (part) => readFileSync(join(RELAY, part), 'utf8');
const program = (part) => parse(source(part), { ecmaVersion: 2020, sourceType: 'script' });

/** Each field of `state` → the part its comment says writes it. */
function owners() {
  const text = source('00-state.js');
  const object = text.slice(text.indexOf('var state = {'), text.indexOf('};', text.indexOf('var state = {')));
  const found = {};
  for (const line of object.split('\n')) {
    const field = /^\s*(\w+):.*\/\/ (\d\d-[\w-]+\.js):/.exec(line);
    if (field) found[field[1]] = field[2];
  }
  return found;
}

/** The `state` field an expression reaches into (`state.held`, `state.hinted[x]`), if any. */
function stateField(target) {
  let node = target;
  while (node.type === 'MemberExpression') {
    if (node.object.type === 'Identifier' && node.object.name === 'state' && !node.computed) return node.property.name;
    node = node.object;
  }
  return null;
}

// The methods that change an Array, a Set or a Map in place.
const MUTATORS = ['push', 'pop', 'shift', 'unshift', 'splice', 'sort', 'reverse', 'fill', 'add', 'set', 'delete', 'clear'];

/** Where each part writes a field of `state`: [part, field, line]. */
function writes() {
  const found = [];
  for (const part of PARTS) {
    const text = source(part);
    for (const node of nodes(program(part))) {
      let target = null;
      if (node.type === 'AssignmentExpression') target = node.left;
      if (node.type === 'UpdateExpression') target = node.argument;
      if (node.type === 'UnaryExpression' && node.operator === 'delete') target = node.argument;
      if (node.type === 'CallExpression' && node.callee.type === 'MemberExpression' &&
        !node.callee.computed && MUTATORS.includes(node.callee.property.name)) target = node.callee.object;
      const field = target && stateField(target);
      if (field) found.push([part, field, text.slice(0, node.start).split('\n').length]);
    }
  }
  return found;
}

describe("the relay's state", () => {
  it('names an owner for each field, and only parts that exist', () => {
    const named = owners();
    assert.ok(Object.keys(named).length >= 10, JSON.stringify(named));
    for (const [field, part] of Object.entries(named)) assert.ok(PARTS.includes(part), `${field}: ${part}`);
  });

  it('is written only by each field\'s owner', () => {
    const named = owners();
    const foreign = writes().filter(([part, field]) => named[field] !== part);
    assert.deepEqual(foreign.map(([part, field, line]) => `${part}:${line} writes state.${field} (owner: ${named[field]})`), []);
  });

  it('is all the relay keeps: no part reassigns a top-level variable', () => {
    const globals = new Set();
    for (const part of PARTS) {
      for (const statement of program(part).body) {
        if (statement.type !== 'VariableDeclaration') continue;
        for (const declaration of statement.declarations) globals.add(declaration.id.name);
      }
    }
    assert.ok(globals.has('state') && globals.has('config'));
    const reassigned = [];
    for (const part of PARTS) {
      for (const node of nodes(program(part))) {
        const target = node.type === 'AssignmentExpression' ? node.left : node.type === 'UpdateExpression' ? node.argument : null;
        if (target && target.type === 'Identifier' && globals.has(target.name)) reassigned.push(`${part}: ${target.name}`);
      }
    }
    assert.deepEqual(reassigned, []);
  });

  it('the check can fail: a write from another part is found', () => {
    const hostile = parse('function f() { state.held.push(1); state.view = null; state.hinted.x = true; state.warned.add(1); }', { ecmaVersion: 2020 });
    const fields = [...nodes(hostile)].flatMap((node) => {
      if (node.type === 'AssignmentExpression') return [stateField(node.left)];
      if (node.type === 'CallExpression' && node.callee.type === 'MemberExpression' &&
        MUTATORS.includes(node.callee.property.name)) return [stateField(node.callee.object)];
      return [];
    });
    assert.deepEqual(fields, ['held', 'view', 'hinted', 'warned']);
  });
});
