import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audienceFindings, authMountFindings, ttlOrderFindings } from '../../../webhook/rules/vaultrolebinding.ts';

test('vaultrolebinding.auth-mount: the path under auth/, without the prefix or edge slashes', () => {
  assert.deepEqual(authMountFindings(undefined), []);
  assert.deepEqual(authMountFindings('kubernetes'), []);
  assert.deepEqual(authMountFindings('clusters/prod-k8s'), []);
  assert.match(
    authMountFindings('auth/kubernetes')[0]?.message ?? '',
    /without the "auth\/" prefix \(e\.g\. "kubernetes"\)/,
  );
  assert.match(authMountFindings('kubernetes/')[0]?.message ?? '', /must not start or end with "\/"/);
  assert.match(authMountFindings('kube rnetes')[0]?.message ?? '', /is not a mount path/);
  assert.equal(authMountFindings('a b')[0]?.rule, 'vaultrolebinding.auth-mount');
});

test('vaultrolebinding.ttl-order: tokenTTL longer than tokenMaxTTL is refused (Vault would refuse the role)', () => {
  assert.deepEqual(ttlOrderFindings('1h', '24h'), []);
  assert.deepEqual(ttlOrderFindings('1h', '1h'), []);
  assert.deepEqual(ttlOrderFindings('48h', '0'), [], 'a max of 0 is no max');
  const [f] = ttlOrderFindings('2h', '90m');
  assert.equal(f?.field, 'spec.tokenTTL');
  assert.equal(f?.message, 'tokenTTL "2h" is longer than tokenMaxTTL "90m"');
});

test('vaultrolebinding.no-audience: a role without an audience is a warning, not a denial', () => {
  assert.deepEqual(audienceFindings('vault'), []);
  const [f] = audienceFindings(undefined);
  assert.equal(f?.severity, 'warn');
  assert.equal(f?.field, 'spec.audience');
});
