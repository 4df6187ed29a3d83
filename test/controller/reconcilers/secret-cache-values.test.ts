// The controller keeps no Secret value in its caches (issue #24 item 3): the Secret informer stores a keyed
// digest per value (kube/cache-transform.ts, wired in controller/main.ts), and no cached object carries
// managedFields. The whole controller on the simulators, every cache walked for any form of the values
// Vault handed out; a hand edit is still noticed and repaired from the digests alone.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../kube/objects.ts';
import { CONFIGMAPS, NAMESPACES, SECRETS, type ResourceRef } from '../../../kube/resources.ts';
import { CLUSTER_SECRET_STORES, EXTERNAL_SECRETS, SECRET_STORES } from '../../../schemas/resources.ts';
import { nsName, passwordOf, startEsoSim, until } from '../../support/eso-sim.ts';

function* strings(v: unknown, key?: string): Generator<{ key?: string; value?: string }> {
  if (key !== undefined) yield { key };
  if (typeof v === 'string') yield { value: v };
  else if (Array.isArray(v)) for (const e of v) yield* strings(e);
  else if (v && typeof v === 'object') for (const [k, e] of Object.entries(v)) yield* strings(e, k);
}

const forms = (value: string): string[] => [
  value,
  Buffer.from(value).toString('base64'),
  Buffer.from(value).toString('hex'),
];

describe('the controller caches no Secret value', () => {
  test('after the sync and after a hand edit is repaired: no value in any form, no managedFields, in any cache', async () => {
    const sim = await startEsoSim({ namespaces: 2, perNamespace: 3, paths: 2 });
    try {
      const values = [0, 1].flatMap((n) => [0, 1].map((p) => passwordOf(nsName(n), p)));
      assert.equal(
        sim.secretPassword(`${nsName(1)}/es-1`),
        passwordOf(nsName(1), 1),
        'the Secrets hold the values (else this test proves nothing)',
      );
      // A hand edit: the controller must still see the data no longer matches its hash, and repair it.
      const key = `${nsName(0)}/es-0`;
      await sim.admin.patch(
        SECRETS,
        'es-0',
        nsName(0),
        { data: { password: Buffer.from('edited-by-hand').toString('base64') } },
        'merge',
      );
      await until(
        () => sim.secretPassword(key) === passwordOf(nsName(0), 0) && sim.idle(),
        'the hand edit repaired',
        30_000,
        20,
      );

      const refs: ResourceRef[] = [
        SECRETS,
        CONFIGMAPS,
        NAMESPACES,
        EXTERNAL_SECRETS,
        SECRET_STORES,
        CLUSTER_SECRET_STORES,
      ];
      const cached: KubeObject[] = refs.flatMap((r) => sim.app.manager.cache(r).list());
      assert.ok(sim.app.manager.cache(SECRETS).size >= 6, 'the target Secrets are cached');
      for (const obj of cached) {
        const found = [...strings(obj)];
        assert.ok(
          !found.some((x) => x.key === 'managedFields'),
          `no managedFields: ${obj.kind ?? ''} ${obj.metadata.name}`,
        );
        for (const v of [...values, 'edited-by-hand']) {
          assert.ok(
            !found.some((x) => x.value !== undefined && forms(v).some((f) => x.value!.includes(f))),
            `no form of a value in ${obj.kind ?? ''} ${obj.metadata.namespace ?? ''}/${obj.metadata.name}`,
          );
        }
      }
    } finally {
      await sim.stop();
    }
  });
});
