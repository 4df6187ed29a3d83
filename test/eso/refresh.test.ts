import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { shouldRefresh, jitteredIntervalMs, syncedResourceVersion, nextRefreshInMs } from '../../eso/refresh.ts';

void describe('refresh scheduling', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  const base = { uid: 'u-1', generation: 2, refreshInterval: '1h' };
  const rv = syncedResourceVersion(2);
  void test('never synced → refresh; fresh sync → not; after the jittered interval → refresh', () => {
    assert.equal(shouldRefresh(base, now), true);
    const synced = { ...base, syncedResourceVersion: rv, refreshTime: new Date(now - 60_000).toISOString() };
    assert.equal(shouldRefresh(synced, now), false);
    const interval = jitteredIntervalMs(base);
    assert.equal(shouldRefresh(synced, now - 60_000 + interval + 1), true);
    assert.equal(nextRefreshInMs(synced, now), interval - 60_000);
  });
  void test('spec or annotation change (force-sync) → refresh, whatever the policy', () => {
    const synced = { ...base, syncedResourceVersion: rv, refreshTime: new Date(now).toISOString() };
    assert.equal(shouldRefresh({ ...synced, generation: 3 }, now), true);
    assert.equal(shouldRefresh({ ...synced, annotations: { 'external-secrets.io/force-sync': '1' } }, now), true);
    assert.equal(
      shouldRefresh(
        { ...synced, refreshPolicy: 'OnChange', annotations: { 'external-secrets.io/force-sync': '1' } },
        now,
      ),
      true,
    );
    assert.equal(shouldRefresh({ ...synced, refreshPolicy: 'CreatedOnce', generation: 3 }, now), false);
    assert.equal(shouldRefresh({ ...synced, refreshPolicy: 'OnChange' }, now + 10 * 3_600_000), false);
    assert.equal(shouldRefresh({ ...synced, refreshInterval: '0s' }, now + 10 * 3_600_000), false);
  });
  void test('jitter stays within ±10% and spreads 1,000 objects over the window', () => {
    const seconds = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      const ms = jitteredIntervalMs({ uid: `uid-${i}`, refreshInterval: '1h' });
      assert.ok(ms >= 3_240_000 && ms <= 3_960_000);
      seconds.add(Math.floor(ms / 1000));
    }
    assert.ok(seconds.size > 500, `only ${seconds.size} distinct seconds`);
    assert.equal(
      jitteredIntervalMs({ uid: 'same', refreshInterval: '1h' }),
      jitteredIntervalMs({ uid: 'same', refreshInterval: '1h' }),
    );
  });
});
