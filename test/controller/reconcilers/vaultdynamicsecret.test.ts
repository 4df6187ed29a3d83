// The VaultDynamicSecret reconciler against the in-memory Kubernetes and a Vault that keeps leases
// (issue, renew capped at a max TTL, revoke, lookup): what a user would notice across a lifecycle. A
// second reconciler instance with a fresh login stands for a restarted controller.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SECRETS } from '../../../kube/resources.ts';
import type { KubeObject } from '../../../kube/objects.ts';
import { SECRET_STORES, VAULT_DYNAMIC_SECRETS } from '../../../schemas/resources.ts';
import { VaultError } from '../../../vault/errors.ts';
import type { VaultRequest, VaultRequester } from '../../../vault/types.ts';
import {
  copyName,
  createLifecycleMetrics,
  createVaultDynamicSecretReconciler,
  type RolloutGate,
  type VaultDynamicSecretObject,
} from '../../../controller/reconcilers/vaultdynamicsecret.ts';
import type { StoreConnector } from '../../../controller/reconcilers/store-connector.ts';
import type { RolloutState } from '../../../controller/reconcilers/vaultdynamicsecret-plan.ts';
import { FakeKube } from './harness.ts';
import { selfSignedPem } from '../../harness/pki.ts';

const NS = 'team-a';
const LEASE_S = 60;
const MAX_S = 600;

/**
 * Vault's database engine as far as the lifecycle sees it, with its token store: each login's token lives
 * tokenTtlS, renewed (by the token cache) while its process runs, i.e. while it is the session's token;
 * when a token ends, Vault revokes the leases it minted (hashicorp/vault#4592).
 */
class LeaseVault {
  now = Date.parse('2026-12-03T08:00:00Z');
  issued: string[] = [];
  renewed: string[] = [];
  revoked: string[] = [];
  tokenTtlS = 3600;
  /**
   * PEMs the PKI mount issues in turn (pki/issue/web; the last one again after that), and whether a revoke
   * finds the certificate already expired. Each must end later than the one before: one PEM issued again
   * would be due for renewal as soon as issued.
   */
  certificates: string[] = [];
  certificateExpiredAtRevoke = false;
  readonly tokens = new Map<string, number>();
  readonly leases = new Map<string, { issue: number; expire: number; max: number; token: string }>();
  password(id: string): string {
    return `pw-${id.split('/').pop()}-canary`;
  }
  session(accessor: string): VaultRequester {
    return { request: <T>(req: VaultRequest) => Promise.resolve(this.handle(req, accessor) as T) };
  }
  private handle(req: VaultRequest, accessor: string): unknown {
    const body = req.body as { lease_id?: string; increment?: number; accessor?: string } | undefined;
    // The session's own token is renewed by its process; the others live out their TTL.
    if (!this.tokens.has(accessor) || req.path === 'auth/token/lookup-self')
      this.tokens.set(accessor, Math.max(this.tokens.get(accessor) ?? 0, this.now + this.tokenTtlS * 1000));
    for (const [id, l] of this.leases) if ((this.tokens.get(l.token) ?? 0) <= this.now) this.leases.delete(id);
    if (req.path === 'database/creds/app') {
      const id = `database/creds/app/L${this.issued.length + 1}`;
      this.issued.push(id);
      this.leases.set(id, {
        issue: this.now,
        expire: this.now + LEASE_S * 1000,
        max: this.now + MAX_S * 1000,
        token: accessor,
      });
      return {
        lease_id: id,
        lease_duration: LEASE_S,
        renewable: true,
        data: { username: `u-${this.issued.length}`, password: this.password(id) },
      };
    }
    if (req.path === 'pki/issue/web') {
      const serial = `0${this.issued.length + 1}:aa`;
      this.issued.push(serial);
      return {
        data: {
          serial_number: serial,
          certificate: this.certificates[Math.min(this.issued.length, this.certificates.length) - 1],
          private_key: 'key-canary',
          issuing_ca: '',
        },
      };
    }
    if (req.path === 'pki/revoke') {
      this.revoked.push((req.body as { serial_number: string }).serial_number);
      // OpenBao 2.7.2 for an expired certificate: 200, no revocation time, only a warning (vault/pki.ts).
      return this.certificateExpiredAtRevoke
        ? { data: null, warnings: ['certificate already expired; refusing to add to CRL'] }
        : { data: { revocation_time: Math.floor(this.now / 1000) } };
    }
    if (req.path === 'auth/token/lookup-self')
      return { data: { accessor, expire_time: new Date(this.tokens.get(accessor)!).toISOString(), renewable: true } };
    if (req.path === 'auth/token/lookup-accessor') {
      const end = this.tokens.get(body?.accessor ?? '');
      if (end === undefined || end <= this.now)
        throw new VaultError('invalid', `${req.operation}: invalid accessor`, 400, req.operation);
      return { data: { accessor: body!.accessor, expire_time: new Date(end).toISOString(), renewable: true } };
    }
    const lease = this.leases.get(body?.lease_id ?? '');
    if (req.path === 'sys/leases/revoke') {
      this.revoked.push(body!.lease_id!);
      this.leases.delete(body!.lease_id!);
      return undefined;
    }
    if (!lease || lease.expire <= this.now)
      throw new VaultError('invalid', `${req.operation}: lease not found`, 400, req.operation);
    if (req.path === 'sys/leases/renew') {
      this.renewed.push(body!.lease_id!);
      lease.expire = Math.min(lease.max, this.now + (body!.increment ?? LEASE_S) * 1000);
      return {
        lease_id: body!.lease_id,
        lease_duration: Math.round((lease.expire - this.now) / 1000),
        renewable: true,
      };
    }
    if (req.path === 'sys/leases/lookup')
      return {
        data: {
          issue_time: new Date(lease.issue).toISOString(),
          expire_time: new Date(lease.expire).toISOString(),
          renewable: true,
        },
      };
    throw new Error(`unexpected ${req.path}`);
  }
}

