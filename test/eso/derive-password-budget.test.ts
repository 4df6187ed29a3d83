// derivePassword's scrypt (~0.1 s of the controller's event loop each) is budgeted per process: a
// tenant's template looping over users cannot stall every other reconcile. Cached keys cost nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate } from '../../eso/template.ts';
import { NEW_KEYS_PER_MINUTE } from '../../eso/template-sprig-password.ts';

void test('derivePassword: new (password, user) pairs beyond the budget fail the render, naming the function; known pairs still render', () => {
  const render = (user: string): string => renderTemplate(`{{ derivePassword 1 "long" .password "${user}" "example.com" }}`, { password: 'canary-master-password' });
  const first = render('user-0');
  for (let i = 1; i < NEW_KEYS_PER_MINUTE; i++) render(`user-${i}`);
  assert.throws(() => render('one-too-many'), (err: Error) => {
    assert.match(err.message, /derivePassword: more than 32 new \(password, user\) pairs in a minute/);
    assert.doesNotMatch(err.message, /canary-master-password/);
    return true;
  });
  assert.equal(render('user-0'), first, 'a pair already derived renders from the cache, budget or not');
});
