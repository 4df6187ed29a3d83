// ExternalSecrets reading ESO's generators, against the in-memory Kubernetes and a Vault that keeps
// leases (issue; renew capped at the max TTL; revoke; a token's end revokes its leases). What a user
// notices: a Password is new at every sync and only then (ESO's behaviour); an unchanged ESO
// VaultDynamicSecret generator's credential is renewed, not minted at every refresh as ESO does, replaced
// before its max TTL with the replaced lease revoked, never dead in the Secret; a restarted controller
// re-mints nothing; no value in status, Events or logs.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SECRETS } from '../../../kube/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { EXTERNAL_SECRETS } from '../../../schemas/resources.ts';
import { GENERATOR_KIND_METAS } from '../../../schemas/generator-kinds.ts';
import {
  CLUSTER_GENERATORS,
  PASSWORD_GENERATORS,
  VAULT_DYNAMIC_SECRET_GENERATORS,
} from '../../../schemas/resources.ts';
import { VaultError } from '../../../vault/errors.ts';
import { KubeApiError } from '../../../kube/errors.ts';
import type { VaultRequest, VaultRequester } from '../../../vault/types.ts';
import { createExternalSecretReconciler } from '../../../controller/reconcilers/externalsecret.ts';
import { stateSecretName } from '../../../controller/reconcilers/generator-state.ts';
import {
  GENERATOR_FINALIZER,
  GENERATOR_LEASE_POLICY,
  GENERATOR_REVOKE_ATTEMPTS,
} from '../../../controller/reconcilers/externalsecret-plan.ts';
import {
  planLifecycle,
  type LifecycleObservation,
  type LifecyclePlan,
} from '../../../controller/reconcilers/vaultdynamicsecret-plan.ts';
import type { CoalescingKvReader } from '../../../controller/reconcilers/kv-reader.ts';
import type { StoreConnector } from '../../../controller/reconcilers/store-connector.ts';
import { FakeKube } from './harness.ts';

const NS = 'team-a';
const LEASE_S = 60;
const MAX_S = 300;
const API = 'generators.external-secrets.io/v1alpha1';

/** The database engine as the generator sees it: leases with a max TTL, dying with the token that minted them. */
class LeaseVault {
  now = Date.parse('2026-12-03T08:00:00Z');
  issued: string[] = [];
  renewed: string[] = [];
  revoked: string[] = [];
  connects = 0;
  /** sys/leases/revoke fails as a Vault that cannot be reached. */
  revokeDown = false;
  /** Leases as the kubernetes secrets engine gives them: not renewable, and Vault refuses a renewal. */
  renewable = true;
  leaseS = LEASE_S;
  /** Logging in fails with this (a ServiceAccount gone: the TokenRequest's 404). */
  loginFails: Error | undefined;
  readonly tokens = new Map<string, number>();
  readonly leases = new Map<string, { expire: number; max: number; token: string }>();
  password(id: string): string {
    return `pw-${id.split('/').pop()}-canary`;
  }
  /** Whether the credential with this password is alive in Vault now. */
  alive(password: string): boolean {
    return [...this.leases].some(([id, l]) => this.password(id) === password && l.expire > this.now);
  }
  session(accessor: string): VaultRequester {
    return { request: <T>(req: VaultRequest) => Promise.resolve(this.handle(req, accessor) as T) };
  }
  private handle(req: VaultRequest, accessor: string): unknown {
    const body = req.body as { lease_id?: string; increment?: number } | undefined;
    this.tokens.set(accessor, Math.max(this.tokens.get(accessor) ?? 0, this.now + 3600_000));
    for (const [id, l] of this.leases) if (l.expire <= this.now) this.leases.delete(id);
    if (req.path === 'database/creds/app') {
      assert.equal(req.method, 'GET');
      const id = `database/creds/app/L${this.issued.length + 1}`;
      this.issued.push(id);
      this.leases.set(id, { expire: this.now + this.leaseS * 1000, max: this.now + MAX_S * 1000, token: accessor });
      return {
        lease_id: id,
        lease_duration: this.leaseS,
        renewable: this.renewable,
        data: { username: `u-${this.issued.length}`, password: this.password(id) },
      };
    }
    if (req.path === 'auth/token/lookup-self')
      return { data: { accessor, expire_time: new Date(this.tokens.get(accessor)!).toISOString(), renewable: true } };
    const lease = this.leases.get(body?.lease_id ?? '');
    if (req.path === 'sys/leases/revoke') {
      if (this.revokeDown) throw new VaultError('unavailable', `${req.operation}: Vault unreachable`);
      this.revoked.push(body!.lease_id!);
      this.leases.delete(body!.lease_id!);
      return undefined;
    }
    if (!lease) throw new VaultError('invalid', `${req.operation}: lease not found`, 400, req.operation);
    if (req.path === 'sys/leases/renew') {
      this.renewed.push(body!.lease_id!);
      if (!this.renewable)
        throw new VaultError('invalid', `${req.operation}: lease is not renewable`, 400, req.operation);
      lease.expire = Math.min(lease.max, this.now + (body!.increment ?? LEASE_S) * 1000);
      return {
        lease_id: body!.lease_id,
        lease_duration: Math.round((lease.expire - this.now) / 1000),
        renewable: true,
      };
    }
    throw new Error(`unexpected ${req.path}`);
  }
}

