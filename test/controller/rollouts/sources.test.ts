import { test } from 'node:test';
import assert from 'node:assert/strict';
import { externalSecretSource, vaultDynamicSecretSource } from '../../../controller/rollouts/sources.ts';
import { EXTERNAL_SECRETS, VAULT_DYNAMIC_SECRETS } from '../../../schemas/resources.ts';

const obj = (kind: string, spec: Record<string, unknown>) => ({
  apiVersion: 'x/v1',
  kind,
  metadata: { name: 'app', namespace: 'team-a' },
  spec,
});

test('a VaultDynamicSecret names the admitted rolloutRestartTargets; malformed entries name nothing', () => {
  assert.equal(vaultDynamicSecretSource.resource, VAULT_DYNAMIC_SECRETS);
  const vds = obj('VaultDynamicSecret', {
    rolloutRestartTargets: [
      { kind: 'Deployment', name: 'web' },
      { kind: 'StatefulSet', name: 'db' },
      { kind: 'Pod', name: 'x' },
      { kind: 'Deployment', name: 'Not_A_Name' },
      { kind: 'DaemonSet' },
    ],
  });
  assert.deepEqual(
    vaultDynamicSecretSource.targets(vds).map((t) => `${t.kind}/${t.name}`),
    ['Deployment/web', 'StatefulSet/db'],
  );
  assert.deepEqual(vaultDynamicSecretSource.targets(obj('VaultDynamicSecret', {})), []);
});

test('the Secret a source writes: its target name, else its own name; none for an ExternalSecret that writes nothing', () => {
  assert.equal(externalSecretSource.resource, EXTERNAL_SECRETS);
  assert.equal(vaultDynamicSecretSource.secretName(obj('VaultDynamicSecret', { target: { name: 'creds' } })), 'creds');
  assert.equal(vaultDynamicSecretSource.secretName(obj('VaultDynamicSecret', {})), 'app');
  assert.equal(externalSecretSource.secretName(obj('ExternalSecret', { target: { name: 'db' } })), 'db');
  assert.equal(externalSecretSource.secretName(obj('ExternalSecret', {})), 'app');
  assert.equal(
    externalSecretSource.secretName(obj('ExternalSecret', { target: { name: 'db', creationPolicy: 'None' } })),
    undefined,
  );
  assert.deepEqual(externalSecretSource.targets(obj('ExternalSecret', {})), [], 'no opt-in annotation: no targets');
});
