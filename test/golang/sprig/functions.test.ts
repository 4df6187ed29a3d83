// The Sprig function table as ESO builds it: ESO's fork minus env/expandenv, and (vaultgate's choice) no
// function whose output changes between renders of the same input (clock, randomness, DNS).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SPRIG_FUNCS, parseGoJson } from '../../../golang/sprig/functions.ts';
import { sprig } from './sprig.ts';

test('no function reads the environment, the clock, randomness or DNS', () => {
  for (const name of ['env', 'expandenv', 'now', 'randAlphaNum', 'uuidv4', 'genCA', 'getHostByName', 'ago'])
    assert.equal(name in SPRIG_FUNCS, false, name);
});

test('JSON in and out as ESO users write it', () => {
  assert.equal(sprig('{{ (fromJson "{\\"a\\": [1, 2]}").a }}'), '[1 2]');
  assert.equal(sprig('{{ dict "b" 1 "a" "<x>" | toJson }}'), '{"a":"\\u003cx\\u003e","b":1}');
  assert.equal(sprig('{{ dict "a" "<x>" | toRawJson }}'), '{"a":"<x>"}');
  assert.equal(
    sprig('{{ fromJson "not json" }}'),
    '<no value>',
    'fromJson swallows the error; mustFromJson returns it',
  );
  assert.throws(() => sprig('{{ mustFromJson "not json" }}'), /error calling mustFromJson/);
  assert.equal(typeof parseGoJson('{}'), 'object');
});

test('defaults, ternary, typeOf and hashes', () => {
  assert.equal(sprig('{{ default "d" "" }} {{ default "d" "x" }} {{ coalesce "" "b" }}'), 'd x b');
  assert.equal(sprig('{{ ternary "y" "n" true }} {{ typeOf 1.5 }} {{ kindIs "map" (dict) }}'), 'y float64 true');
  assert.equal(sprig('{{ sha1sum "a" }}'), '86f7e437faa5a7fce15d1ddcb9eaeaea377667b8');
  assert.equal(sprig('{{ quote "a" 1 }} {{ squote "b" }} {{ cat "a" "b" }}'), '"a" "1" \'b\' a b');
});