/** ESO's generator manifest as its docs write it (docs/api/generator/vault.md), server and role ours. */
const ESO_VDS = {
  apiVersion: API,
  kind: 'VaultDynamicSecret',
  metadata: { name: 'pg', namespace: NS },
  spec: {
    path: '/database/creds/app',
    method: 'GET',
    provider: {
      server: 'https://vault.example:8200',
      auth: { kubernetes: { mountPath: 'kubernetes', role: 'app', serviceAccountRef: { name: 'app' } } },
    },
  },
};

function world(generatorRef: { kind: string; name: string }, refreshInterval = '1m') {
  const kube = new FakeKube();
  for (const m of GENERATOR_KIND_METAS)
    kube.store.register({ ...m, namespaced: m.scope === 'Namespaced', custom: true, shortNames: [] });
  const vault = new LeaseVault();
  kube.put(VAULT_DYNAMIC_SECRET_GENERATORS, ESO_VDS);
  kube.put(PASSWORD_GENERATORS, { metadata: { name: 'pw', namespace: NS }, spec: { length: 24 } });
  kube.put(CLUSTER_GENERATORS, {
    metadata: { name: 'pg-cluster' },
    spec: { kind: 'VaultDynamicSecret', generator: { vaultDynamicSecretSpec: ESO_VDS.spec } },
  });
  kube.put(EXTERNAL_SECRETS, {
    metadata: { name: 'app', namespace: NS, generation: 1 },
    spec: {
      refreshInterval,
      target: { name: 'app' },
      dataFrom: [{ sourceRef: { generatorRef: { apiVersion: API, ...generatorRef } } }],
    },
  });
  kube.cacheOf(EXTERNAL_SECRETS);
  kube.cacheOf(SECRETS);
  let logins = 0;
  const reconciler = () => {
    const accessor = `acc-${++logins}`; // a restarted controller logs in afresh
    const connector = {
      connect: () => {
        vault.connects++;
        if (vault.loginFails) return Promise.reject(vault.loginFails);
        return Promise.resolve({ session: vault.session(accessor) });
      },
    } as unknown as StoreConnector;
    return createExternalSecretReconciler({
      connector,
      generatorConnector: connector,
      reader: {} as CoalescingKvReader,
      controllerClass: '',
      namePrefix: 'vaultgate',
      now: () => new Date(vault.now),
    });
  };
  const key = `${NS}/app`;
  const es = () => kube.getObj<KubeObject & { metadata: { uid?: string }; status?: unknown }>(EXTERNAL_SECRETS, key)!;
  const secret = (k: string) =>
    Buffer.from(
      kube.getObj<KubeObject & { data?: Record<string, string> }>(SECRETS, `${NS}/app`)?.data?.[k] ?? '',
      'base64',
    ).toString('utf8');
  /** Reconcile until nothing is left to do now (a requeue of more than 1 s ends it). */
  const settle = async (r: ReturnType<typeof reconciler>): Promise<void> => {
    for (let i = 0; i < 6; i++) {
      const res = await kube.reconcile(r, key);
      if (!res.requeueAfterMs || res.requeueAfterMs > 1_000) return;
    }
  };
  return { kube, vault, reconciler, es, secret, settle };
}

