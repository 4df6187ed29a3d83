// Vault's sys/policies and auth/kubernetes/role calls: what "absent" means (a 404 without a message),
// what stays an error (a 404 naming a missing route), and how old answers are normalised.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VaultError } from '../../vault/errors.ts';
import { createSysApi, listKeys, readOrAbsent } from '../../vault/sys.ts';
import type { VaultRequest, VaultRequester } from '../../vault/types.ts';

const absent = () => new VaultError('not_found', 'not found', 404);
const noRoute = () => new VaultError('not_found', 'no handler for route "auth/kubernetes/role/x"', 404);

function vault(answer: (req: VaultRequest) => unknown): VaultRequester & { sent: VaultRequest[] } {
  const sent: VaultRequest[] = [];
  return {
    sent,
    request: <T>(req: VaultRequest) => {
      sent.push(req);
      try {
        return Promise.resolve(answer(req) as T);
      } catch (err) {
        return Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
    },
  };
}

test('a 404 without a message is "absent"; a 404 naming a route (mount not enabled) stays an error', async () => {
  assert.equal(await readOrAbsent(Promise.reject(absent())), undefined);
  await assert.rejects(readOrAbsent(Promise.reject(noRoute())), /no handler for route/);
  await assert.rejects(readOrAbsent(Promise.reject(new VaultError('forbidden', 'denied', 403))), /denied/);
  assert.deepEqual(await listKeys(Promise.reject(absent())), []);
  assert.deepEqual(await listKeys(Promise.resolve({ data: { keys: ['a', 7, 'b'] } })), ['a', 'b']);
});

test('policies: read (either answer shape), absent, idempotent delete, list', async () => {
  const v = vault((req) => {
    if (req.method === 'GET' && req.path.endsWith('/new')) return { data: { policy: 'path "a" {}' } };
    if (req.method === 'GET' && req.path.endsWith('/old')) return { policy: 'path "b" {}' };
    if (req.method === 'GET' || req.method === 'DELETE' || req.method === 'LIST') throw absent();
    return undefined;
  });
  const sys = createSysApi(v);
  assert.equal(await sys.readPolicy('new'), 'path "a" {}');
  assert.equal(await sys.readPolicy('old'), 'path "b" {}');
  assert.equal(await sys.readPolicy('gone'), undefined);
  await sys.deletePolicy('gone'); // already deleted: not an error
  assert.deepEqual(await sys.listPolicies(), []);
  await sys.writePolicy('p', 'path "c" {}');
  assert.deepEqual(v.sent.at(-1), {
    operation: 'sys.policy.write',
    method: 'PUT',
    path: 'sys/policies/acl/p',
    body: { policy: 'path "c" {}' },
  });
});

test('kubernetes roles: mount slashes trimmed; comma lists, the `policies` alias and an empty audience normalised', async () => {
  const v = vault(() => ({
    data: {
      bound_service_account_names: 'app,worker',
      bound_service_account_namespaces: ['team-a'],
      policies: ['reader'],
      audience: '',
      token_ttl: 600,
    },
  }));
  const role = await createSysApi(v).readKubernetesRole('/kubernetes/', 'r');
  assert.equal(v.sent[0]?.path, 'auth/kubernetes/role/r');
  assert.deepEqual(role?.bound_service_account_names, ['app', 'worker']);
  assert.deepEqual(role?.token_policies, ['reader']);
  assert.equal(role?.token_ttl, 600);
  assert.ok(role && !('audience' in role));
});

test('a role read on a mount that is not enabled is an error, not "no role"', async () => {
  const sys = createSysApi(
    vault(() => {
      throw noRoute();
    }),
  );
  await assert.rejects(sys.readKubernetesRole('kubernetes', 'r'), /no handler for route/);
  await assert.rejects(sys.deleteKubernetesRole('kubernetes', 'r'), /no handler for route/);
});
