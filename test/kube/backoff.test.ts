// Reconnect backoff as client-go's reflector: 800 ms doubling to 30 s, jitter up to +100 %, reset on success.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff } from '../../kube/backoff.ts';

test('without jitter: 800 ms, doubling, capped at 30 s; reset starts over', () => {
  const b = new Backoff({ random: () => 0 });
  const delays = Array.from({ length: 8 }, () => b.next());
  assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  assert.equal(b.attempts, 8);
  b.reset();
  assert.equal(b.next(), 800);
});

test('jitter adds up to the delay again, never past the cap', () => {
  const b = new Backoff({ random: () => 0.999 });
  assert.equal(b.next(), 1599);
  for (let i = 0; i < 10; i++) assert.ok(b.next() <= 30_000);
});
