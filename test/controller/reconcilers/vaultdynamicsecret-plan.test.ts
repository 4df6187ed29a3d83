// The lease lifecycle planner, as a table: each row is a situation a controller can find itself in (often
// right after a restart) and the one step it must take. The rows that guard against other operators' bugs:
// a restart or a new login never re-mints (VSO #285, #734), a lease whose minting token ends is replaced
// before Vault revokes it with the token (VSO #436, ESO #2198), a replaced credential is revoked only after
// its rollout plus grace and is renewed meanwhile (hashicorp/vault#22297), a deleted Secret is restored
// without minting (VSO #935).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  certificateRenewAt,
  inheritedMaxTTL,
  MAX_PREVIOUS,
  mintingTokenLookDue,
  planDeleting,
  planLifecycle,
  planPrevious,
  planRenewal,
  planReplacement,
  renewalTime,
  renewedLease,
  tokenConditionAtMint,
  replacedLease,
  type LeasePolicy,
  type Implied,
  type LeaseState,
  type LifecycleObservation,
  type LifecyclePlan,
  type PreviousLease,
} from '../../../controller/reconcilers/vaultdynamicsecret-plan.ts';

const S = 1000;
const M = 60 * S;
const T0 = Date.parse('2026-12-03T08:00:00Z');
const policy: LeasePolicy = {
  renewAtPercent: 67,
  jitterPercent: 10,
  minValidityMs: 2 * M,
  onDelete: true,
  previous: 'AfterRollout',
  graceMs: 30 * S,
};
/** A 60 s lease issued at T0 whose max TTL (an hour) is known, minted by a token that lives an hour. */
const lease = (o: Partial<LeaseState> = {}): LeaseState => ({
  id: 'database/creds/app/AAA',
  durationSeconds: 60,
  renewable: true,
  issuedAt: T0,
  expiresAt: T0 + 60 * S,
  maxExpiresAt: T0 + 60 * M,
  tokenAccessor: 'acc-1',
  tokenExpiresAt: T0 + 60 * M,
  source: 'src-1',
  ...o,
});
const prev = (o: Partial<PreviousLease> = {}): PreviousLease => ({
  id: 'database/creds/app/OLD',
  replacedAt: T0,
  expiresAt: T0 + 3 * M,
  durationSeconds: 60,
  ...o,
});
const obs = (o: Partial<LifecycleObservation> = {}): LifecycleObservation => ({
  now: T0 + 10 * S,
  deleting: false,
  policy,
  source: 'src-1',
  lease: lease(),
  previous: [],
  target: 'current',
  copyLeaseId: 'database/creds/app/AAA',
  ...o,
});

/** A 60 s certificate (ttl 60s), notBefore T0, renewed at 2/3 of its lifetime, minValidity 10 s. */
const certPolicy: LeasePolicy = { ...policy, minValidityMs: 10 * S, jitterPercent: 5, graceMs: 5 * S };
const cert = (o: Partial<LeaseState> = {}): LeaseState => ({
  id: '3a:5b:7c',
  certificate: true,
  durationSeconds: 60,
  renewable: false,
  issuedAt: T0,
  expiresAt: T0 + 60 * S,
  source: 'src-1',
  ...o,
});
const certObs = (o: Partial<LifecycleObservation> = {}): LifecycleObservation =>
  obs({ policy: certPolicy, lease: cert(), copyLeaseId: '3a:5b:7c', ...o });
const oldCert = (o: Partial<PreviousLease> = {}): PreviousLease => ({
  id: '11:22:33',
  replacedAt: T0,
  expiresAt: T0 + 20 * S,
  certificate: true,
  mount: 'pki',
  ...o,
});

/**
 * The kubernetes secrets engine's token: OpenBao leases it for its TokenRequest's 600 s (the apiserver's
 * minimum) as not renewable; minValidity 570 s rotates it 30 s after issue (test/real/dynamic-secret-kubernetes).
 */
const k8sPolicy: LeasePolicy = { ...policy, minValidityMs: 570 * S, graceMs: 10 * S };
const k8sToken = (o: Partial<LeaseState> = {}): LeaseState =>
  lease({ id: 'kubernetes/creds/app/KKK', durationSeconds: 600, renewable: false, expiresAt: T0 + 600 * S, ...o });
const k8sObs = (o: Partial<LifecycleObservation> = {}): LifecycleObservation =>
  obs({ policy: k8sPolicy, lease: k8sToken(), copyLeaseId: 'kubernetes/creds/app/KKK', ...o });
/** A replaced kubernetes token, 30 s after its replacement: past 77 % of the 35 s it had left then. */
const oldK8sToken = replacedLease(
  k8sToken({ id: 'kubernetes/creds/app/OLD', issuedAt: T0 - 585 * S, expiresAt: T0 + 15 * S }),
  T0 - 20 * S,
  'NotRenewable',
);

