// The Kubernetes API behaviour vaultgate relies on, as node:test tests parameterised by target: run
// against the simulator over HTTP (kube-sim.test.ts), against the in-process fake the reconciler tests use
// (kube-fake.test.ts) and against a real kube-apiserver (real tier). When they disagree, the simulator is
// wrong. Uses the VaultPolicy CRD (vaultgate.io/v1alpha1, vaultpolicies,
// namespaced, status subresource) and core ServiceAccounts/ConfigMaps.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import { HttpKubeClient } from '../../kube/http-kube-client.ts';
import type { KubeClient } from '../../kube/kube-client.ts';
import { KubeApiError } from '../../kube/errors.ts';
import type { KubeObject, WatchEvent } from '../../kube/objects.ts';
import { CONFIGMAPS, NAMESPACES, SERVICEACCOUNTS } from '../../kube/resources.ts';
import { VAULT_POLICIES } from '../../schemas/resources.ts';

export interface KubeContractTarget {
  /** The apiserver, over HTTP with vaultgate's own client. */
  kubeconfig?: KubeConfig;
  /** Or a client in process (the fake reconciler tests use). */
  client?: KubeClient;
  /** Force old resourceVersions to 410 (etcd compaction + watch-cache catch-up). */
  compact?: () => Promise<void>;
  /** A namespace to use; otherwise one is created (and deleted afterwards). */
  namespace?: string;
}

interface VaultPolicy extends KubeObject {
  spec?: { policy?: string; rules?: unknown[]; vaultName?: string };
  status?: { observedGeneration?: number; conditions?: unknown[] };
}

async function rejects(p: Promise<unknown>, code: number, reason?: string): Promise<KubeApiError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof KubeApiError, `expected a KubeApiError, got ${String(err)}`);
    assert.equal(err.code, code, `expected HTTP ${code}, got ${err.code} ${err.reason}: ${err.message}`);
    if (reason) assert.equal(err.reason, reason);
    return err;
  }
  assert.fail(`expected HTTP ${code}, but the call succeeded`);
}

