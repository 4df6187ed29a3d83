import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiServerAudiences, audiencesOf } from '../../kube/api-audiences.ts';

const jwt = (claims: unknown) => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;

test("audiencesOf reads a JWT's aud claim, a string or a list; [] when unreadable", () => {
  assert.deepEqual(audiencesOf(jwt({ aud: 'https://kubernetes.default.svc' })), ['https://kubernetes.default.svc']);
  assert.deepEqual(audiencesOf(jwt({ aud: ['a', 3, 'b'] })), ['a', 'b']);
  assert.deepEqual(audiencesOf(jwt({ sub: 'x' })), []);
  assert.deepEqual(audiencesOf('not-a-jwt'), []);
  assert.deepEqual(audiencesOf('a.!!!not-json.c'), []);
});

function apiserver(aud: unknown) {
  const calls: { namespace: string; name: string; expirationSeconds?: number }[] = [];
  let fail: Error | undefined;
  return {
    calls,
    failNext: (e: Error) => (fail = e),
    createToken: (namespace: string, name: string, opts: { expirationSeconds?: number } = {}) => {
      calls.push({ namespace, name, expirationSeconds: opts.expirationSeconds });
      if (fail) {
        const e = fail;
        fail = undefined;
        return Promise.reject(e);
      }
      return Promise.resolve({ token: jwt({ aud }), expirationTimestamp: '' });
    },
  };
}

test("the apiserver's audiences are asked once (600 s token), shared by concurrent callers, cached for the TTL", async () => {
  let now = 0;
  const client = apiserver(['https://kubernetes.default.svc', 'k3s']);
  const a = new ApiServerAudiences({ client, ttlMs: 1000, now: () => now });
  const probe = { namespace: 'team-a', name: 'app' };
  const [x, y] = await Promise.all([a.get(probe), a.get(probe)]);
  assert.deepEqual(x, ['https://kubernetes.default.svc', 'k3s']);
  assert.deepEqual(y, x);
  assert.deepEqual(client.calls, [{ namespace: 'team-a', name: 'app', expirationSeconds: 600 }]);
  now = 999;
  await a.get(probe);
  assert.equal(client.calls.length, 1);
  now = 1000;
  await a.get(probe);
  assert.equal(client.calls.length, 2, 'asked again after the TTL');
});

test('a failed discovery reaches the caller and is not cached; a token without audience is refused', async () => {
  const client = apiserver('vault');
  const a = new ApiServerAudiences({ client });
  client.failNext(new Error('forbidden'));
  await assert.rejects(a.get({ namespace: 'n', name: 's' }), /forbidden/);
  assert.deepEqual(await a.get({ namespace: 'n', name: 's' }), ['vault']);
  const none = new ApiServerAudiences({ client: apiserver(undefined) });
  await assert.rejects(none.get({ namespace: 'n', name: 's' }), /without an audience/);
});