function world(gateState: { value: RolloutState } = { value: 'settled' }) {
  const kube = new FakeKube();
  kube.store.register({
    group: 'vaultgate.io',
    version: 'v1alpha1',
    plural: 'vaultdynamicsecrets',
    kind: 'VaultDynamicSecret',
    namespaced: true,
    statusSubresource: true,
    custom: true,
    singular: 'vaultdynamicsecret',
    shortNames: [],
  });
  const vault = new LeaseVault();
  kube.put(SECRET_STORES, {
    metadata: { name: 'vault', namespace: NS },
    spec: {
      provider: {
        vault: {
          server: 'https://vault.example:8200',
          path: 'secret',
          auth: { tokenSecretRef: { name: 't', key: 'token' } },
        },
      },
    },
  });
  kube.put(VAULT_DYNAMIC_SECRETS, {
    metadata: { name: 'app-db', namespace: NS },
    spec: {
      storeRef: { name: 'vault' },
      path: 'database/creds/app',
      target: { name: 'app-db' },
      leasePolicy: { minValidity: '2m' },
      revocation: { grace: '30s' },
      rolloutRestartTargets: [{ kind: 'Deployment', name: 'api' }],
    },
  });
  kube.cacheOf(SECRETS);
  const gate: RolloutGate = { settled: () => Promise.resolve(gateState.value) };
  let logins = 0;
  const reconciler = () => {
    const accessor = `acc-${++logins}`; // a restarted controller logs in afresh
    const connector = {
      connect: () =>
        Promise.resolve({
          session: { ...vault.session(accessor), key: 'k', token: () => Promise.resolve('t'), policies: () => [] },
        }),
    } as unknown as StoreConnector;
    return createVaultDynamicSecretReconciler({
      connector,
      rollouts: gate,
      metrics: createLifecycleMetrics(),
      controllerClass: '',
      namePrefix: 'vaultgate',
      now: () => vault.now,
    });
  };
  const key = `${NS}/app-db`;
  const vds = () => kube.getObj<VaultDynamicSecretObject>(VAULT_DYNAMIC_SECRETS, key)!;
  const secret = () => kube.getObj<KubeObject & { data?: Record<string, string> }>(SECRETS, `${NS}/app-db`);
  /** Reconcile until the controller has nothing left to do now (a requeue of more than 1 s ends it). */
  const settle = async (r: ReturnType<typeof reconciler>): Promise<void> => {
    for (let i = 0; i < 6; i++) {
      const res = await kube.reconcile(r, key);
      if (!res.requeueAfterMs || res.requeueAfterMs > 1_000) return;
    }
  };
  return { kube, vault, reconciler, vds, secret, settle, gateState, key };
}

