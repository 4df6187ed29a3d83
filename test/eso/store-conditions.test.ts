import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { storeAllowsNamespace } from '../../eso/store-conditions.ts';

void describe('ClusterSecretStore conditions', () => {
  void test('no conditions → everyone; any matching condition → allowed', () => {
    assert.equal(storeAllowsNamespace(undefined, 'x', {}), true);
    const conds = [
      { namespaces: ['team-a'] },
      { namespaceRegexes: ['^prod-'] },
      { namespaceSelector: { matchLabels: { tier: 'gold' } } },
    ];
    assert.equal(storeAllowsNamespace(conds, 'team-a', {}), true);
    assert.equal(storeAllowsNamespace(conds, 'prod-1', {}), true);
    assert.equal(storeAllowsNamespace(conds, 'dev', { tier: 'gold' }), true);
    assert.equal(storeAllowsNamespace(conds, 'dev', { tier: 'silver' }), false);
    assert.equal(storeAllowsNamespace(conds, 'dev', undefined), false);
    assert.equal(
      storeAllowsNamespace(
        [{ namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] } }],
        'x',
        { env: 'dev' },
      ),
      true,
    );
  });
});
