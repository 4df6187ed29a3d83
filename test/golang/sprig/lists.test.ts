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

// Sprig says "Cannot find first on type string"; golang/sprig/functions.ts passes names that already end
// in "on type" to mustList, which adds it again ("… on type on type string"), for every must* list function.
test(
  'a list function given a non-list names the type once, as Sprig does',
  { todo: 'functions.ts doubles "on type"' },
  () => {
    assert.throws(() => sprig('{{ mustFirst "abc" }}'), {
      message: 'line 1: error calling mustFirst: Cannot find first on type string',
    });
    assert.throws(() => sprig('{{ mustPush "abc" 1 }}'), {
      message: 'line 1: error calling mustPush: Cannot push on type string',
    });
  },
);
