// Sprig's regex functions over Go's RE2 syntax: the plain forms panic on a bad pattern (an exec error),
// except regexMatch which ESO's Sprig answers false; the must* forms return the error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sprig } from './sprig.ts';

test('find, find all, split and replace', () => {
  assert.equal(sprig('{{ regexFind "[a-zA-Z][1-9]" "abcd1234" }}'), 'd1');
  assert.equal(sprig('{{ regexFindAll "[2,4,6,8]" "123456789" -1 }}'), '[2 4 6 8]');
  assert.equal(sprig('{{ regexFindAll "[2,4,6,8]" "123456789" 2 }}'), '[2 4]');
  assert.equal(sprig('{{ regexSplit "z+" "pizza" -1 }}'), '[pi a]');
  assert.equal(sprig('{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}'), '-W-xxW-');
  assert.equal(sprig('{{ regexReplaceAllLiteral "a(x*)b" "-ab-" "${1}" }}'), '-${1}-');
});

test('a bad pattern: regexMatch is false, mustRegexMatch is an error naming the function', () => {
  assert.equal(sprig('{{ regexMatch "(" "x" }}'), 'false');
  assert.throws(() => sprig('{{ mustRegexMatch "(" "x" }}'), /error calling mustRegexMatch/);
});
