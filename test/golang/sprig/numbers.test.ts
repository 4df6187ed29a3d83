// Sprig's number functions: seq, until/untilStep, round, integer and float arithmetic (results as Go's).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seq, untilStep } from '../../../golang/sprig/numbers.ts';
import { sprig } from './sprig.ts';

test('seq counts up or down like the shell; untilStep stops before the end', () => {
  assert.equal(seq(5, 1), '5 4 3 2 1');
  assert.equal(seq(1, 2, 7), '1 3 5 7');
  assert.deepEqual(untilStep(0, 10, 3), [0, 3, 6, 9]);
  assert.deepEqual(untilStep(0, 10, -1), [], 'a step away from the end gives nothing');
});

test('round, integer division by zero, float arithmetic', () => {
  assert.equal(sprig('{{ round 123.555555 3 }}'), '123.556');
  assert.throws(() => sprig('{{ div 1 0 }}'), /error calling div: runtime error: integer divide by zero/);
  assert.equal(sprig('{{ add 1 2 3 }} {{ sub 1 5 }} {{ mul 2 3 }} {{ mod 7 3 }}'), '6 -4 6 1');
  assert.equal(sprig('{{ addf 1.5 2 }} {{ divf 1 4 }}'), '3.5 0.25');
  assert.equal(sprig('{{ max 1 9 3 }} {{ min 4 2 }}'), '9 2');
});