const password = (s: { data?: Record<string, string> } | undefined): string =>
  Buffer.from(s?.data?.password ?? '', 'base64').toString('utf8');

void describe('VaultDynamicSecret reconciler', () => {
  void test('mints once, writes the Secret and the copy, and keeps the credential out of status', async () => {
    const w = world();
    await w.settle(w.reconciler());
    assert.equal(w.vault.issued.length, 1);
    assert.equal(password(w.secret()), w.vault.password('database/creds/app/L1'));
    assert.ok(w.kube.getObj(SECRETS, `${NS}/${copyName(w.vds())}`), 'the controller keeps a copy');
    const s = w.vds().status!;
    assert.equal(s.lease?.id, 'database/creds/app/L1');
    assert.equal(s.lease?.tokenAccessor, 'acc-1');
    assert.ok(!JSON.stringify(s).includes('canary'), 'no credential in status');
    assert.ok(!JSON.stringify(w.kube.events).includes('canary') && !w.kube.logLines.join('\n').includes('canary'));
  });

  void test('a restarted controller (new process, new login) re-mints nothing and renews the same lease when due', async () => {
    const w = world();
    await w.settle(w.reconciler());
    const restarted = w.reconciler();
    await w.settle(restarted);
    assert.equal(w.vault.issued.length, 1, 'no mint because the controller restarted or logged in again');
    w.vault.now += 50_000;
    await w.settle(restarted);
    assert.deepEqual(w.vault.renewed, ['database/creds/app/L1']);
    assert.equal(w.vault.issued.length, 1);
  });

  void test('a deleted Secret is restored from the copy without minting', async () => {
    const w = world();
    await w.settle(w.reconciler());
    const before = password(w.secret());
    w.kube.remove(SECRETS, `${NS}/app-db`);
    await w.settle(w.reconciler());
    assert.equal(password(w.secret()), before);
    assert.equal(w.vault.issued.length, 1);
  });

  void test('near the max TTL: rotates, keeps the replaced lease (renewed) until the rollout settled plus grace, then revokes only it', async () => {
    const gate = { value: 'rolling' as RolloutState };
    const w = world(gate);
    const r = w.reconciler();
    await w.settle(r);
    // Renew every ~45 s until Vault caps a renewal and the max TTL comes within minValidity.
    for (let i = 0; i < 20 && w.vault.issued.length < 2; i++) {
      w.vault.now += 45_000;
      await w.settle(r);
    }
    assert.equal(w.vault.issued.length, 2, 'one replacement');
    assert.ok(
      w.vault.now < Date.parse('2026-12-03T08:00:00Z') + MAX_S * 1000 - 60_000,
      'rotated with time left for the rollout',
    );
    assert.equal(password(w.secret()), w.vault.password('database/creds/app/L2'));
    assert.deepEqual(
      w.vds().status?.previous?.map((p) => p.id),
      ['database/creds/app/L1'],
    );
    // Rolling: the old credential is kept alive, never revoked.
    w.vault.now += 45_000;
    await w.settle(r);
    assert.deepEqual(w.vault.revoked, []);
    assert.ok(w.vault.renewed.filter((id) => id.endsWith('L1')).length > 0);
    gate.value = 'settled';
    await w.settle(r);
    assert.deepEqual(w.vault.revoked, [], 'the grace runs from the settled rollout');
    w.vault.now += 31_000;
    await w.settle(r);
    assert.deepEqual(w.vault.revoked, ['database/creds/app/L1'], 'the replaced lease, and only it');
    assert.equal(w.vds().status?.previous, undefined);
  });

  // Seen on the real apiserver (test/real/dynamic-secret-pki.test.ts): when the revocation was the pass's only
  // change, the status write was skipped as unchanged, so the revoked lease stayed in status.previous and was
  // revoked again on every pass (each an Event, a metric and an audit record) until the next rotation.
  void test('a revocation that is the only change leaves status: the replaced lease is gone from it and revoked once', async () => {
    const w = world();
    const r = w.reconciler();
    await w.settle(r);
    for (let i = 0; i < 20 && w.vault.issued.length < 2; i++) {
      w.vault.now += 45_000;
      await w.settle(r);
    }
    assert.equal(w.vault.issued.length, 2);
    assert.ok(w.vds().status?.previous?.[0]?.rolloutSettledAt, 'the rollout settled at once');
    w.vault.now += 31_000; // the grace (30 s) over; nothing else due
    await w.settle(r);
    assert.deepEqual(w.vault.revoked, ['database/creds/app/L1']);
    assert.equal(w.vds().status?.previous, undefined, 'the revoked lease left status');
    w.vault.now += 1_000;
    await w.settle(r);
    assert.deepEqual(w.vault.revoked, ['database/creds/app/L1'], 'revoked once');
    assert.equal(w.kube.events.filter((e) => e.reason === 'PreviousLeaseRevoked').length, 1);
  });

  // Seen on the real apiserver (test/real/dynamic-secret-pki.test.ts): the Secrets' watch events run a pass
  // before the rotation's status write reaches the cache; that pass took its own new credential for one
  // minted before a crash ("Adopted", replacedAt reset, an adopt counted, Vault asked again).
  void test('right after a rotation, a cache that has not yet seen the status write adopts nothing: the object itself is read', async () => {
    const w = world();
    const r = w.reconciler();
    await w.settle(r);
    const before = structuredClone(w.vds());
    for (let i = 0; i < 20 && w.vault.issued.length < 2; i++) {
      w.vault.now += 45_000;
      await w.settle(r);
    }
    assert.equal(w.vault.issued.length, 2);
    const fresh = w.vds();
    const stale = structuredClone(fresh);
    stale.metadata.resourceVersion = before.metadata.resourceVersion;
    stale.status = before.status; // the first lease as current, nothing replaced
    w.kube.cacheOf(VAULT_DYNAMIC_SECRETS).upsert(stale);
    const res = await w.kube.reconcile(r, w.key);
    assert.equal(res.requeueAfterMs, 1_000, 'looked again once the cache has caught up');
    assert.deepEqual(w.vds().status, fresh.status, 'status as the rotation wrote it');
    assert.deepEqual(
      w.vds().status?.previous?.map((p) => p.reason),
      ['MaxTTL'],
      'the replaced lease keeps why it was replaced',
    );
    assert.equal(w.vault.issued.length, 2);
  });

  void test("a credential adopted after a crash keeps its minting token's end (from the copy) and is replaced before that token ends, saying so", async () => {
    const w = world();
    w.vault.tokenTtlS = 300; // a non-periodic token of 5 min; the lease's max TTL is 10 min
    await w.settle(w.reconciler());
    // The crash came after the copy was written and before status: status knows no lease.
    const o = w.vds();
    w.kube.put(VAULT_DYNAMIC_SECRETS, { ...o, status: {} });
    const restarted = w.reconciler();
    await w.settle(restarted);
    assert.equal(w.vault.issued.length, 1, 'adopted, not re-minted');
    assert.equal(w.vds().status?.lease?.tokenAccessor, 'acc-1');
    const bound = w.vds().status?.conditions?.find((c) => c.type === 'TokenBound');
    assert.equal(bound?.status, 'False', JSON.stringify(w.vds().status?.conditions));
    assert.match(bound.message, /ends at .*before the credential's max TTL|ends at .*Vault revokes the lease with it/);
    // Renew along; the replacement comes minValidity (2 min) before the token's end, never after it.
    const tokenEnd = Date.parse('2026-12-03T08:00:00Z') + 300_000;
    for (let i = 0; i < 30 && w.vault.issued.length < 2; i++) {
      w.vault.now += 10_000;
      await w.settle(restarted);
    }
    assert.equal(w.vault.issued.length, 2, 'replaced once');
    assert.ok(w.vault.now <= tokenEnd - 100_000, `replaced ${(tokenEnd - w.vault.now) / 1000}s before the token's end`);
    assert.equal(password(w.secret()), w.vault.password('database/creds/app/L2'));
    assert.ok(
      w.kube.events.some((e) => /the Vault token that minted it ends soon/.test(JSON.stringify(e))),
      `the Event says why: ${JSON.stringify(w.kube.events.map((e) => e.note))}`,
    );
    // The new credential's token is the running process's, renewed: nothing is replaced past its first
    // end, and the condition says the token is not periodic.
    for (let i = 0; i < 40; i++) {
      w.vault.now += 10_000;
      await w.settle(restarted);
    }
    assert.equal(w.vault.issued.length, 2, 'no rotation for a token the controller renews');
    assert.equal(w.vds().status?.conditions?.find((c) => c.type === 'TokenBound')?.reason, 'TokenNotPeriodic');
  });

  void test('deleting the object revokes its lease', async () => {
    const w = world();
    const r = w.reconciler();
    await w.settle(r);
    await w.kube.delete(VAULT_DYNAMIC_SECRETS, 'app-db', NS);
    await w.kube.reconcile(r, w.key);
    assert.deepEqual(w.vault.revoked, ['database/creds/app/L1']);
    assert.equal(w.kube.getObj(VAULT_DYNAMIC_SECRETS, w.key), undefined, 'the finalizer was released');
  });

  void test('a replaced certificate is revoked by serial after its rollout; one Vault finds already expired is reported as expired, not revoked', async () => {
    const w = world();
    w.vault.certificates = [
      selfSignedPem({ subject: '/CN=app', days: 1 }),
      selfSignedPem({ subject: '/CN=app', days: 30 }),
    ];
    w.vault.now = Date.now(); // the certificates' own validity: one day, then 30 days from now
    const o = w.vds();
    w.kube.put(VAULT_DYNAMIC_SECRETS, {
      ...o,
      spec: { ...o.spec, credentialType: 'Certificate', path: 'pki/issue/web', method: 'PUT' },
    });
    const r = w.reconciler();
    await w.settle(r);
    assert.deepEqual(w.vault.issued, ['01:aa']);
    for (let i = 0; i < 30 && w.vault.issued.length < 2; i++) {
      w.vault.now += 3_600_000;
      await w.settle(r);
    }
    assert.deepEqual(w.vault.issued, ['01:aa', '02:aa'], 're-issued before notAfter');
    w.vault.certificateExpiredAtRevoke = true;
    w.vault.now += 31_000; // the grace (30 s) after the settled rollout
    await w.settle(r);
    assert.deepEqual(w.vault.revoked, ['01:aa'], 'the replaced serial, and only it');
    const notes = w.kube.events.filter((e) => e.reason === 'PreviousLeaseRevoked').map((e) => e.note);
    assert.deepEqual(notes, [
      'the replaced certificate 01:aa had already expired: nothing left to revoke (its rollout completed)',
    ]);
    assert.equal(w.vds().status?.previous, undefined, 'done with it: not retried');
    assert.ok(!JSON.stringify(w.kube.events).includes('key-canary'));
  });
});
