// `vaultgate plan` shows the role body the controller writes: both come from
// policy/role.ts, so mount normalisation, defaults and refusals agree.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { computePlan, type VaultCurrent } from '../../../audit/plan/plan.ts';
import { desiredState, type KubeObj } from '../../../audit/access/model.ts';
import { desiredRole } from '../../../policy/role.ts';

const vrb = (name: string, spec: Record<string, unknown>): KubeObj => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultRoleBinding',
  metadata: { name, namespace: 'pay' },
  spec: { serviceAccounts: ['api', 'api', 'worker'], policies: ['db'], ...spec },
});

void describe('plan ↔ controller role body', () => {
  void test('the planned role is the body and mount the controller writes', () => {
    for (const spec of [
      {},
      { authMount: '/auth/k8s-east/', tokenTTL: '1h30m', tokenMaxTTL: '48h', audience: 'vault' },
      { audience: '' },
    ]) {
      const [role] = desiredState([vrb('api', spec)]).roles;
      const controller = desiredRole('pay', { serviceAccounts: ['api', 'api', 'worker'], policies: ['db'], ...spec }, [
        'vaultgate.pay.db',
      ]);
      assert.deepEqual(
        { mount: role?.mount, body: role?.body },
        { mount: controller.mount, body: controller.body },
        JSON.stringify(spec),
      );
    }
    assert.equal(
      desiredState([vrb('api', { authMount: 'auth/k8s-east' })]).roles[0]?.mount,
      'k8s-east',
      'the auth/ prefix is dropped as the controller does',
    );
  });

  void test('a TTL the controller refuses is a skip with the reason, and the role in Vault is not deleted', () => {
    const state = desiredState([vrb('api', { tokenTTL: 'soon' })]);
    assert.deepEqual(state.roles, []);
    const current: VaultCurrent = {
      policies: new Map(),
      roles: new Map([
        ['kubernetes/vaultgate.pay.api', { mount: 'kubernetes', name: 'vaultgate.pay.api', role: { token_ttl: 3600 } }],
      ]),
    };
    const plan = computePlan(state, current);
    assert.deepEqual(
      plan.items.map((i) => [i.action, i.path]),
      [['skip', 'auth/kubernetes/role/vaultgate.pay.api']],
    );
    assert.match(plan.items[0]?.reason ?? '', /refuses this spec \(spec\.tokenTTL "soon" is not a duration/);
  });
});
