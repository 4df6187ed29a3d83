// The SecretStore planner, one row per decision, and Ready after the login (ESO's reasons).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  planSecretStore,
  recheckMs,
  validatedReady,
  type StoreObserved,
} from '../../../controller/reconcilers/secretstore-plan.ts';

void describe('planSecretStore: one row per decision', () => {
  const rows: Array<{ name: string; o: StoreObserved; want: Record<string, unknown> }> = [
    {
      name: "ignore: another controller's class (even when admission would refuse it)",
      o: { ours: false, denials: 'x', referentAuth: false },
      want: { decision: 'ignore' },
    },
    {
      name: "refuse: admission's rules refuse it",
      o: {
        ours: true,
        denials: 'spec.provider.vault.server: not allowed (rule eso.store.vault-server)',
        referentAuth: true,
      },
      want: {
        decision: 'refuse',
        ready: {
          status: 'False',
          reason: 'InvalidStoreConfiguration',
          message: 'spec.provider.vault.server: not allowed (rule eso.store.vault-server)',
        },
      },
    },
    {
      name: 'defer: referent auth, validated per ExternalSecret namespace',
      o: { ours: true, referentAuth: true },
      want: {
        decision: 'defer',
        ready: {
          status: 'True',
          reason: 'ValidationUnknown',
          message:
            "the store resolves its credentials in each ExternalSecret's namespace (referent authentication); they are validated when an ExternalSecret uses the store",
        },
      },
    },
    { name: 'validate: ours and admitted', o: { ours: true, referentAuth: false }, want: { decision: 'validate' } },
  ];
  for (const row of rows) {
    void test(row.name, () => {
      assert.deepEqual(planSecretStore(row.o), row.want);
    });
  }
});

void describe('validatedReady: Ready after the login', () => {
  void test('Valid; a missing provider Secret is ValidationFailed; another spec problem InvalidProviderConfig; a failed login ValidationFailed', () => {
    assert.deepEqual(validatedReady(), {
      status: 'True',
      reason: 'Valid',
      message: 'store validated: authenticated to Vault',
    });
    assert.equal(
      validatedReady({ reason: 'MissingProviderSecret', message: 'Secret team-a/token not found' }).reason,
      'ValidationFailed',
    );
    assert.deepEqual(validatedReady({ reason: 'InvalidSpec', message: 'spec.provider.vault.auth: none set' }), {
      status: 'False',
      reason: 'InvalidProviderConfig',
      message: 'spec.provider.vault.auth: none set',
    });
    assert.deepEqual(validatedReady({ message: 'permission denied' }), {
      status: 'False',
      reason: 'ValidationFailed',
      message: 'cannot authenticate to Vault: permission denied',
    });
  });
  void test("re-validated at the store's refreshInterval (seconds or a duration), else the default", () => {
    assert.deepEqual(
      [
        recheckMs({ refreshInterval: 60 } as never, 5),
        recheckMs({ refreshInterval: 0 } as never, 5),
        recheckMs({ refreshInterval: '2m' } as never, 5),
        recheckMs({} as never, 5),
      ],
      [60_000, 5, 120_000, 5],
    );
  });
});
