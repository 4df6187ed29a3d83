// rollout-checks.ts against a scripted cluster: the consumer checks pass on a clean history (two
// rotations, one restart each, each replaced credential revoked after its successor rolled out) and each
// fails on the bug it guards: a revocation before the rollout, a second restart for one rotation, the
// current credential revoked, a failed check in a pod, a missing PreviousLeaseRevoked Event.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEMPLATE_ANNOTATION } from '../../controller/rollouts/plan.ts';
import type { ControlPlane } from './control-plane.ts';
import type { ContainerLog } from './node/pod-logs.ts';
import { assertNoSecretIn, checkConsumer, RolloutWatch } from './rollout-checks.ts';

type Bug = 'none' | 'revoked-before-rollout' | 'two-restarts' | 'current-revoked' | 'failed-check' | 'no-event';

/** Samples a consumer through two rotations, with `bug` in its history; returns the watch and the pods' logs. */
async function history(bug: Bug): Promise<{ watch: RolloutWatch; logs: ContainerLog[] }> {
  const s = {
    current: 'c0',
    rss: ['app-rs0'],
    template: undefined as string | undefined,
    rolled: true,
    revoked: new Set<string>(),
    events: [] as object[],
  };
  const deployment = (): object => ({
    metadata: { generation: s.rss.length },
    spec: {
      replicas: 2,
      template: { metadata: { annotations: s.template ? { [TEMPLATE_ANNOTATION]: s.template } : {} } },
    },
    status: s.rolled
      ? { observedGeneration: s.rss.length, replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 }
      : { observedGeneration: s.rss.length, replicas: 4, updatedReplicas: 0, readyReplicas: 2, availableReplicas: 2 },
  });
  const items = (path: string): object[] => {
    if (path.includes('/replicasets'))
      return s.rss.map((name, i) => ({
        metadata: { name, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString() },
      }));
    if (path.includes('/pods'))
      return ['a', 'b'].map((p) => ({
        metadata: { name: `${s.rss.at(-1)}-${p}`, ownerReferences: [{ name: s.rss.at(-1) }] },
      }));
    return s.events;
  };
  const cp = {
    request: (_method: string, path: string) => {
      const body = path.includes('/deployments/') ? deployment() : { items: items(path) };
      return Promise.resolve({ status: 200, body, text: JSON.stringify(body) });
    },
  } as unknown as ControlPlane;
  const watch = new RolloutWatch(
    {
      cp,
      namespace: 'ns',
      app: 'app',
      replicas: 2,
      object: 'obj',
      current: () => Promise.resolve(s.current),
      revoked: (ids) => Promise.resolve(new Set(ids.filter((i) => s.revoked.has(i)))),
    },
    Date.now(),
  );
  const sample = async (): Promise<void> => {
    await sleep(3); // distinct sample times
    await watch.sample();
  };
  const revoke = (id: string): void => {
    s.revoked.add(id);
    if (bug !== 'no-event')
      s.events.push({
        involvedObject: { name: 'obj' },
        reason: 'PreviousLeaseRevoked',
        note: 'revoked (its rollout completed)',
      });
  };
  await sample();
  for (const i of [1, 2]) {
    s.current = `c${i}`; // rotation
    await sample();
    s.template = `v${i}`; // restart
    s.rss.push(`app-rs${i}`);
    s.rolled = false;
    await sample();
    if (bug === 'revoked-before-rollout' && i === 1) revoke('c0');
    if (bug === 'two-restarts' && i === 1) {
      s.template = 'v1-again';
      s.rss.push('app-rs1b');
      await sample();
    }
    if (bug === 'current-revoked' && i === 2) s.revoked.add('c2');
    await sample();
    s.rolled = true; // rollout complete
    await sample();
    if (!s.revoked.has(`c${i - 1}`)) revoke(`c${i - 1}`);
    await sample();
  }
  const line = (user: string, ok = true): string =>
    JSON.stringify({
      at: new Date().toISOString(),
      ok,
      user,
      ms: 1,
      ...(ok ? {} : { code: 'HTTP_401', error: 'Unauthorized' }),
    });
  // Each pod checks its ReplicaSet's credential 4 times (the extra ReplicaSet of 'two-restarts' the next one's).
  const logs: ContainerLog[] = s.rss.flatMap((rs, i) =>
    ['a', 'b'].map((p) => {
      const user = `c${Math.min(i, 2)}`;
      const broken = bug === 'failed-check' && i === 0 && p === 'a';
      return {
        namespace: 'ns',
        pod: `${rs}-${p}`,
        container: 'client',
        restart: 0,
        lines: [line(user), line(user), line(user, !broken), line(user)],
      };
    }),
  );
  return { watch, logs };
}

void describe('checkConsumer: what a user of rolloutRestartTargets would notice', () => {
  void test('a clean history passes: 2 rotations, 2 restarts, 2 revocations after their rollouts', async () => {
    const { watch, logs } = await history('none');
    assert.ok(watch.settled(2));
    const figures = await checkConsumer(watch, logs, { rotations: 2 });
    assert.deepEqual([figures.rotations, figures.restarts, figures['checks failed']], [2, 2, 0]);
  });

  const fails: Array<[Bug, RegExp]> = [
    ['revoked-before-rollout', /c0 revoked at .*after its replacement rolled out/],
    ['two-restarts', /pod-template values|ReplicaSets/],
    ['current-revoked', /the credential in the Secret was revoked/],
    ['failed-check', /failed checks in the pods/],
    ['no-event', /PreviousLeaseRevoked Events after a rollout/],
  ];
  for (const [bug, message] of fails)
    void test(`fails on: ${bug}`, async () => {
      const { watch, logs } = await history(bug);
      await assert.rejects(checkConsumer(watch, logs, { rotations: 2 }), message);
    });
});

void describe('assertNoSecretIn', () => {
  const key = `-----BEGIN PRIVATE KEY-----\n${'A'.repeat(64)}\n${'B'.repeat(20)}\n-----END PRIVATE KEY-----\n`;
  const token = `eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.${'s'.repeat(40)}`;
  test('passes on texts without them; fails on the value, its base64, a PEM body line, a JWT signature', () => {
    assertNoSecretIn({ log: 'nothing here' }, [key, token], 'a secret');
    for (const text of [
      key,
      Buffer.from(key).toString('base64'),
      JSON.stringify({ msg: 'A'.repeat(64) }),
      `sig=${'s'.repeat(40)}`,
    ])
      assert.throws(() => assertNoSecretIn({ log: text }, [key, token], 'a secret'), /a secret is in the log/);
    assert.throws(() => assertNoSecretIn({ log: '' }, [], 'a secret'), /nothing to look for \(a secret\)/);
  });
});