void describe('ExternalSecret with a generator whose leases are not renewable (kubernetes secrets engine)', () => {
  void test('the replaced lease is kept unrenewed through its grace and revoked, not forgotten as gone', async () => {
    const w = world({ kind: 'VaultDynamicSecret', name: 'pg' });
    w.vault.renewable = false;
    w.vault.leaseS = 600; // the apiserver's shortest TokenRequest; replaced 2 min (minValidity) before its end
    const r = w.reconciler();
    await w.settle(r);
    assert.deepEqual(w.vault.issued, ['database/creds/app/L1']);
    for (let t = 0; t < 600 && w.vault.revoked.length === 0; t += 10) {
      w.vault.now += 10_000;
      await w.settle(r);
    }
    assert.deepEqual(w.vault.issued, ['database/creds/app/L1', 'database/creds/app/L2']);
    assert.deepEqual(w.vault.revoked, ['database/creds/app/L1'], 'the replaced lease is revoked after the grace');
    assert.deepEqual(w.vault.renewed, [], 'Vault refuses to renew these: never asked');
  });
});

void describe('ExternalSecret with a Password generator', () => {
  void test("generates ESO's password (24: 6 digits, 6 symbols) at a sync, and a new one only at the next refresh", async () => {
    const w = world({ kind: 'Password', name: 'pw' });
    const r = w.reconciler();
    await w.settle(r);
    const first = w.secret('password');
    assert.equal(first.length, 24);
    assert.equal([...first].filter((c) => /[0-9]/.test(c)).length, 6);
    assert.equal([...first].filter((c) => !/[A-Za-z0-9]/.test(c)).length, 6);
    assert.equal(new Set(first).size, 24, 'no repeats (allowRepeat false)');
    w.vault.now += 30_000;
    await w.settle(r);
    assert.equal(w.secret('password'), first, 'not regenerated before the refresh is due');
    // The refresh is due at 1m ± 10% (the uid's jitter, docs/decisions/refresh-jitter.md): 70 s is past it.
    w.vault.now += 40_000;
    await w.settle(r);
    assert.notEqual(w.secret('password'), first, 'regenerated at the refresh, as ESO');
  });

  void test('refreshInterval 0: generated once, as ESO', async () => {
    const w = world({ kind: 'Password', name: 'pw' }, '0');
    const r = w.reconciler();
    await w.settle(r);
    const first = w.secret('password');
    w.vault.now += 3600_000;
    await w.settle(r);
    assert.equal(w.secret('password'), first);
  });
});

for (const ref of [
  { kind: 'VaultDynamicSecret', name: 'pg' },
  { kind: 'ClusterGenerator', name: 'pg-cluster' },
]) {
  void describe(`ExternalSecret with an unchanged ESO VaultDynamicSecret generator (${ref.kind})`, () => {
    void test('over several max TTLs: renewed not re-minted at each refresh, replaced before the max TTL, the replaced lease revoked, never a dead credential', async () => {
      const w = world(ref);
      const r = w.reconciler();
      await w.settle(r);
      assert.equal(w.vault.issued.length, 1);
      const end = w.vault.now + 3 * MAX_S * 1000;
      let dead = 0;
      while (w.vault.now < end) {
        w.vault.now += 5_000;
        await w.settle(r);
        if (!w.vault.alive(w.secret('password'))) dead++;
      }
      // ESO mints at every refresh: 15 credentials over 15 min with refreshInterval 1m. Here: one per
      // (max TTL - 2 min minimum validity) = 3 min, plus the first.
      assert.ok(w.vault.issued.length <= 6, `minted ${w.vault.issued.length}`);
      assert.ok(w.vault.issued.length >= 5, `replaced before each max TTL: minted ${w.vault.issued.length}`);
      assert.ok(w.vault.renewed.length >= 6, `renewed ${w.vault.renewed.length}`);
      assert.equal(dead, 0, 'the Secret never held a dead credential');
      // Replaced leases are revoked (the last one may still be in its grace), the current one is not.
      const replaced = w.vault.issued.slice(0, -1);
      assert.ok(
        w.vault.revoked.every((id) => replaced.includes(id)),
        `revoked ${w.vault.revoked.join(',')}`,
      );
      assert.ok(
        replaced.slice(0, -1).every((id) => w.vault.revoked.includes(id)),
        `revoked ${w.vault.revoked.join(',')}`,
      );
      const current = w.vault.issued.at(-1)!;
      // Nothing of a credential in status, Events or logs; the lease state is in the state Secret's annotation.
      assert.ok(!JSON.stringify(w.es().status).includes('canary'));
      assert.ok(!JSON.stringify(w.kube.events).includes('canary'));
      assert.ok(!w.kube.logLines.join('\n').includes('canary'));
      const state = w.kube.getObj<KubeObject>(SECRETS, `${NS}/${stateSecretName(w.es(), 0)}`)!;
      assert.ok(state.metadata.annotations?.['vaultgate.io/generator-lease']?.includes(current));
      assert.equal(state.metadata.ownerReferences?.[0]?.uid, w.es().metadata.uid);
    });

    void test('woken only when it asks (refreshInterval 1h): every credential it mints is renewed before it ends', async () => {
      // A controller's queue: the next pass comes when the last one asked, or at the refresh. Found on real
      // pods (test/real/dynamic-secret-pods.test.ts): the sync that minted a replacement asked for nothing,
      // so the new lease went unrenewed and died 60 s later under the pods.
      const w = world(ref, '1h');
      const r = w.reconciler();
      const end = w.vault.now + 3 * MAX_S * 1000;
      let dead = 0;
      while (w.vault.now < end) {
        const res = await w.kube.reconcile(r, `${NS}/app`);
        const wait = Math.max(1_000, Math.min(res.requeueAfterMs ?? 3_600_000, 3_600_000));
        // Alive all the way to the next pass: look at each second in between.
        for (let t = 0; t < wait && w.vault.now < end; t += 1_000) {
          w.vault.now += 1_000;
          if (!w.vault.alive(w.secret('password'))) dead++;
        }
      }
      assert.ok(w.vault.issued.length >= 4, `replaced before each max TTL: minted ${w.vault.issued.length}`);
      assert.equal(dead, 0, 'seconds the Secret held a dead credential');
    });

    void test('a restarted controller (new login) re-mints nothing; a forced sync returns the kept credential', async () => {
      const w = world(ref);
      await w.settle(w.reconciler());
      const pw = w.secret('password');
      const restarted = w.reconciler();
      w.vault.now += 47_000; // past 77 % of the lease: renewal due, whatever the jitter
      await w.settle(restarted);
      w.vault.now += 20_000; // the refresh is due (1m ± 10% jitter: 67 s is past it): ESO would mint again
      await w.settle(restarted);
      assert.equal(w.vault.issued.length, 1);
      assert.equal(w.secret('password'), pw);
      assert.ok(w.vault.renewed.length >= 1, 'the lease was renewed when due');
    });
  });
}