interface Row {
  name: string;
  /** TokenBound condition's reason, when the minting token was looked up. */
  tokenBound?: string;
  o: LifecycleObservation;
  main: LifecyclePlan['main']['type'];
  reason?: string;
  previous?: string[];
  condition?: string;
  event?: RegExp;
  noEvent?: boolean;
}

const rows: Row[] = [
  {
    name: 'no lease yet: mint the first credential',
    o: obs({ lease: undefined, copyLeaseId: undefined }),
    main: 'mint',
    reason: 'Initial',
    condition: 'Minting',
  },
  {
    name: 'lease young (just after a controller restart): nothing, not even a lookup-driven re-mint',
    o: obs(),
    main: 'noop',
    condition: 'LeaseValid',
    noEvent: true,
  },
  {
    name: 'at 80 % of the lease: renew',
    o: obs({ now: T0 + 48 * S }),
    main: 'renew',
    condition: 'Renewing',
    noEvent: true,
  },
  {
    name: 'renewal far overdue (renewals failing): renew and warn before it expires unrenewed',
    o: obs({ now: T0 + 56 * S }),
    main: 'renew',
    event: /LeaseExpiringUnrenewed/,
  },
  {
    name: 'lease expired unrenewed: replace it',
    o: obs({ now: T0 + 61 * S }),
    main: 'mint',
    reason: 'LeaseLost',
    condition: 'LeaseExpired',
    event: /Rotating/,
  },
  {
    name: 'max TTL (learned from a capped renewal) closer than minValidity: rotate',
    o: obs({ lease: lease({ maxExpiresAt: T0 + 100 * S }) }),
    main: 'mint',
    reason: 'MaxTTL',
  },
  {
    name: 'max TTL farther than minValidity: no rotation yet',
    o: obs({ lease: lease({ maxExpiresAt: T0 + 10 * M }) }),
    main: 'noop',
  },
  // Max TTL unknown (not in the spec, no renewal capped yet), as test/real/dynamic-secret-pods.test.ts runs it:
  // lease 30 s, minValidity 40 s, max 100 s. A renewal (asking 30 + 40 s) is what shows the max TTL, and it
  // must come before the rotation point it could show, else the replaced credential keeps < minValidity.
  {
    name: 'max TTL unknown, lease 30 s, minValidity 40 s, 4 s after issue: renew now (asking 70 s) to learn it',
    o: obs({
      now: T0 + 4 * S,
      policy: { ...policy, minValidityMs: 40 * S },
      lease: lease({ durationSeconds: 30, expiresAt: T0 + 30 * S, maxExpiresAt: undefined }),
    }),
    main: 'renew',
  },
  {
    name: 'max TTL unknown, renewed at +3 s to +73 s: renewed again by +28 s (its end - minValidity - 5 s)',
    o: obs({
      now: T0 + 29 * S,
      policy: { ...policy, minValidityMs: 40 * S },
      lease: lease({ durationSeconds: 30, renewedAt: T0 + 3 * S, expiresAt: T0 + 73 * S, maxExpiresAt: undefined }),
    }),
    main: 'renew',
  },
  {
    name: 'max TTL unknown, renewed at +3 s to +73 s, at +20 s: nothing yet (no renewal loop)',
    o: obs({
      now: T0 + 20 * S,
      policy: { ...policy, minValidityMs: 40 * S },
      lease: lease({ durationSeconds: 30, renewedAt: T0 + 3 * S, expiresAt: T0 + 73 * S, maxExpiresAt: undefined }),
    }),
    main: 'noop',
  },
  {
    name: 'max TTL known (+100 s), renewed at +3 s to +73 s, at +29 s: renewAtPercent applies, nothing yet',
    o: obs({
      now: T0 + 29 * S,
      policy: { ...policy, minValidityMs: 40 * S },
      lease: lease({ durationSeconds: 30, renewedAt: T0 + 3 * S, expiresAt: T0 + 73 * S, maxExpiresAt: T0 + 100 * S }),
    }),
    main: 'noop',
  },
  {
    name: 'maxTTL stated in the spec: rotation planned from issue',
    o: obs({ policy: { ...policy, maxTTLMs: 2 * M }, now: T0 + 10 * S }),
    main: 'mint',
    reason: 'MaxTTL',
  },
  {
    name: 'minting token ends before the lease could: rotate before Vault revokes the lease with it',
    o: obs({ lease: lease({ tokenExpiresAt: T0 + 90 * S }) }),
    main: 'mint',
    reason: 'TokenExpiry',
    event: /token that minted it ends soon/,
  },
  {
    name: 'non-renewable lease ending within minValidity: rotate',
    o: obs({ lease: lease({ renewable: false }) }),
    main: 'mint',
    reason: 'NotRenewable',
  },
  {
    name: 'kubernetes token (not renewable) 29 s into its 600 s with minValidity 570 s: nothing, and never a renewal',
    o: k8sObs({ now: T0 + 29 * S }),
    main: 'noop',
    condition: 'LeaseValid',
  },
  {
    name: 'kubernetes token (not renewable) 31 s into its 600 s with minValidity 570 s: rotate before it ends',
    o: k8sObs({ now: T0 + 31 * S }),
    main: 'mint',
    reason: 'NotRenewable',
  },
  {
    name: 'kubernetes token not longer than minValidity (600 s, 10m): not replaced as soon as minted (a mint every second)',
    o: k8sObs({ policy: { ...k8sPolicy, minValidityMs: 10 * M }, now: T0 + 1 * S }),
    main: 'noop',
  },
  {
    name: 'kubernetes token not longer than minValidity: replaced once it served 1/20 of its lifetime (30 s)',
    o: k8sObs({ policy: { ...k8sPolicy, minValidityMs: 10 * M }, now: T0 + 31 * S }),
    main: 'mint',
    reason: 'NotRenewable',
  },
  {
    name: 'replaced kubernetes token while its rollout runs: kept, not renewed (Vault refuses), not forgotten',
    o: k8sObs({ previous: [oldK8sToken], rollout: 'rolling' }),
    main: 'noop',
    previous: [],
    condition: 'AwaitingRollout',
  },
  {
    name: 'replaced kubernetes token: revoked once its rollout settled and the grace passed',
    o: k8sObs({ previous: [{ ...oldK8sToken, rolloutSettledAt: T0 - 11 * S }], rollout: 'settled' }),
    main: 'noop',
    previous: ['revoke'],
  },
  {
    name: 'spec changed (path, store, parameters): rotate',
    o: obs({ source: 'src-2' }),
    main: 'mint',
    reason: 'SpecChanged',
  },
  {
    name: 'target Secret deleted, copy holds this lease: restore without minting',
    o: obs({ target: 'missing' }),
    main: 'restore',
    event: /SecretRestored/,
  },
  { name: 'target Secret edited: restore it', o: obs({ target: 'differs' }), main: 'restore' },
  {
    name: 'target and copy both deleted: a new credential (the old one revoked after the rollout)',
    o: obs({ target: 'missing', copyLeaseId: undefined }),
    main: 'mint',
    reason: 'SecretLost',
  },
  {
    name: 'a foreign Secret under the target name: refuse, mint nothing',
    o: obs({ lease: undefined, copyLeaseId: undefined, target: 'foreign' }),
    main: 'refuse',
    condition: 'SecretNotOwned',
  },
  {
    name: 'copy holds a lease status does not know (crash between mint and status): adopt it',
    o: obs({ lease: undefined, copyLeaseId: 'database/creds/app/NEW' }),
    main: 'adopt',
  },
  {
    name: 'copy newer than status during a rotation: adopt, do not mint a third',
    o: obs({ copyLeaseId: 'database/creds/app/NEW' }),
    main: 'adopt',
  },
  { name: 'deleting: revoke every lease', o: obs({ deleting: true, previous: [prev()] }), main: 'revoke-all' },
  {
    name: 'deleting with onDelete false: release, revoke nothing',
    o: obs({ deleting: true, policy: { ...policy, onDelete: false } }),
    main: 'release',
  },
  {
    name: 'replaced lease, rollout still rolling: keep it (renewed when due), no revoke',
    o: obs({
      lease: lease({ renewedAt: T0 + 40 * S, expiresAt: T0 + 100 * S }),
      previous: [prev({ replacedAt: T0, renewedAt: T0, expiresAt: T0 + 60 * S })],
      now: T0 + 50 * S,
      rollout: 'rolling',
    }),
    main: 'noop',
    previous: ['renew'],
    condition: 'AwaitingRollout',
  },
  {
    name: 'replaced lease, rollout just settled: mark it, revoke after the grace',
    o: obs({ previous: [prev()], rollout: 'settled' }),
    main: 'noop',
    previous: ['settled'],
  },
  {
    name: 'replaced lease, settled longer than the grace ago: revoke it',
    o: obs({ previous: [prev({ rolloutSettledAt: T0 - 31 * S })], rollout: 'settled' }),
    main: 'noop',
    previous: ['revoke'],
  },
  {
    name: 'replaced lease, settled within the grace: wait',
    o: obs({ previous: [prev({ rolloutSettledAt: T0 })], rollout: 'settled' }),
    main: 'noop',
    previous: [],
  },
  {
    name: 'replaced lease, a target paused: warn, keep it',
    o: obs({ previous: [prev()], rollout: 'paused' }),
    main: 'noop',
    previous: [],
    event: /RolloutPaused/,
  },
  {
    name: 'replaced lease, policy Immediately: revoke now',
    o: obs({ previous: [prev()], policy: { ...policy, previous: 'Immediately' } }),
    main: 'noop',
    previous: ['revoke'],
  },
  {
    name: 'replaced lease, policy Never: forget it (it expires on its own)',
    o: obs({ previous: [prev()], policy: { ...policy, previous: 'Never' } }),
    main: 'noop',
    previous: ['forget'],
  },
  {
    name: 'replaced lease already expired: forget it',
    o: obs({ previous: [prev({ expiresAt: T0 })], rollout: 'rolling' }),
    main: 'noop',
    previous: ['forget'],
  },
  // Certificates (credentialType Certificate).
  {
    name: 'certificate young, just after a controller restart: nothing re-issued (notAfter from status)',
    o: certObs({ now: T0 + 5 * S }),
    main: 'noop',
    condition: 'CertificateValid',
    noEvent: true,
  },
  {
    name: 'certificate at 80 % of its lifetime (past 2/3 plus jitter): re-issue, never waiting for expiry',
    o: certObs({ now: T0 + 48 * S }),
    main: 'mint',
    reason: 'Renewal',
    condition: 'Rotating',
    event: /Rotating .*renewal point/,
  },
  {
    name: 'certificate: the minimum remaining validity wins over a late percentage',
    o: certObs({
      now: T0 + 31 * S,
      policy: { ...certPolicy, renewAtPercent: 90, jitterPercent: 0, minValidityMs: 30 * S },
    }),
    main: 'mint',
    reason: 'Renewal',
  },
  {
    name: 'certificate expired (controller down past notAfter): re-issue with a Warning',
    o: certObs({ now: T0 + 61 * S }),
    main: 'mint',
    reason: 'CertificateExpired',
    condition: 'CertificateExpired',
    event: /Rotating/,
  },
  {
    name: 'certificate: its Secret deleted, the copy kept: restored, nothing issued',
    o: certObs({ target: 'missing' }),
    main: 'restore',
  },
  {
    name: 'certificate: a copy newer than status (issued before a crash): adopt, never re-issue',
    o: certObs({ copyLeaseId: '99:88:77' }),
    main: 'adopt',
  },
  {
    name: 'certificate: no token bound (a certificate has no lease), even if a look-up says the token is gone',
    o: certObs({ mintingToken: { accessor: 'acc-1', state: 'gone' } }),
    main: 'noop',
    condition: 'CertificateValid',
  },
  {
    name: 'replaced certificate, rollout still running: kept (nothing to renew), not revoked',
    o: certObs({ previous: [oldCert()], rollout: 'rolling' }),
    main: 'noop',
    previous: [],
    condition: 'AwaitingRollout',
  },
  {
    name: 'replaced certificate, rollout settled: grace starts',
    o: certObs({ previous: [oldCert()], rollout: 'settled' }),
    main: 'noop',
    previous: ['settled'],
  },
  {
    name: 'replaced certificate, rollout settled plus grace: revoke it (by serial), only it',
    o: certObs({ previous: [oldCert({ rolloutSettledAt: T0 + 4 * S })], rollout: 'settled' }),
    main: 'noop',
    previous: ['revoke'],
  },
  {
    name: 'replaced certificate expired while waiting: forgotten (nothing to revoke)',
    o: certObs({ now: T0 + 25 * S, previous: [oldCert()], rollout: 'rolling' }),
    main: 'noop',
    previous: ['forget'],
  },
  {
    name: 'certificate object deleted: revoke the current and the replaced certificate',
    o: certObs({ deleting: true, previous: [oldCert()] }),
    main: 'revoke-all',
  },
  // The minting token, looked up again (after a start, and near its last-seen end).
  {
    name: "token end near as last seen, but it is this process's token and was renewed: no rotation, new end kept",
    o: obs({
      lease: lease({ tokenExpiresAt: T0 + 90 * S, maxExpiresAt: T0 + 120 * M }),
      mintingToken: { accessor: 'acc-1', state: 'current', expiresAt: T0 + 70 * M, periodic: false },
    }),
    main: 'noop',
    tokenBound: 'TokenNotPeriodic',
  },
  {
    name: "this process's periodic token, not yet renewed and near its end: no rotation (its cache renews it)",
    o: obs({
      lease: lease({ tokenExpiresAt: T0 + 90 * S }),
      mintingToken: { accessor: 'acc-1', state: 'current', expiresAt: T0 + 90 * S, periodic: true },
    }),
    main: 'noop',
    tokenBound: 'TokenPeriodic',
  },
  {
    name: "after a restart the minting token is another login's, ending within minValidity: rotate in time",
    o: obs({
      lease: lease({ tokenExpiresAt: T0 + 60 * M }),
      mintingToken: { accessor: 'acc-1', state: 'other', expiresAt: T0 + 100 * S, periodic: false },
    }),
    main: 'mint',
    reason: 'TokenExpiry',
    event: /token that minted it ends soon/,
  },
  {
    name: 'after a restart the minting token (periodic, no one renews it now) ends before the max TTL: say so',
    o: obs({
      lease: lease({ maxExpiresAt: T0 + 60 * M }),
      mintingToken: { accessor: 'acc-1', state: 'other', expiresAt: T0 + 20 * M, periodic: true },
    }),
    main: 'noop',
    tokenBound: 'TokenNoLongerRenewed',
  },
  {
    name: 'a non-periodic minting token ending before the max TTL: TokenBound False',
    o: obs({
      lease: lease({ maxExpiresAt: T0 + 60 * M }),
      mintingToken: { accessor: 'acc-1', state: 'other', expiresAt: T0 + 30 * M, periodic: false },
    }),
    main: 'noop',
    tokenBound: 'TokenEndsFirst',
  },
  {
    name: 'the minting token outlives the max TTL: TokenBound True',
    o: obs({
      lease: lease({ maxExpiresAt: T0 + 5 * M }),
      mintingToken: { accessor: 'acc-1', state: 'other', expiresAt: T0 + 30 * M, periodic: false },
    }),
    main: 'noop',
    tokenBound: 'TokenOutlivesCredential',
  },
  {
    name: 'the minting token is gone (revoked): Vault revoked the lease with it, replace it',
    o: obs({ mintingToken: { accessor: 'acc-1', state: 'gone' } }),
    main: 'mint',
    reason: 'LeaseLost',
    condition: 'TokenRevoked',
  },
  {
    name: "a look-up of another accessor (not the lease's) changes nothing",
    o: obs({ mintingToken: { accessor: 'acc-9', state: 'gone' } }),
    main: 'noop',
    condition: 'LeaseValid',
  },
];

