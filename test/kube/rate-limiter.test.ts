import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../kube/clock.ts';
import {
  BucketRateLimiter,
  ItemExponentialRateLimiter,
  defaultControllerRateLimiter,
} from '../../kube/rate-limiter.ts';

describe('rate limiters', () => {
  test('per-key backoff is capped at 1000 s', () => {
    const rl = new ItemExponentialRateLimiter(5, 1000_000);
    let last = 0;
    for (let i = 0; i < 40; i++) last = rl.when('k');
    assert.equal(last, 1000_000);
  });

  test('the overall token bucket allows a burst of 100 then 10 per second', async () => {
    const clock = new FakeClock();
    const bucket = new BucketRateLimiter(clock, 10, 100);
    const burst = Array.from({ length: 100 }, () => bucket.when());
    assert.ok(burst.every((d) => d === 0));
    assert.equal(bucket.when(), 100);
    assert.equal(bucket.when(), 200);
    await clock.advance(1000); // 10 tokens back, 2 of them already promised
    assert.equal(bucket.when(), 0);
    const combined = defaultControllerRateLimiter(new FakeClock());
    assert.equal(combined.when('a'), 5, 'the larger of per-key and bucket delays');
  });
});
