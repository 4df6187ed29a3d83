// What an informer keeps of an object (kube/cache-transform.ts): never managedFields or kubectl's
// last-applied copy, on the initial LIST and on every watch event; and a Secret cache made with
// secretDigests holds no value in any form, yet still tells a stored value from another and carries the
// data hash of what is stored.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LAST_APPLIED_ANNOTATION,
  secretDigests,
  storedSecretData,
  type CachedSecret,
} from '../../kube/cache-transform.ts';
import { Informer, type InformerOptions } from '../../kube/informer.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { CONFIGMAPS, SECRETS } from '../../kube/resources.ts';
import { dataHash } from '../../eso/target.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

const FAST: Partial<InformerOptions> = { backoff: { initialMs: 10, maxMs: 50, jitter: 0 }, minWatchMs: 0, resyncMs: 0 };
const b64 = (s: string): string => Buffer.from(s).toString('base64');

async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`never reached: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every key and string value in `v`, at any depth. */
function* walk(v: unknown): Generator<{ key?: string; value?: string }> {
  if (typeof v === 'string') yield { value: v };
  else if (Array.isArray(v)) for (const e of v) yield* walk(e);
  else if (v && typeof v === 'object') {
    for (const [k, e] of Object.entries(v)) {
      yield { key: k };
      yield* walk(e);
    }
  }
}

/** The forms of `value` a cache could hold it in. */
const forms = (value: string): string[] => [
  value,
  b64(value),
  Buffer.from(value).toString('hex'),
  Buffer.from(value).toString('base64url'),
];

function holds(objects: readonly KubeObject[], value: string): boolean {
  return objects.some((o) =>
    [...walk(o)].some((x) => x.value !== undefined && forms(value).some((f) => x.value!.includes(f))),
  );
}

void describe('cache transform', () => {
  let kube: FakeKubeClient;
  const canary = 'canary-Zq8v1sKx7mWp';
  const later = 'canary-later-Hn3rT0bY';
  before(async () => {
    kube = new FakeKubeClient({ namespaces: ['team-a'] });
    await kube.create(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'team-a', labels: { app: 'x' } },
      type: 'Opaque',
      data: { password: b64(canary), user: b64('u') },
    });
    await kube.apply(CONFIGMAPS, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cm',
        namespace: 'team-a',
        annotations: { [LAST_APPLIED_ANNOTATION]: '{"kind":"ConfigMap"}', keep: 'me' },
      },
      data: { k: 'v' },
    });
  });
  after(() => undefined);

  void test('no managedFields or last-applied annotation in the cache: initial LIST and watch events', async () => {
    const seen: KubeObject[] = [];
    const inf = new Informer(kube, { resource: CONFIGMAPS, ...FAST });
    inf.addHandler((ev) => seen.push(ev.obj));
    inf.start();
    try {
      await inf.waitForSync();
      assert.ok(
        (await kube.get(CONFIGMAPS, 'cm', 'team-a'))?.metadata.managedFields?.length,
        'the apiserver object has managedFields (else this test proves nothing)',
      );
      await kube.apply(CONFIGMAPS, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'cm',
          namespace: 'team-a',
          annotations: { [LAST_APPLIED_ANNOTATION]: '{"kind":"ConfigMap","v":2}', keep: 'me' },
        },
        data: { k: 'v2' },
      });
      await until(
        () => (inf.cache.get('team-a/cm') as { data?: Record<string, string> } | undefined)?.data?.k === 'v2',
        'the watch event',
      );
      for (const obj of [...inf.cache.list(), ...seen]) {
        assert.ok(![...walk(obj)].some((x) => x.key === 'managedFields'), `no managedFields in ${JSON.stringify(obj)}`);
        assert.equal(obj.metadata.annotations?.[LAST_APPLIED_ANNOTATION], undefined);
        assert.equal(obj.metadata.annotations?.keep, 'me', 'other annotations are kept');
      }
    } finally {
      await inf.stop();
    }
  });

  void test('a Secret cache made with secretDigests holds no value in any form, on LIST and on watch events', async () => {
    const seen: KubeObject[] = [];
    const inf = new Informer<CachedSecret>(kube, { resource: SECRETS, ...FAST, transform: secretDigests(dataHash) });
    inf.addHandler((ev) => seen.push(ev.obj));
    inf.start();
    try {
      await inf.waitForSync();
      const listed = inf.cache.get('team-a/s')!;
      assert.equal(holds([listed], canary), false, 'the listed Secret holds no canary');
      const stored = storedSecretData(listed);
      assert.deepEqual(stored.keys().sort(), ['password', 'user']);
      assert.equal(stored.holds('password', b64(canary)), true, 'the digest matches the stored value');
      assert.equal(stored.holds('password', b64(`${canary}x`)), false, 'and no other');
      assert.equal(stored.holds('missing', b64(canary)), false);
      assert.equal(
        stored.hash(dataHash),
        dataHash({ password: b64(canary), user: b64('u') }),
        'the data hash of what is stored',
      );
      assert.equal(stored.values, undefined, 'no values to hand out');

      await kube.patch(SECRETS, 's', 'team-a', { data: { password: b64(later) } }, 'merge');
      await until(() => storedSecretData(inf.cache.get('team-a/s')!).holds('password', b64(later)), 'the watch event');
      assert.equal(
        holds([...inf.cache.list(), ...seen], canary),
        false,
        'no form of the first value anywhere a handler or the cache saw',
      );
      assert.equal(holds([...inf.cache.list(), ...seen], later), false, 'nor of the second');
    } finally {
      await inf.stop();
    }
  });

  void test('a Secret read with a GET is read through the same interface', () => {
    const got = storedSecretData({ metadata: { name: 's' }, data: { a: b64('1') } });
    assert.deepEqual(got.keys(), ['a']);
    assert.equal(got.holds('a', b64('1')), true);
    assert.equal(got.holds('a', b64('2')), false);
    assert.deepEqual(got.values, { a: b64('1') });
    assert.equal(got.hash(dataHash), dataHash({ a: b64('1') }));
  });
});