void describe('planLifecycle', () => {
  for (const r of rows) {
    void test(r.name, () => {
      const plan = planLifecycle(r.o);
      assert.equal(plan.main.type, r.main, JSON.stringify(plan.main));
      if (r.reason) assert.equal((plan.main as { reason?: string }).reason, r.reason);
      if (r.previous)
        assert.deepEqual(
          plan.previous.map((p) => p.op),
          r.previous,
        );
      if (r.condition) assert.equal(plan.condition.reason, r.condition);
      if (r.event)
        assert.ok(
          plan.events.some((e) => r.event!.test(`${e.reason} ${e.message}`)),
          JSON.stringify(plan.events),
        );
      if (r.noEvent) assert.deepEqual(plan.events, []);
      if (r.tokenBound) assert.equal(plan.tokenCondition?.reason, r.tokenBound, JSON.stringify(plan.tokenCondition));
      const text = JSON.stringify(plan);
      assert.ok(!/password|username/i.test(text), 'a plan never carries a credential field');
    });
  }

  void test('a revoke is planned only for replaced leases (never the current one) while not deleting', () => {
    for (const r of rows.filter((x) => !x.o.deleting)) {
      const plan = planLifecycle(r.o);
      const revoked = plan.previous.filter((p) => p.op === 'revoke').map((p) => p.id);
      assert.ok(!revoked.includes(r.o.lease?.id ?? '-'), r.name);
      assert.ok(
        plan.audit.filter((a) => a.action === 'revoke').every((a) => a.leaseId !== r.o.lease?.id),
        r.name,
      );
    }
  });

  void test('the renewal point is stable for a lease (a restart renews at the same time) and within the jitter window', () => {
    const a = renewalTime(policy, 'database/creds/app/AAA', T0, 60 * S);
    assert.equal(a, renewalTime(policy, 'database/creds/app/AAA', T0, 60 * S));
    assert.ok(a >= T0 + 0.67 * 60 * S && a <= T0 + 0.77 * 60 * S, String(a - T0));
    const spread = new Set(
      Array.from({ length: 20 }, (_, i) => Math.round(renewalTime(policy, `id-${i}`, T0, 60 * S) / 100)),
    );
    assert.ok(spread.size > 5, 'leases do not all renew at one instant');
  });

  void test('a replaced lease keeps its duration for renewals only when Vault renews it', () => {
    assert.equal(oldK8sToken.durationSeconds, undefined);
    assert.deepEqual(replacedLease(lease({ renewedAt: T0 + 5 * S }), T0 + 9 * S, 'MaxTTL'), {
      id: 'database/creds/app/AAA',
      replacedAt: T0 + 9 * S,
      expiresAt: T0 + 60 * S,
      durationSeconds: 60,
      renewedAt: T0 + 5 * S,
      reason: 'MaxTTL',
    });
    // The same wait with a renewable lease renews it: the row above differs only in what Vault allows.
    const renewable = replacedLease(
      lease({ id: 'database/creds/app/OLD', issuedAt: T0 - 585 * S, expiresAt: T0 + 15 * S }),
      T0 - 20 * S,
      'MaxTTL',
    );
    const plan = planLifecycle(k8sObs({ previous: [renewable], rollout: 'rolling' }));
    assert.deepEqual(
      plan.previous.map((p) => p.op),
      ['renew'],
    );
  });

  void test('a kubernetes token is woken for at its rotation point (issue + 600 s - minValidity 570 s)', () => {
    assert.equal(planLifecycle(k8sObs({ now: T0 + 10 * S })).requeueAfterMs, 20 * S);
  });

  void test("renewals ask for the lease duration plus minValidity, so Vault's cap shows the max TTL that early", () => {
    const plan = planLifecycle(obs({ now: T0 + 50 * S }));
    assert.deepEqual(plan.main, { type: 'renew', incrementSeconds: 60 + 120 });
  });

  void test('the requeue is the next thing due: the renewal of the current lease', () => {
    const plan = planLifecycle(obs());
    const at = renewalTime(policy, lease().id, T0, 60 * S);
    assert.equal(plan.requeueAfterMs, at - (T0 + 10 * S));
  });

  void test(`more than ${MAX_PREVIOUS} replaced leases waiting: the oldest is revoked with a Warning`, () => {
    const many = Array.from({ length: MAX_PREVIOUS + 1 }, (_, i) => prev({ id: `old-${i}` }));
    const plan = planLifecycle(obs({ previous: many, rollout: 'rolling' }));
    assert.deepEqual(
      plan.previous.filter((p) => p.op === 'revoke').map((p) => p.id),
      ['old-0'],
    );
    assert.ok(plan.events.some((e) => e.type === 'Warning' && e.reason === 'PreviousLeaseRevokedEarly'));
  });

  void test('a certificate is re-issued between 2/3 and 2/3 plus jitter of its lifetime, the same point after a restart', () => {
    const at = certificateRenewAt(certPolicy, cert());
    assert.equal(at, certificateRenewAt(certPolicy, cert()));
    assert.ok(at >= T0 + 0.67 * 60 * S && at <= T0 + 0.72 * 60 * S, String(at - T0));
    assert.equal(planLifecycle(certObs()).requeueAfterMs, at - (T0 + 10 * S), 'woken at its renewal point');
  });

  void test('the minting token is looked up once per controller start, then only near its end; never for a certificate', () => {
    assert.equal(mintingTokenLookDue(lease(), policy, T0, false), true);
    assert.equal(mintingTokenLookDue(lease(), policy, T0, true), false);
    assert.equal(mintingTokenLookDue(lease({ tokenExpiresAt: T0 + 150 * S }), policy, T0, true), true);
    assert.equal(mintingTokenLookDue(cert(), policy, T0, false), false);
    assert.equal(mintingTokenLookDue(undefined, policy, T0, false), false);
  });

  void test("a token look-up's result is what status keeps", () => {
    const plan = planLifecycle(
      obs({ mintingToken: { accessor: 'acc-1', state: 'current', expiresAt: T0 + 70 * M, periodic: true } }),
    );
    assert.deepEqual(plan.token, { tokenExpiresAt: T0 + 70 * M, tokenPeriodic: true, tokenCheckedAt: T0 + 10 * S });
  });
});

