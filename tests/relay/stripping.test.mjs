// The relay as pages carry it is its sources stripped (src/minify.rs): comments, indentation,
// the spaces beside punctuation and the line breaks after ; { , ( [ gone, nothing else. Held
// here with acorn's tokenizer: the served body's tokens are the shared vocabulary's and then
// every part's, each with the same value and the same line break before it or none wherever a
// break can count (so automatic semicolons fall alike), and nothing the stripping made can
// begin a comment inside the page's <script>.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tokenizer } from 'acorn';
import { relayBody } from './load.mjs';

const RELAY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'proxy-page', 'relay');

// After these a line break changes nothing (no semicolon is inserted, no rule reads it): the
// stripping may drop one there, and nowhere else.
const CONTINUES = new Set([';', '{', ',', '(', '[']);

/** `source`'s tokens as [kind, value, whether a line break that counts comes before it]. */
function tokens(source) {
  const read = [];
  let line = 0;
  let previous = null;
  for (const token of tokenizer(source, { ecmaVersion: 'latest', locations: true })) {
    const value = token.value instanceof RegExp || typeof token.value === 'object'
      ? JSON.stringify(token.value) : String(token.value ?? token.type.label);
    const counts = !CONTINUES.has(previous?.type.label);
    read.push([token.type.label, value, counts && token.loc.start.line !== line]);
    line = token.loc.end.line;
    previous = token;
  }
  return read;
}

describe('the stripped relay', () => {
  const served = tokens(relayBody());
  // The parts as build.rs joins them, one after another; the first token's break is the
  // vocabulary's to give.
  const parts = tokens(readdirSync(RELAY).filter((f) => f.endsWith('.js')).sort()
    .map((file) => readFileSync(join(RELAY, file), 'utf8')).join('\n'));
  parts[0][2] = served[served.length - parts.length]?.[2];

  it("ends with every part's tokens, as written, after the vocabulary's", () => {
    assert.ok(parts.length > 5000, `${parts.length} tokens in the parts`);
    const vocabulary = served.slice(0, served.length - parts.length);
    assert.deepEqual(served.slice(vocabulary.length), parts);
    assert.deepEqual(vocabulary.slice(0, 2).map(([, value]) => value), ['var', 'DOMAIN_LISTS']);
    assert.ok(vocabulary.every(([kind]) => kind !== 'function'), 'the vocabulary holds names only');
  });

  it('is smaller than its sources, and nothing in it begins an HTML comment or ends the script', () => {
    const body = relayBody();
    const sources = readdirSync(RELAY).filter((f) => f.endsWith('.js'))
      .reduce((bytes, file) => bytes + readFileSync(join(RELAY, file)).length, 0);
    assert.ok(body.length < sources / 2, `${body.length} bytes of ${sources}`);
    assert.doesNotMatch(body, /<!--|^\s*-->|<\/script|<script/im);
  });
});
