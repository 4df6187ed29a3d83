import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from '../../schemas/ttl.ts';

void test('Go durations', () => {
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('90s'), 90_000);
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration('5'), undefined);
  assert.equal(parseDuration('1d'), undefined);
});