void describe('tokenConditionAtMint (TokenBound for a credential just minted, from the lookup made at its mint)', () => {
  const minted = (o: Partial<LeaseState>): LeaseState =>
    lease({ maxExpiresAt: undefined, tokenCheckedAt: T0, tokenPeriodic: false, ...o });
  const rows: Array<[string, LeaseState, LeasePolicy, string | undefined]> = [
    ['a periodic token, renewed by this process', minted({ tokenPeriodic: true }), policy, 'TokenPeriodic'],
    ['a non-periodic token, max TTL unknown', minted({}), policy, 'TokenNotPeriodic'],
    [
      'a non-periodic token outliving the stated maxTTL',
      minted({ tokenExpiresAt: T0 + 2 * 60 * M }),
      { ...policy, maxTTLMs: 60 * M },
      'TokenOutlivesCredential',
    ],
    ['no token looked up at the mint: no condition', minted({ tokenCheckedAt: undefined }), policy, undefined],
    ['a certificate: no condition', cert({ tokenAccessor: 'acc-1', tokenCheckedAt: T0 }), certPolicy, undefined],
  ];
  for (const [name, l, p, reason] of rows)
    void test(name, () => assert.equal(tokenConditionAtMint(l, p)?.reason, reason));
});

// The sub-planners planLifecycle reads in order, each on its own: what it decides, and what it notes (Events,
// audit records, the times it wakes for) when it decides nothing.
const notes = (): Implied => ({ events: [], audit: [], wakeAt: [] });

