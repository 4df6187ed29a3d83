import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { desiredRole, roleMatches, roleDifferences } from '../../policy/role.ts';

void describe('kubernetes-auth role desired state', () => {
  const spec = {
    serviceAccounts: ['app', 'app', 'worker'],
    policies: ['reader'],
    tokenTTL: '1h30m',
    audience: 'vault',
  };
  void test('derives the body from the spec with TTLs in seconds', () => {
    const r = desiredRole('team-a', spec, ['vaultgate.team-a.reader']);
    assert.equal(r.mount, 'kubernetes');
    assert.deepEqual(r.body, {
      bound_service_account_names: ['app', 'worker'],
      bound_service_account_namespaces: ['team-a'],
      token_policies: ['vaultgate.team-a.reader'],
      token_ttl: 5400,
      token_max_ttl: 86400,
      audience: 'vault',
    });
    assert.equal(desiredRole('team-a', { ...spec, authMount: '/auth/k8s-east/' }, []).mount, 'k8s-east');
  });

  void test('compares only the fields we set, as Vault returns them', () => {
    const r = desiredRole('team-a', spec, ['vaultgate.team-a.reader']);
    const fromVault = {
      bound_service_account_names: ['worker', 'app'],
      bound_service_account_namespaces: ['team-a'],
      token_policies: ['vaultgate.team-a.reader'],
      policies: ['vaultgate.team-a.reader'],
      token_ttl: 5400,
      token_max_ttl: 86400,
      audience: 'vault',
      alias_name_source: 'serviceaccount_uid',
      token_bound_cidrs: [],
    };
    assert.equal(roleMatches(r.body, fromVault), true);
    assert.equal(roleMatches(r.body, { ...fromVault, token_ttl: 60 }), false);
    assert.deepEqual(
      roleDifferences(r.body, { ...fromVault, token_ttl: 60, bound_service_account_namespaces: ['*'] }),
      ['bound_service_account_namespaces', 'token_ttl'],
    );
    const noAudience = desiredRole('team-a', { ...spec, audience: undefined }, ['vaultgate.team-a.reader']);
    assert.equal(roleMatches(noAudience.body, { ...fromVault, audience: '' }), true);
    assert.equal(roleMatches(noAudience.body, fromVault), false);
  });
});