// The lease policy an ESO manifest gets (it states none), through the VaultDynamicSecret kind's planner.
void describe('planner rows: GENERATOR_LEASE_POLICY through planLifecycle', () => {
  const T0 = Date.parse('2026-12-03T08:00:00Z');
  const lease = { id: 'L1', durationSeconds: 60, renewable: true, issuedAt: T0, expiresAt: T0 + 60_000, source: 's' };
  const knownMax = { ...lease, maxExpiresAt: T0 + 600_000 };
  const at = (s: number, extra: Partial<LifecycleObservation> = {}): LifecyclePlan =>
    planLifecycle({
      now: T0 + s * 1000,
      deleting: false,
      policy: GENERATOR_LEASE_POLICY,
      source: 's',
      lease,
      previous: [],
      target: 'current',
      copyLeaseId: 'L1',
      rollout: 'settled',
      ...extra,
    });
  const rows: Array<[string, LifecyclePlan, string]> = [
    // Max TTL unknown (ESO's manifest states none): a renewal asking 60 s + 2 min shows it, and it may be as
    // near as the lease's end, so the first renewal comes at a tenth of the lease, not at 67 %.
    ['max TTL unknown, 5 s after issue: nothing yet', at(5), 'noop'],
    ['max TTL unknown, 7 s after issue: renew, to learn it 2 min ahead', at(7), 'renew'],
    ['max TTL known (10 min), before 67 % of the lease: nothing', at(30, { lease: knownMax }), 'noop'],
    ['past 77 %: renew (the refresh does not matter)', at(47), 'renew'],
    [
      'a capped renewal showed the max TTL, 2 min left: replace',
      at(121, { lease: { ...lease, renewedAt: T0 + 100_000, expiresAt: T0 + 240_000, maxExpiresAt: T0 + 240_000 } }),
      'mint',
    ],
    ['the spec changed (path, provider, parameters): replace', at(10, { source: 'other' }), 'mint'],
    [
      'no state Secret (first sync, or it was deleted): mint',
      at(0, { lease: undefined, copyLeaseId: undefined, target: 'missing' }),
      'mint',
    ],
    ['the lease expired unrenewed: replace (LeaseLost)', at(61), 'mint'],
  ];
  for (const [name, plan, main] of rows) void test(name, () => assert.equal(plan.main.type, main));

  void test('renewal asks the lease plus the 2 min minimum validity; the next look is within the renewal window', () => {
    const renew = at(47).main as { incrementSeconds: number };
    assert.equal(renew.incrementSeconds, 180);
    const wait = at(30, { lease: knownMax }).requeueAfterMs!;
    assert.ok(wait >= 10_000 && wait <= 16_300, `${wait}`);
  });

  void test('a replaced lease is revoked 1 min after its replacement, not before', () => {
    const prev = { id: 'L0', replacedAt: T0, expiresAt: T0 + 100_000, durationSeconds: 60, rolloutSettledAt: T0 };
    assert.deepEqual(at(59, { previous: [prev] }).previous, []);
    assert.deepEqual(
      at(61, { previous: [prev] }).previous.map((p) => [p.id, p.op]),
      [['L0', 'revoke']],
    );
  });
});