/** Collect watch events until `until` says stop (or the stream ends / times out). */
async function collect<T extends KubeObject>(
  stream: AsyncIterable<WatchEvent<T>>,
  ac: AbortController,
  until: (evs: WatchEvent<T>[]) => boolean,
  timeoutMs = 15_000,
): Promise<WatchEvent<T>[]> {
  const evs: WatchEvent<T>[] = [];
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  try {
    for await (const ev of stream) {
      evs.push(ev);
      if (until(evs)) break;
    }
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
  return evs;
}

export function describeKubeContract(
  name: string,
  setup: () => Promise<KubeContractTarget>,
  teardown: () => Promise<void>,
): void {
  describe(`Kubernetes API contract: ${name}`, () => {
    let target: KubeContractTarget;
    let client: KubeClient;
    let ns: string;
    let createdNs = false;
    const uniq = (p: string): string => `${p}-${randomBytes(3).toString('hex')}`;
    const vp = (
      n: string,
      spec: VaultPolicy['spec'] = { policy: 'path "secret/data/x/*" { capabilities = ["read"] }' },
      extra: Partial<VaultPolicy['metadata']> = {},
    ): VaultPolicy => ({
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultPolicy',
      metadata: { name: n, namespace: ns, ...extra },
      spec,
    });

    before(async () => {
      target = await setup();
      client = target.client ?? new HttpKubeClient(target.kubeconfig!, { defaultTimeoutMs: 15_000 });
      ns = target.namespace ?? uniq('vg-contract');
      if (!target.namespace) {
        await client.create(NAMESPACES, { metadata: { name: ns } });
        createdNs = true;
      }
    });

    after(async () => {
      if (createdNs) await client.delete(NAMESPACES, ns).catch(() => undefined);
      if (client instanceof HttpKubeClient) client.close();
      await teardown();
    });

    test('get of a missing object is a 404 Status with reason NotFound', async () => {
      assert.equal(await client.get(VAULT_POLICIES, 'does-not-exist', ns), undefined);
      const err = await rejects(
        client.patch(VAULT_POLICIES, 'does-not-exist', ns, { metadata: { labels: { a: 'b' } } }, 'merge'),
        404,
        'NotFound',
      );
      assert.match(err.message, /vaultpolicies\.vaultgate\.io "does-not-exist" not found/);
    });

    test('create of an existing name is 409 AlreadyExists', async () => {
      const n = uniq('dup');
      await client.create(VAULT_POLICIES, vp(n));
      await rejects(client.create(VAULT_POLICIES, vp(n)), 409, 'AlreadyExists');
    });

    test("a list's resourceVersion starts a watch that sees only later changes", async () => {
      const label = uniq('lw');
      await client.create(VAULT_POLICIES, vp(uniq('before'), undefined, { labels: { contract: label } }));
      const list = await client.list(VAULT_POLICIES, { namespace: ns, labelSelector: `contract=${label}` });
      assert.equal(list.items.length, 1);
      assert.match(list.resourceVersion, /^\d+$/);
      const later = uniq('later');
      await client.create(VAULT_POLICIES, vp(later, undefined, { labels: { contract: label } }));
      const ac = new AbortController();
      const evs = await collect(
        client.watch<VaultPolicy>(VAULT_POLICIES, {
          namespace: ns,
          labelSelector: `contract=${label}`,
          resourceVersion: list.resourceVersion,
          signal: ac.signal,
        }),
        ac,
        (e) => e.length >= 1,
      );
      assert.equal(evs[0]?.type, 'ADDED');
      assert.equal(evs[0]?.object.metadata.name, later);
      assert.equal(evs[0]?.object.kind, 'VaultPolicy');
    });

    test('a watch without resourceVersion starts with ADDED for existing objects', async () => {
      const label = uniq('w0');
      const names = [uniq('a'), uniq('b')];
      for (const n of names) await client.create(VAULT_POLICIES, vp(n, undefined, { labels: { contract: label } }));
      const ac = new AbortController();
      const evs = await collect(
        client.watch(VAULT_POLICIES, { namespace: ns, labelSelector: `contract=${label}`, signal: ac.signal }),
        ac,
        (e) => e.length >= 2,
      );
      assert.deepEqual(
        evs.map((e) => e.type),
        ['ADDED', 'ADDED'],
      );
      assert.deepEqual(evs.map((e) => e.object.metadata.name).sort(), [...names].sort());
    });

    test("an update that moves an object out of a watch's label selector is seen as DELETED", async () => {
      const label = uniq('sel');
      const n = uniq('moving');
      const created = await client.create(VAULT_POLICIES, vp(n, undefined, { labels: { contract: label } }));
      const ac = new AbortController();
      const stream = client.watch(VAULT_POLICIES, {
        namespace: ns,
        labelSelector: `contract=${label}`,
        resourceVersion: created.metadata.resourceVersion,
        signal: ac.signal,
      });
      const pending = collect(stream, ac, (e) => e.length >= 1);
      await client.patch(VAULT_POLICIES, n, ns, { metadata: { labels: { contract: 'elsewhere' } } }, 'merge');
      const evs = await pending;
      assert.equal(evs[0]?.type, 'DELETED');
      assert.equal(evs[0]?.object.metadata.name, n);
    });

    test('lists page with limit and continue', async () => {
      const label = uniq('page');
      for (let i = 0; i < 3; i++)
        await client.create(CONFIGMAPS, {
          metadata: { name: uniq(`cm${i}`), namespace: ns, labels: { contract: label } },
          data: { i: String(i) },
        });
      const first = await client.list(CONFIGMAPS, { namespace: ns, labelSelector: `contract=${label}`, limit: 2 });
      assert.equal(first.items.length, 2);
      assert.ok(first.continue, 'a continue token when more items remain');
      const second = await client.list(CONFIGMAPS, {
        namespace: ns,
        labelSelector: `contract=${label}`,
        limit: 2,
        continue: first.continue,
      });
      assert.equal(second.items.length, 1);
      assert.equal(second.continue, undefined);
      const names = new Set([...first.items, ...second.items].map((o) => o.metadata.name));
      assert.equal(names.size, 3);
    });

    test('a watch asked for bookmarks gets a BOOKMARK carrying a resourceVersion', async () => {
      const ac = new AbortController();
      const evs = await collect(
        client.watch(VAULT_POLICIES, {
          namespace: ns,
          labelSelector: `contract=${uniq('bm')}`,
          allowWatchBookmarks: true,
          timeoutSeconds: 5,
          signal: ac.signal,
        }),
        ac,
        (e) => e.some((x) => x.type === 'BOOKMARK'),
      );
      const bm = evs.find((e) => e.type === 'BOOKMARK');
      assert.ok(bm, 'a BOOKMARK before the watch timed out');
      assert.match(bm.object.metadata.resourceVersion ?? '', /^\d+$/);
    });

    test('a watch from a compacted resourceVersion fails with 410', async (t) => {
      if (!target.compact) return t.skip('target cannot compact');
      const list = await client.list(VAULT_POLICIES, { namespace: ns, limit: 1 });
      for (let i = 0; i < 3; i++) await client.create(VAULT_POLICIES, vp(uniq('churn')));
      await target.compact();
      const ac = new AbortController();
      let gone = false;
      try {
        const evs = await collect(
          client.watch(VAULT_POLICIES, { namespace: ns, resourceVersion: list.resourceVersion, signal: ac.signal }),
          ac,
          (e) => e.some((x) => x.type === 'ERROR'),
        );
        const err = evs.find((e) => e.type === 'ERROR')?.object as unknown as
          { code?: number; reason?: string } | undefined;
        gone = err?.code === 410;
        assert.equal(err?.reason, 'Expired');
      } catch (err) {
        gone = err instanceof KubeApiError && err.code === 410;
      }
      assert.ok(gone, 'ERROR 410 (in-stream or HTTP)');
    });

    test('an update carrying a stale resourceVersion is 409 Conflict', async () => {
      const n = uniq('occ');
      const v1 = await client.create(VAULT_POLICIES, vp(n));
      const v2 = await client.replace(VAULT_POLICIES, {
        ...v1,
        spec: { policy: 'path "a" { capabilities = ["read"] }' },
      });
      assert.notEqual(v2.metadata.resourceVersion, v1.metadata.resourceVersion);
      const err = await rejects(client.replace(VAULT_POLICIES, { ...v1, spec: { policy: 'stale' } }), 409, 'Conflict');
      assert.match(err.message, /the object has been modified/);
      await rejects(
        client.patch(
          VAULT_POLICIES,
          n,
          ns,
          { metadata: { resourceVersion: v1.metadata.resourceVersion, labels: { x: 'y' } } },
          'merge',
        ),
        409,
        'Conflict',
      );
      await rejects(
        client.delete(VAULT_POLICIES, n, ns, { preconditions: { resourceVersion: v1.metadata.resourceVersion } }),
        409,
        'Conflict',
      );
    });

    test('a custom resource update without resourceVersion is refused', async () => {
      const n = uniq('norv');
      const v1 = await client.create(VAULT_POLICIES, vp(n));
      const { resourceVersion: _rv, ...meta } = v1.metadata;
      await rejects(client.replace(VAULT_POLICIES, { ...v1, metadata: meta }), 422, 'Invalid');
    });

    test('generation moves on spec changes only; observedGeneration is kept in status', async () => {
      const n = uniq('gen');
      const v1 = await client.create(VAULT_POLICIES, vp(n));
      assert.equal(v1.metadata.generation, 1);
      const labelled = await client.patch<VaultPolicy>(
        VAULT_POLICIES,
        n,
        ns,
        { metadata: { labels: { touched: 'yes' } } },
        'merge',
      );
      assert.equal(labelled.metadata.generation, 1, 'metadata changes keep the generation');
      const status = await client.patch<VaultPolicy>(
        VAULT_POLICIES,
        n,
        ns,
        { status: { observedGeneration: 1 } },
        'merge',
        { subresource: 'status' },
      );
      assert.equal(status.metadata.generation, 1, 'status changes keep the generation');
      assert.equal(status.status?.observedGeneration, 1);
      const spec = await client.patch<VaultPolicy>(
        VAULT_POLICIES,
        n,
        ns,
        { spec: { policy: 'path "b" { capabilities = ["list"] }' } },
        'merge',
      );
      assert.equal(spec.metadata.generation, 2);
      assert.equal(spec.status?.observedGeneration, 1, 'status survives spec writes');
    });

    test('the status subresource ignores spec, and the main resource ignores status', async () => {
      const n = uniq('sub');
      const created = await client.create(VAULT_POLICIES, { ...vp(n), status: { observedGeneration: 42 } });
      assert.equal(created.status?.observedGeneration, undefined, 'status dropped on create');
      const viaStatus = await client.replace<VaultPolicy>(
        VAULT_POLICIES,
        { ...created, spec: { policy: 'changed via status' }, status: { observedGeneration: 1 } },
        { subresource: 'status' },
      );
      assert.equal(viaStatus.status?.observedGeneration, 1);
      assert.equal(viaStatus.spec?.policy, created.spec?.policy);
      assert.equal(viaStatus.metadata.generation, 1);
      const viaMain = await client.replace<VaultPolicy>(VAULT_POLICIES, {
        ...viaStatus,
        spec: { policy: 'changed via main' },
        status: { observedGeneration: 99 },
      });
      assert.equal(viaMain.spec?.policy, 'changed via main');
      assert.equal(viaMain.status?.observedGeneration, 1);
    });

    test('finalizers hold a deleted object until removed; none can be added meanwhile', async () => {
      const n = uniq('fin');
      const created = await client.create(VAULT_POLICIES, vp(n, undefined, { finalizers: ['vaultgate.io/finalizer'] }));
      const ac = new AbortController();
      const pending = collect(
        client.watch<VaultPolicy>(VAULT_POLICIES, {
          namespace: ns,
          fieldSelector: `metadata.name=${n}`,
          resourceVersion: created.metadata.resourceVersion,
          signal: ac.signal,
        }),
        ac,
        (e) => e.some((x) => x.type === 'DELETED'),
      );
      const held = await client.delete<VaultPolicy>(VAULT_POLICIES, n, ns);
      assert.ok(held?.metadata.deletionTimestamp, 'delete returns the object, now terminating');
      const got = await client.get<VaultPolicy>(VAULT_POLICIES, n, ns);
      assert.ok(got?.metadata.deletionTimestamp);
      assert.deepEqual(got.metadata.finalizers, ['vaultgate.io/finalizer']);
      assert.equal(got.metadata.generation, 2, 'marking for deletion bumps the generation');
      await rejects(
        client.patch(
          VAULT_POLICIES,
          n,
          ns,
          { metadata: { finalizers: ['vaultgate.io/finalizer', 'other.io/x'] } },
          'merge',
        ),
        422,
        'Invalid',
      );
      await client.patch(
        VAULT_POLICIES,
        n,
        ns,
        { metadata: { resourceVersion: got.metadata.resourceVersion, finalizers: [] } },
        'merge',
      );
      assert.equal(await client.get(VAULT_POLICIES, n, ns), undefined);
      const evs = await pending;
      assert.deepEqual(
        evs.map((e) => e.type),
        ['MODIFIED', 'DELETED'],
      );
    });

    test('server-side apply: conflicts between managers, force takes ownership, no-op applies change nothing', async () => {
      const n = uniq('ssa');
      const body = (policy: string): VaultPolicy => ({
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: n, namespace: ns },
        spec: { policy },
      });
      const first = await client.apply<VaultPolicy>(VAULT_POLICIES, body('path "a" { capabilities = ["read"] }'), {
        fieldManager: 'contract-a',
      });
      assert.ok(first.metadata.managedFields?.some((m) => m.manager === 'contract-a' && m.operation === 'Apply'));
      const again = await client.apply<VaultPolicy>(VAULT_POLICIES, body('path "a" { capabilities = ["read"] }'), {
        fieldManager: 'contract-a',
      });
      assert.equal(
        again.metadata.resourceVersion,
        first.metadata.resourceVersion,
        'a no-op apply does not bump resourceVersion',
      );
      const sameValue = await client.apply<VaultPolicy>(VAULT_POLICIES, body('path "a" { capabilities = ["read"] }'), {
        fieldManager: 'contract-b',
      });
      assert.equal(
        sameValue.spec?.policy,
        'path "a" { capabilities = ["read"] }',
        'applying the same value is shared ownership, not a conflict',
      );
      const err = await rejects(
        client.apply(VAULT_POLICIES, body('path "b" { capabilities = ["read"] }'), { fieldManager: 'contract-c' }),
        409,
        'Conflict',
      );
      assert.match(err.message, /conflicts? with "contract-a"/); // real apiserver: "Apply failed with 2 conflicts: conflicts with …"
      const forced = await client.apply<VaultPolicy>(VAULT_POLICIES, body('path "b" { capabilities = ["read"] }'), {
        fieldManager: 'contract-c',
        force: true,
      });
      assert.equal(forced.spec?.policy, 'path "b" { capabilities = ["read"] }');
      await rejects(
        client.apply(VAULT_POLICIES, body('path "a" { capabilities = ["read"] }'), { fieldManager: 'contract-a' }),
        409,
        'Conflict',
      );
    });

    test('server-side apply removes a field its manager stops applying, unless another manager owns it too', async () => {
      const n = uniq('ssadrop');
      const cm = (
        data: Record<string, string>,
        labels?: Record<string, string>,
      ): KubeObject & { data: Record<string, string> } => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: n, namespace: ns, ...(labels ? { labels } : {}) },
        data,
      });
      await client.apply(CONFIGMAPS, cm({ a: '1', b: '2', shared: 's' }, { owner: 'a', keep: 'k' }), {
        fieldManager: 'contract-a',
      });
      await client.apply(CONFIGMAPS, cm({ shared: 's' }), { fieldManager: 'contract-b' });
      const after = await client.apply<KubeObject & { data: Record<string, string> }>(
        CONFIGMAPS,
        cm({ a: '1' }, { keep: 'k' }),
        { fieldManager: 'contract-a' },
      );
      assert.deepEqual(
        after.data,
        { a: '1', shared: 's' },
        'b is dropped (only contract-a set it); shared stays (contract-b sets it too)',
      );
      assert.deepEqual(after.metadata.labels, { keep: 'k' });
      const b = after.metadata.managedFields?.find((m) => m.manager === 'contract-b');
      assert.deepEqual(Object.keys((b?.fieldsV1 as { 'f:data'?: object } | undefined)?.['f:data'] ?? {}), ['f:shared']);
    });

    test('server-side apply: a field another writer changed with an update conflicts, and force takes it back', async () => {
      const n = uniq('ssaedit');
      const cm = (v: string): KubeObject => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: n, namespace: ns },
        data: { a: v },
      });
      await client.apply(CONFIGMAPS, cm('ours'), { fieldManager: 'contract-a' });
      await client.patch(CONFIGMAPS, n, ns, { data: { a: 'edited' } }, 'merge');
      const err = await rejects(client.apply(CONFIGMAPS, cm('ours'), { fieldManager: 'contract-a' }), 409, 'Conflict');
      assert.match(err.message, /conflicts? with "[^"]+"/);
      const forced = await client.apply<KubeObject & { data: Record<string, string> }>(CONFIGMAPS, cm('ours'), {
        fieldManager: 'contract-a',
        force: true,
      });
      assert.deepEqual(forced.data, { a: 'ours' });
    });

    test('server-side apply of status goes through the status subresource', async () => {
      const n = uniq('ssastatus');
      await client.create(VAULT_POLICIES, vp(n));
      const out = await client.apply<VaultPolicy>(
        VAULT_POLICIES,
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultPolicy',
          metadata: { name: n, namespace: ns },
          status: { observedGeneration: 1 },
        },
        { subresource: 'status', force: true, fieldManager: 'vaultgate' },
      );
      assert.equal(out.status?.observedGeneration, 1);
      assert.equal(out.metadata.generation, 1);
    });

    test('TokenRequest returns a JWT for a ServiceAccount with the requested audience', async () => {
      const sa = uniq('sa');
      await client.create(SERVICEACCOUNTS, { metadata: { name: sa, namespace: ns } });
      const issued = await client.createToken(ns, sa, { audiences: ['vault'], expirationSeconds: 600 });
      const parts = issued.token.split('.');
      assert.equal(parts.length, 3);
      const claims = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString()) as {
        sub: string;
        aud: string[] | string;
      };
      assert.equal(claims.sub, `system:serviceaccount:${ns}:${sa}`);
      assert.deepEqual([claims.aud].flat(), ['vault']);
      assert.ok(Date.parse(issued.expirationTimestamp) > Date.now());
      await rejects(client.createToken(ns, uniq('missing')), 404, 'NotFound');
    });
  });
}
