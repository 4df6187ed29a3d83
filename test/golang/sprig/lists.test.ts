// Sprig's list functions: chunk, slice, first/rest/last, uniq, without, has, and their refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sprig } from './sprig.ts';

test('list operations give what Sprig gives', () => {
  assert.equal(sprig('{{ chunk 2 (list 1 2 3) }}'), '[[1 2] [3]]');
  assert.equal(sprig('{{ slice (list 1 2 3 4) 1 3 }}'), '[2 3]');
  assert.equal(sprig('{{ first (list 1 2) }} {{ rest (list 1 2) }} {{ last (list 1 2) }}'), '1 [2] 2');
  assert.equal(
    sprig('{{ uniq (list 1 1 2) }} {{ without (list 1 2 3) 2 }} {{ has 3 (list 1 2) }}'),
    '[1 2] [1 3] false',
  );
  assert.equal(sprig('{{ first (list) }}'), '<no value>');
});

test('an index past the end is an error naming the function', () => {
  assert.throws(() => sprig('{{ slice (list 1 2) 3 }}'), /error calling slice/);
});

// Sprig's list.go: "Cannot find first on type string", "Cannot chunk type string" (the type named once).
test('a list function given a non-list names the type once, as Sprig does', () => {
  {
    assert.throws(() => sprig('{{ mustFirst "abc" }}'), {
      message: 'line 1: error calling mustFirst: Cannot find first on type string',
    });
    assert.throws(() => sprig('{{ mustPush "abc" 1 }}'), {
      message: 'line 1: error calling mustPush: Cannot push on type string',
    });
    assert.throws(() => sprig('{{ chunk 2 "abc" }}'), {
      message: 'line 1: error calling chunk: Cannot chunk type string',
    });
  }
});
