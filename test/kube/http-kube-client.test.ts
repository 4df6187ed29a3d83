import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeApiError } from '../../kube/errors.ts';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import type { KubeRequest } from '../../kube/kube-transport.ts';
import { CONFIGMAPS, SECRETS, SERVICEACCOUNTS, resourcePath } from '../../kube/resources.ts';
import { KubeSim } from '../sim/kube.ts';

describe('HTTP KubeClient', () => {
  let sim: KubeSim;
  let client: HttpKubeClient;
  before(async () => {
    sim = await KubeSim.start();
    client = new HttpKubeClient(sim.kubeConfig(), { defaultTimeoutMs: 5_000 });
  });
  after(async () => {
    client.close();
    await sim.close();
  });

  test('a hanging apiserver hits the per-call timeout instead of waiting forever', async () => {
    sim.inject({ path: resourcePath(CONFIGMAPS, 'default', 'slow'), times: 1, action: 'hang' });
    await assert.rejects(
      client.get(CONFIGMAPS, 'slow', 'default', { timeoutMs: 200 }),
      (e: unknown) => e instanceof KubeApiError && e.reason === 'ClientTimeout' && e.code === 0,
    );
  });

  test('errors carry code/reason/message but never the bearer token or the request body', async () => {
    const secretValue = 'c3VwZXItc2VjcmV0LXZhbHVl';
    sim.inject({
      path: resourcePath(SECRETS, 'default'),
      method: 'POST',
      times: 1,
      action: { status: 500, message: 'etcd timeout' },
    });
    const err = await client
      .create(SECRETS, { metadata: { name: 's', namespace: 'default' }, data: { k: secretValue } })
      .catch((e: unknown) => e);
    assert.ok(err instanceof KubeApiError);
    assert.deepEqual(err.toJSON(), { code: 500, reason: 'InternalError', message: 'etcd timeout' });
    const text = `${err.message} ${String(err.stack)} ${JSON.stringify(err)}`;
    assert.ok(!text.includes(sim.token) && !text.includes(secretValue) && !/bearer/i.test(text));
  });

  test('a dropped connection is a NetworkError, not a crash', async () => {
    sim.inject({ path: resourcePath(CONFIGMAPS, 'default', 'cut'), times: 1, action: 'drop' });
    await assert.rejects(
      client.get(CONFIGMAPS, 'cut', 'default'),
      (e: unknown) => e instanceof KubeApiError && e.reason === 'NetworkError',
    );
  });

  test('TokenRequest failures never echo a token; list items get apiVersion/kind back', async () => {
    const err = await client.createToken('default', 'missing-sa').catch((e: unknown) => e);
    assert.ok(err instanceof KubeApiError && err.code === 404);
    await client.create(SERVICEACCOUNTS, { metadata: { name: 'sa', namespace: 'default' } });
    const { token } = await client.createToken('default', 'sa', { audiences: ['vault'] });
    assert.equal(token.split('.').length, 3);
    const list = await client.list(SERVICEACCOUNTS, { namespace: 'default' });
    assert.equal(list.items[0]?.kind, 'ServiceAccount');
    assert.equal(list.items[0]?.apiVersion, 'v1');
  });

  test('a patch and a server-side apply are PATCHes with their content type, field manager and flags', async () => {
    const sent: KubeRequest[] = [];
    const recording = new HttpKubeClient(sim.kubeConfig());
    recording.transport.request = (req: KubeRequest) => (sent.push(req), Promise.resolve({}));
    const cm = { metadata: { name: 'c', namespace: 'default' } };
    await recording.patch(CONFIGMAPS, 'c', 'default', { data: { k: 'v' } }, 'merge', { dryRun: true, timeoutMs: 9 });
    await recording.patch(CONFIGMAPS, 'c', 'default', [], 'json', { subresource: 'status' });
    await recording.apply(CONFIGMAPS, cm, { force: true, fieldManager: 'tenant', timeoutMs: 7 });
    await recording.apply(CONFIGMAPS, cm, { dryRun: true });
    const path = resourcePath(CONFIGMAPS, 'default', 'c');
    const applied = { ...cm, apiVersion: 'v1', kind: 'ConfigMap' };
    assert.deepEqual(sent, [
      {
        method: 'PATCH',
        path,
        body: { data: { k: 'v' } },
        contentType: 'application/merge-patch+json',
        query: { fieldManager: 'vaultgate', dryRun: 'All' },
        timeoutMs: 9,
      },
      {
        method: 'PATCH',
        path: `${path}/status`,
        body: [],
        contentType: 'application/json-patch+json',
        query: { fieldManager: 'vaultgate', dryRun: undefined },
        timeoutMs: undefined,
      },
      {
        method: 'PATCH',
        path,
        body: applied,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'tenant', force: 'true', dryRun: undefined },
        timeoutMs: 7,
      },
      {
        method: 'PATCH',
        path,
        body: applied,
        contentType: 'application/apply-patch+yaml',
        query: { fieldManager: 'vaultgate', force: undefined, dryRun: 'All' },
        timeoutMs: undefined,
      },
    ]);
    await assert.rejects(
      recording.apply(CONFIGMAPS, { metadata: { name: 'c' } }),
      (e: unknown) => e instanceof KubeApiError && e.code === 400,
      'a namespaced object without a namespace is refused before any request',
    );
    assert.equal(sent.length, 4);
    recording.close();
  });
});