void describe('planDeleting', () => {
  const rows: Array<[string, LifecycleObservation, string, string[]]> = [
    [
      'onDelete: the current and the replaced leases are revoked',
      obs({ deleting: true, previous: [prev()] }),
      'revoke-all',
      ['database/creds/app/AAA', 'database/creds/app/OLD'],
    ],
    ['onDelete false: all are let go', obs({ deleting: true, policy: { ...policy, onDelete: false } }), 'release', []],
    ['nothing was ever minted: nothing to revoke', obs({ deleting: true, lease: undefined }), 'release', []],
  ];
  for (const [name, o, main, revoked] of rows)
    void test(name, () => {
      const plan = planDeleting(o);
      assert.equal(plan.main.type, main);
      assert.deepEqual(
        plan.audit,
        revoked.map((leaseId) => ({ action: 'revoke', leaseId, reason: 'Deleted' })),
      );
      assert.equal(plan.condition.reason, 'Deleting');
    });
});

void describe('planPrevious (each replaced lease on its own)', () => {
  const rows: Array<[string, LifecycleObservation, string[], RegExp?]> = [
    ['expired: forgotten', obs({ previous: [prev({ expiresAt: T0 })] }), ['forget']],
    [
      'previous Never: forgotten, not revoked',
      obs({ policy: { ...policy, previous: 'Never' }, previous: [prev()] }),
      ['forget'],
    ],
    [
      'previous Immediately: revoked',
      obs({ policy: { ...policy, previous: 'Immediately' }, previous: [prev()] }),
      ['revoke'],
    ],
    ['rollout settled now: marked, revoked after grace', obs({ previous: [prev()], rollout: 'settled' }), ['settled']],
    [
      'settled longer than grace ago: revoked',
      obs({ previous: [prev({ rolloutSettledAt: T0 - 30 * S })], rollout: 'settled' }),
      ['revoke'],
    ],
    [
      'rolling, past its renewal point: renewed',
      obs({ now: T0 + 50 * S, previous: [prev({ expiresAt: T0 + 60 * S })], rollout: 'rolling' }),
      ['renew'],
    ],
    ['paused: kept, with a Warning', obs({ previous: [prev()], rollout: 'paused' }), [], /RolloutPaused/],
    [
      'a target missing: taken as rolled, said',
      obs({ previous: [prev()], rollout: 'missing' }),
      ['settled'],
      /RolloutTargetMissing/,
    ],
  ];
  for (const [name, o, ops, event] of rows)
    void test(name, () => {
      const n = notes();
      assert.deepEqual(
        planPrevious(o, n).map((a) => a.op),
        ops,
      );
      if (event)
        assert.ok(
          n.events.some((e) => event.test(e.reason)),
          JSON.stringify(n.events),
        );
      else assert.deepEqual(n.events, []);
      assert.equal(n.audit.length, ops.filter((op) => op === 'revoke').length, 'one audit record a revocation');
    });
  void test('waiting for the rollout: asks the coordinator again in 5 s', () => {
    const n = notes();
    planPrevious(obs({ previous: [prev({ renewedAt: T0 + 9 * S })], rollout: 'rolling' }), n);
    assert.equal(Math.min(...n.wakeAt), T0 + 15 * S);
  });
});

