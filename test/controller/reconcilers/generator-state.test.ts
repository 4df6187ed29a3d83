// The state Secret of a VaultDynamicSecret generator's credential: what is written is what is read back,
// and only this ExternalSecret's state Secrets count as its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isStateOf,
  keptLeasesOf,
  providerOf,
  stateDataOf,
  stateIndexOf,
  stateSecret,
  stateSecretName,
} from '../../../controller/reconcilers/generator-state.ts';
import type { KeptLeases } from '../../../controller/reconcilers/externalsecret-plan.ts';

const es = {
  apiVersion: 'external-secrets.io/v1',
  kind: 'ExternalSecret',
  metadata: { name: 'db', namespace: 'team-a', uid: 'u1' },
};
const lease = {
  id: 'db/creds/app/L1',
  durationSeconds: 60,
  renewable: true,
  issuedAt: 1,
  expiresAt: 60_001,
  source: 's',
};
const provider = { server: 'https://vault:8200', auth: { tokenSecretRef: { name: 't', key: 'token' } } };

test('a state Secret written is read back: credential, leases, provider; owned by the ExternalSecret', () => {
  const kept: KeptLeases = { lease, previous: [{ id: 'db/creds/app/L0', replacedAt: 0, expiresAt: 30_000 }] };
  const s = stateSecret(es, stateSecretName(es, 2), new Map([['password', Buffer.from('pw')]]), kept, provider);
  assert.equal(s.metadata.name, 'esgen-u1-2');
  assert.equal(s.data?.password, Buffer.from('pw').toString('base64'));
  assert.equal(s.metadata.ownerReferences?.[0]?.uid, 'u1');
  assert.deepEqual(stateDataOf(s), new Map([['password', Buffer.from('pw')]]));
  assert.deepEqual(keptLeasesOf(s), kept);
  assert.deepEqual(providerOf(s), provider);
  assert.ok(isStateOf(s, 'u1'));
  assert.equal(isStateOf(s, 'u2'), false, "another ExternalSecret's");
  assert.ok(!JSON.stringify(s.metadata).includes(Buffer.from('pw').toString('base64')), 'no value in metadata');
});

test('unreadable or missing annotations: no leases, no provider (never a throw)', () => {
  const broken = {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'x',
      annotations: {
        'vaultgate.io/generator-lease': '{not json',
        'vaultgate.io/generator-provider': '[1]',
      },
    },
  };
  assert.deepEqual(keptLeasesOf(broken), { previous: [] });
  assert.equal(providerOf(broken), undefined);
  assert.deepEqual(keptLeasesOf(undefined), { previous: [] });
  assert.equal(isStateOf(undefined, 'u1'), false);
});

test("the index is read back from this ExternalSecret's state Secret names only", () => {
  assert.equal(stateIndexOf(es, 'esgen-u1-0'), 0);
  assert.equal(stateIndexOf(es, 'esgen-u1-12'), 12);
  assert.equal(stateIndexOf(es, 'esgen-u10-1'), undefined, "another uid's");
  assert.equal(stateIndexOf(es, 'esgen-u1-'), undefined);
  assert.equal(stateIndexOf(es, 'esgen-u1-1a'), undefined);
});
