// derivePassword's scrypt (~0.1 s of CPU each) is budgeted per namespace (and, outside a render that names one, per process): a
// tenant's template looping over users cannot stall every other reconcile. Cached keys cost nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate } from '../../../eso/template.ts';
import { NEW_KEYS_PER_MINUTE } from '../../../golang/sprig/password.ts';

void test('derivePassword: new (password, user) pairs beyond the budget fail the render, naming the function; known pairs still render', () => {
  const render = (user: string): string =>
    renderTemplate(`{{ derivePassword 1 "long" .password "${user}" "example.com" }}`, {
      password: 'canary-master-password',
    });
  const first = render('user-0');
  for (let i = 1; i < NEW_KEYS_PER_MINUTE; i++) render(`user-${i}`);
  assert.throws(
    () => render('one-too-many'),
    (err: Error) => {
      assert.match(err.message, /derivePassword: more than 32 new \(password, user\) pairs in a minute/);
      assert.doesNotMatch(err.message, /canary-master-password/);
      return true;
    },
  );
  assert.equal(render('user-0'), first, 'a pair already derived renders from the cache, budget or not');
});

void test("derivePassword: the budget is per namespace: one namespace spending all of it leaves another's whole", async () => {
  const { NamespaceKeyBudgets, withDeriveBudget } = await import('../../../golang/sprig/password.ts');
  const budgets = new NamespaceKeyBudgets(3);
  const render = (ns: string, user: string): string =>
    withDeriveBudget(budgets.forNamespace(ns), () =>
      renderTemplate(`{{ derivePassword 1 "long" .password "${user}" "example.com" }}`, {
        password: 'canary-master-password',
      }),
    );
  for (let i = 0; i < 3; i++) render('tenant-a', `a-${i}`);
  assert.throws(
    () => render('tenant-a', 'a-one-too-many'),
    /more than 3 new \(password, user\) pairs in a minute in namespace tenant-a/,
  );
  assert.equal(budgets.remaining('tenant-b'), 3);
  assert.equal(render('tenant-b', 'b-0').length, 14, 'another namespace still derives');
  assert.equal(budgets.remaining('tenant-a', Date.now() + 61_000), 3, 'the window slides');
});