void describe('planReplacement (the current credential must go)', () => {
  const rows: Array<[string, LifecycleObservation, string | undefined, string?]> = [
    ['expired lease', obs({ now: T0 + 61 * S }), 'LeaseLost', 'LeaseExpired'],
    ['expired certificate', certObs({ now: T0 + 61 * S }), 'CertificateExpired', 'CertificateExpired'],
    ['spec changed', obs({ source: 'src-2' }), 'SpecChanged', 'Rotating'],
    ['Secret and copy deleted', obs({ target: 'missing', copyLeaseId: undefined }), 'SecretLost', 'Rotating'],
    ['Secret deleted, copy kept: not this planner (restored)', obs({ target: 'missing' }), undefined],
    ['max TTL within minValidity', obs({ lease: lease({ maxExpiresAt: T0 + 100 * S }) }), 'MaxTTL', 'Rotating'],
    [
      'minting token ends within minValidity',
      obs({ lease: lease({ tokenExpiresAt: T0 + 100 * S }) }),
      'TokenExpiry',
      'Rotating',
    ],
    ['certificate at its renewal point', certObs({ now: T0 + 50 * S }), 'Renewal', 'Rotating'],
    ['a valid lease far from its ends', obs(), undefined],
  ];
  for (const [name, o, reason, condition] of rows)
    void test(name, () => {
      const n = notes();
      const d = planReplacement(o, o.lease!, undefined, n);
      assert.equal((d?.main as { reason?: string } | undefined)?.reason, reason);
      assert.equal(d?.condition.reason, condition);
      assert.deepEqual(n.audit, reason ? [{ action: 'mint', reason }] : []);
    });
  void test('far from its ends: woken minValidity before the earliest one', () => {
    const n = notes();
    planReplacement(
      obs({ lease: lease({ tokenExpiresAt: T0 + 30 * M }) }),
      lease({ tokenExpiresAt: T0 + 30 * M }),
      undefined,
      n,
    );
    assert.deepEqual(n.wakeAt, [T0 + 30 * M - 2 * M]);
  });
});

