// A role binds only Ready policies, and a refused VaultPolicy never becomes Ready: the plan writes the
// role without them and says which ones it left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { withoutRefusedPolicies } from '../../../audit/plan/plan.ts';

const refused = new Set(['vaultgate.a.root', 'vaultgate.a.sys']);
const note = (names: string) => `; written without ${names} (refused VaultPolicy: a role binds only Ready policies)`;

const cases: Array<{ name: string; body: Record<string, unknown>; policies?: unknown; note: string }> = [
  { name: 'no token_policies', body: { token_ttl: 60 }, note: '' },
  { name: 'none refused', body: { token_policies: ['vaultgate.a.read'] }, note: '' },
  {
    name: 'one refused',
    body: { token_policies: ['vaultgate.a.read', 'vaultgate.a.root'], token_ttl: 60 },
    policies: ['vaultgate.a.read'],
    note: note('vaultgate.a.root'),
  },
  {
    name: 'all refused, named in the body order',
    body: { token_policies: ['vaultgate.a.sys', 'vaultgate.a.root'] },
    policies: [],
    note: note('vaultgate.a.sys, vaultgate.a.root'),
  },
  { name: 'token_policies not a list', body: { token_policies: 'vaultgate.a.root' }, note: '' },
];

for (const c of cases) {
  void test(c.name, () => {
    const r = withoutRefusedPolicies(c.body, refused);
    assert.equal(r.note, c.note);
    if (c.policies === undefined) assert.equal(r.body, c.body, 'nothing left out: the body as given');
    else assert.deepEqual(r.body, { ...c.body, token_policies: c.policies });
  });
}
