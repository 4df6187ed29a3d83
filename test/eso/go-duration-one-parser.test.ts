// Issue #21.8(b): ESO's refreshInterval is a Go duration. The webhook admitted ".5h", "+1h" and "1h.5m" (as
// ESO does) but the controller read it with vaultgate's TTL grammar and set Ready=False ("is not a
// duration"). One parser (golang/duration.ts, Go's time.ParseDuration step for step, in int64
// nanoseconds) now serves admission, the controller and the templates' duration functions.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGoDuration, parseGoDurationNs } from '../../golang/duration.ts';
import { refreshIntervalMs } from '../../eso/refresh.ts';
import { validateExternalSecret } from '../../webhook/rules/eso/externalsecret-rules.ts';
import { renderTemplate } from '../../eso/template.ts';
import {
  startVault,
  stopVault,
  world,
  externalSecret,
  secretData,
  EXTERNAL_SECRETS,
  type Vault,
} from '../controller/reconcilers/eso-world.ts';
import { readyOf } from '../controller/reconcilers/harness.ts';

const GO_FORMS: Array<[string, number]> = [
  ['.5h', 1_800_000],
  ['+1h', 3_600_000],
  ['1h.5m', 3_630_000],
  ['1.5h', 5_400_000],
  ['1µs', 0.001],
  ['0', 0],
];

test('what admission accepts, the controller reads, with the same value', () => {
  for (const [text, ms] of GO_FORMS) {
    assert.deepEqual(
      validateExternalSecret({
        spec: {
          secretStoreRef: { name: 's' },
          refreshInterval: text,
          data: [{ secretKey: 'a', remoteRef: { key: 'k' } }],
        },
      }),
      [],
      text,
    );
    assert.equal(refreshIntervalMs(text), ms, text);
  }
  assert.throws(() => refreshIntervalMs('1d'), /time: unknown unit "d" in duration "1d"/);
  assert.throws(() => refreshIntervalMs('-1h'), /must not be negative/);
});

test("Go's arithmetic exactly: int64 nanoseconds, its overflow limits and its error quoting", () => {
  const ns = (t: string): bigint | string => {
    const r = parseGoDurationNs(t);
    return r.ok ? r.ns : r.error;
  };
  assert.equal(ns('1.000000001s'), 1_000_000_001n);
  assert.equal(ns('9223372036854775807ns'), 9_223_372_036_854_775_807n);
  assert.equal(ns('9223372036854775808ns'), 'time: invalid duration "9223372036854775808ns"');
  assert.equal(ns('-9223372036854775808ns'), -9_223_372_036_854_775_808n);
  assert.equal(ns('2562047h47m16.854775807s'), 9_223_372_036_854_775_807n);
  assert.equal(ns('2562048h'), 'time: invalid duration "2562048h"');
  assert.equal(ns('1é'), 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"');
  assert.equal(ns('.'), 'time: invalid duration "."');
  assert.equal(ns('1.h'), 3_600_000_000_000n);
  assert.deepEqual(parseGoDuration('-0'), { ok: true, ms: 0 });
});

test("the templates' duration functions read durations with the same parser", () => {
  const out = renderTemplate('{{ durationRound "1h.5m" }} {{ durationRound "+49h" }}', {});
  assert.equal(out, '1h 2d');
});

let v: Vault;
before(async () => {
  v = await startVault();
  await v.kv.write('team-a/app/db', { password: 'pw' });
});
after(() => stopVault(v));

test('an ExternalSecret with refreshInterval ".5h" syncs (it used to be Ready=False "is not a duration")', async () => {
  const w = await world(v);
  for (const [i, text] of ['.5h', '+1h', '1h.5m'].entries()) {
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret(`go-${i}`, {
        refreshInterval: text,
        target: { name: `go-${i}` },
        data: [{ secretKey: 'password', remoteRef: { key: 'team-a/app/db', property: 'password' } }],
      }),
    );
    await w.kube.reconcile(w.es, `team-a/go-${i}`);
    const ready = readyOf(w.kube.getObj(EXTERNAL_SECRETS, `team-a/go-${i}`));
    assert.equal(ready?.status, 'True', `${text}: ${JSON.stringify(ready)}`);
    assert.deepEqual(secretData(w, `team-a/go-${i}`), { password: 'pw' });
  }
});
