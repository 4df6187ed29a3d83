// Sprig's dict functions: dig through nested maps, merge (first wins) and mergeOverwrite (last wins).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sprig } from './sprig.ts';

test('dig returns the nested value or the default', () => {
  assert.equal(sprig('{{ dig "a" "b" "def" (dict "a" (dict "b" "v")) }}'), 'v');
  assert.equal(sprig('{{ dig "a" "x" "def" (dict "a" (dict "b" "v")) }}'), 'def');
});

test('merge keeps the destination, mergeOverwrite replaces it, both deep', () => {
  assert.equal(sprig('{{ merge (dict "a" 1) (dict "a" 2 "b" 3) }}'), 'map[a:1 b:3]');
  assert.equal(sprig('{{ mergeOverwrite (dict "a" 1) (dict "a" 2 "b" 3) }}'), 'map[a:2 b:3]');
  assert.equal(
    sprig('{{ merge (dict "n" (dict "x" 1)) (dict "n" (dict "y" 2)) }}'),
    'map[n:map[x:1 y:2]]',
    'nested maps merge',
  );
  assert.equal(sprig('{{ $d := dict "k" "v" }}{{ $_ := unset $d "k" }}{{ hasKey $d "k" }}'), 'false');
});