void describe('planRenewal', () => {
  const rows: Array<[string, LifecycleObservation, string | undefined, RegExp?]> = [
    ['before its renewal point: nothing, woken then', obs(), undefined],
    ['at its renewal point: renewed', obs({ now: T0 + 50 * S }), 'renew'],
    [
      'long past it (renewals failing): renewed, with a Warning',
      obs({ now: T0 + 58 * S }),
      'renew',
      /LeaseExpiringUnrenewed/,
    ],
    ['not renewable: not this planner', obs({ now: T0 + 50 * S, lease: lease({ renewable: false }) }), undefined],
  ];
  for (const [name, o, main, event] of rows)
    void test(name, () => {
      const n = notes();
      const d = planRenewal(o, o.lease!, n);
      assert.equal(d?.main.type, main);
      if (event) assert.ok(n.events.some((e) => event.test(e.reason)));
      else assert.deepEqual(n.events, []);
      if (!d && o.lease!.renewable) assert.deepEqual(n.wakeAt, [renewalTime(policy, o.lease!.id, T0, 60 * S)]);
    });
});

void describe('the max TTL a capped renewal shows, kept for the next credential', () => {
  // test/bench/lifecycle.ts's role: lease 60 s, max TTL 180 s, minValidity 60 s.
  const p: LeasePolicy = { ...policy, minValidityMs: 60 * S };
  const unknown = lease({ maxExpiresAt: undefined });
  void test('renewedLease: a full grant learns nothing; one second short of the ask (119 for 120) is a cap', () => {
    const now = T0 + 61 * S;
    assert.deepEqual(renewedLease(unknown, { durationSeconds: 120, renewable: true }, 120, now), {
      ...unknown,
      renewedAt: now,
      expiresAt: now + 120 * S,
    });
    assert.deepEqual(renewedLease(unknown, { durationSeconds: 119, renewable: true }, 120, now), {
      ...unknown,
      renewedAt: now,
      expiresAt: now + 119 * S,
      maxExpiresAt: now + 119 * S,
      maxTTLSeconds: 180,
    });
  });
  void test('inheritedMaxTTL: from the replaced credential of the same source and granted duration only', () => {
    const learned = lease({ maxTTLSeconds: 180 });
    assert.deepEqual(inheritedMaxTTL(learned, { source: 'src-1', durationSeconds: 60 }), { maxTTLSeconds: 180 });
    assert.deepEqual(inheritedMaxTTL(learned, { source: 'src-2', durationSeconds: 60 }), {}, 'the spec changed');
    assert.deepEqual(inheritedMaxTTL(learned, { source: 'src-1', durationSeconds: 30 }), {}, "the role's TTL changed");
    assert.deepEqual(inheritedMaxTTL(lease(), { source: 'src-1', durationSeconds: 60 }), {}, 'nothing learned');
    assert.deepEqual(inheritedMaxTTL(undefined, { source: 'src-1', durationSeconds: 60 }), {});
  });
  void test('a credential that inherited it is renewed once, at its renewal point, and replaced max TTL - minValidity after issue', () => {
    const inherited = lease({ maxExpiresAt: undefined, maxTTLSeconds: 180 });
    const o = (now: number, l: LeaseState): LifecycleObservation => obs({ now, policy: p, lease: l });
    // Not known: a probe renewal at a tenth of the grant (the lease ends before the rotation point could show).
    const n1 = notes();
    assert.equal(planRenewal(o(T0 + 7 * S, unknown), unknown, n1)?.main.type, 'renew');
    // Inherited: nothing before the renewal point (67-77 % of the lease).
    const n2 = notes();
    assert.equal(planRenewal(o(T0 + 7 * S, inherited), inherited, n2), undefined);
    assert.deepEqual(n2.wakeAt, [renewalTime(p, inherited.id, T0, 60 * S)]);
    // Renewed at 45 s for 120 s (until 165 s): the next step is the replacement at 120 s, no other renewal.
    const renewed = renewedLease(inherited, { durationSeconds: 120, renewable: true }, 120, T0 + 45 * S);
    assert.equal(planLifecycle(o(T0 + 110 * S, renewed)).main.type, 'noop');
    const due = planLifecycle(o(T0 + 130 * S, renewed)); // the rotation point, 120 s, plus its jitter
    assert.equal(due.main.type, 'mint');
    assert.equal((due.main as { reason?: string }).reason, 'MaxTTL');
  });
});