// Deleting the ExternalSecret, or removing its generatorRef, revokes the generator's leases (ESO's Cleanup
// does nothing: the credential lives out its lease). A finalizer holds the deletion until then, never for
// long when Vault is gone.
void describe('ExternalSecret with a VaultDynamicSecret generator: deletion and a removed generatorRef revoke its leases', () => {
  const finalizers = (w: ReturnType<typeof world>): string[] => w.es()?.metadata.finalizers ?? [];
  const stateOf = (w: ReturnType<typeof world>, uid: string): KubeObject | undefined =>
    w.kube.getObj<KubeObject>(SECRETS, `${NS}/esgen-${uid}-0`);

  void test('the finalizer is on before the first credential is minted; a Password-only ExternalSecret gets none', async () => {
    const w = world({ kind: 'VaultDynamicSecret', name: 'pg' });
    await w.kube.reconcile(w.reconciler(), `${NS}/app`);
    assert.deepEqual(finalizers(w), [GENERATOR_FINALIZER]);
    assert.equal(w.vault.issued.length, 1);
    const p = world({ kind: 'Password', name: 'pw' });
    await p.settle(p.reconciler());
    assert.deepEqual(finalizers(p), []);
    assert.ok(p.secret('password'));
  });

  void test('deleting it revokes the current lease and a replaced one still in its grace; then it is gone', async () => {
    const w = world({ kind: 'ClusterGenerator', name: 'pg-cluster' });
    const r = w.reconciler();
    await w.settle(r);
    // To the first replacement (max TTL 5 min less the 2 min minimum validity), within the replaced one's grace.
    while (w.vault.issued.length < 2) {
      w.vault.now += 5_000;
      await w.settle(r);
    }
    assert.deepEqual(w.vault.revoked, [], 'the replaced lease is in its grace');
    const uid = w.es().metadata.uid!;
    w.kube.remove(EXTERNAL_SECRETS, `${NS}/app`);
    assert.ok(w.es()?.metadata.deletionTimestamp, 'held by the finalizer');
    await w.kube.reconcile(r, `${NS}/app`);
    assert.deepEqual([...w.vault.revoked].sort(), [...w.vault.issued].sort());
    assert.equal(w.vault.leases.size, 0, 'no lease of it is left in Vault');
    assert.equal(w.es(), undefined, 'deleted once revoked');
    assert.equal(stateOf(w, uid), undefined, 'its state Secret garbage-collected');
  });

  void test('safe twice: a crash before the finalizer was removed revokes again (already gone: fine), then lets it go', async () => {
    const w = world({ kind: 'VaultDynamicSecret', name: 'pg' });
    const r = w.reconciler();
    await w.settle(r);
    w.kube.remove(EXTERNAL_SECRETS, `${NS}/app`);
    const patch = w.kube.patch.bind(w.kube);
    w.kube.patch = () => Promise.reject(new Error('controller killed'));
    await assert.rejects(w.kube.reconcile(r, `${NS}/app`), /controller killed/);
    w.kube.patch = patch;
    assert.equal(w.vault.revoked.length, 1);
    assert.ok(w.es(), 'still held');
    await w.kube.reconcile(w.reconciler(), `${NS}/app`); // a restarted controller
    assert.equal(w.es(), undefined);
    assert.equal(w.vault.issued.length, 1, 'nothing minted while deleting');
  });

  void test('the generator deleted first (a namespace going away): revoked with the provider kept in the state Secret', async () => {
    const w = world({ kind: 'VaultDynamicSecret', name: 'pg' });
    const r = w.reconciler();
    await w.settle(r);
    w.kube.remove(VAULT_DYNAMIC_SECRET_GENERATORS, `${NS}/pg`);
    w.kube.remove(EXTERNAL_SECRETS, `${NS}/app`);
    await w.kube.reconcile(r, `${NS}/app`);
    assert.deepEqual(w.vault.revoked, w.vault.issued);
    assert.equal(w.es(), undefined);
  });

  void test('Vault gone: the deletion waits while retries last, then goes on with a Warning naming the state Secret', async () => {
    const w = world({ kind: 'VaultDynamicSecret', name: 'pg' });
    const r = w.reconciler();
    await w.settle(r);
    const uid = w.es().metadata.uid!;
    w.vault.revokeDown = true;
    w.kube.remove(EXTERNAL_SECRETS, `${NS}/app`);
    await assert.rejects(w.kube.reconcile(r, `${NS}/app`), /Vault unreachable/);
    await assert.rejects(r(`${NS}/app`, { ...w.kube.context(), retries: GENERATOR_REVOKE_ATTEMPTS - 2 }));
    assert.ok(w.es(), 'held while retries last');
    assert.equal(w.kube.events.filter((e) => e.reason === 'LeaseNotRevoked').length, 0, 'no Warning while retrying');
    await r(`${NS}/app`, { ...w.kube.context(), retries: GENERATOR_REVOKE_ATTEMPTS - 1 });
    assert.equal(w.es(), undefined, 'never held for ever');
    const warning = w.kube.events.find((e) => e.reason === 'LeaseNotRevoked');
    assert.equal(warning?.type, 'Warning');
    assert.match(warning.note, new RegExp(`lease\\(s\\) of generator state esgen-${uid}-0 after 14 attempts`));
    assert.match(warning.note, /VaultUnavailable.*expire unrenewed/);
  });

  void test('the ServiceAccount gone with its namespace (a 404 at login): retried, not taken for the ExternalSecret gone', async () => {
    const w = world({ kind: 'VaultDynamicSecret', name: 'pg' });
    const r = w.reconciler();
    await w.settle(r);
    w.vault.loginFails = new KubeApiError(404, 'NotFound', 'serviceaccounts "app" not found');
    w.kube.remove(EXTERNAL_SECRETS, `${NS}/app`);
    await assert.rejects(w.kube.reconcile(r, `${NS}/app`), /serviceaccounts "app" not found/);
    assert.ok(w.es(), 'held, and retried with backoff');
    w.vault.loginFails = undefined;
    await w.kube.reconcile(r, `${NS}/app`);
    assert.deepEqual(w.vault.revoked, w.vault.issued);
    assert.equal(w.es(), undefined);
  });

  void test('the generatorRef removed: the lease revoked after the sync wrote the target without it, its state deleted, the finalizer off', async () => {
    const w = world({ kind: 'VaultDynamicSecret', name: 'pg' });
    const r = w.reconciler();
    await w.settle(r);
    const uid = w.es().metadata.uid!;
    const cur = w.es() as KubeObject & { spec: Record<string, unknown> };
    w.kube.put(EXTERNAL_SECRETS, {
      ...cur,
      spec: {
        ...cur.spec,
        dataFrom: [{ sourceRef: { generatorRef: { apiVersion: API, kind: 'Password', name: 'pw' } } }],
      },
    });
    await w.settle(r);
    assert.equal(w.secret('username'), '', 'the target no longer holds the credential');
    assert.equal(w.secret('password').length, 24, "the Password generator's key");
    assert.deepEqual(w.vault.revoked, w.vault.issued);
    assert.equal(stateOf(w, uid), undefined, 'state Secret deleted');
    assert.deepEqual(finalizers(w), [], 'finalizer removed: nothing left to revoke');
    assert.ok(w.es(), 'the ExternalSecret stays');
  });

  void test('refused by admission meanwhile: its lease is neither revoked nor renewed by the refusal', async () => {
    const w = world({ kind: 'VaultDynamicSecret', name: 'pg' });
    const r = w.reconciler();
    await w.settle(r);
    const cur = w.es() as KubeObject & { spec: Record<string, unknown> };
    // dataFrom[0] now reads a generator kind vaultgate refuses (eso.es.generator-ref).
    w.kube.put(EXTERNAL_SECRETS, {
      ...cur,
      spec: {
        ...cur.spec,
        dataFrom: [{ sourceRef: { generatorRef: { apiVersion: API, kind: 'ECRAuthorizationToken', name: 'x' } } }],
      },
    });
    await w.settle(r).catch(() => undefined);
    assert.deepEqual(w.vault.revoked, []);
    assert.deepEqual(finalizers(w), [GENERATOR_FINALIZER], 'kept: deleting it later still revokes');
  });
});
