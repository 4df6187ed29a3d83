// vault/leases.ts against Vault's answers as OpenBao 2.7.2 gives them (test/real/database-engine.test.ts):
// a path without a lease is refused with a message that says why, a renewal returns what Vault granted,
// an unknown lease is "gone" (lookup undefined, isLeaseGone), the token lookup goes through the session.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VaultError } from '../../vault/errors.ts';
import {
  currentTokenLease,
  isLeaseGone,
  issueCredential,
  lookupLease,
  lookupTokenByAccessor,
  renewLease,
  revokeLease,
} from '../../vault/leases.ts';
import type { VaultRequest, VaultRequester } from '../../vault/types.ts';

function fake(answer: (req: VaultRequest) => unknown): VaultRequester & { sent: VaultRequest[] } {
  const sent: VaultRequest[] = [];
  return {
    sent,
    request: <T>(req: VaultRequest) => {
      sent.push(req);
      return Promise.resolve(answer(req) as T);
    },
  };
}

void describe('vault/leases', () => {
  void test('issue: GET sends no body, the data comes back as strings, and a path without a lease is refused', async () => {
    const v = fake(() => ({
      lease_id: 'database/creds/app/X',
      lease_duration: 60,
      renewable: true,
      data: { username: 'u', password: 'p', n: 3 },
    }));
    const c = await issueCredential(v, { path: 'database/creds/app', method: 'GET' });
    assert.deepEqual(c, {
      leaseId: 'database/creds/app/X',
      durationSeconds: 60,
      renewable: true,
      data: { username: 'u', password: 'p', n: '3' },
    });
    assert.equal(v.sent[0]!.body, undefined);
    const kv = fake(() => ({ lease_id: '', data: { password: 'p' } }));
    await assert.rejects(
      issueCredential(kv, { path: 'secret/data/x', method: 'GET' }),
      (err: Error) => /without a lease/.test(err.message) && !err.message.includes('p"'),
    );
  });

  void test('renew sends the lease and the increment; revoke and lookup name the lease', async () => {
    const v = fake((req) =>
      req.path === 'sys/leases/renew'
        ? { lease_id: 'L', lease_duration: 42, renewable: true }
        : req.path === 'sys/leases/lookup'
          ? { data: { issue_time: '2026-12-03T08:00:00Z', expire_time: '2026-12-03T08:01:00Z', renewable: true } }
          : undefined,
    );
    assert.deepEqual(await renewLease(v, 'L', 180), { leaseId: 'L', durationSeconds: 42, renewable: true });
    assert.deepEqual(v.sent[0]!.body, { lease_id: 'L', increment: 180 });
    await revokeLease(v, 'L');
    assert.deepEqual(
      [v.sent[1]!.method, v.sent[1]!.path, v.sent[1]!.body],
      ['PUT', 'sys/leases/revoke', { lease_id: 'L' }],
    );
    assert.deepEqual(await lookupLease(v, 'L'), {
      issueTime: Date.parse('2026-12-03T08:00:00Z'),
      expireTime: Date.parse('2026-12-03T08:01:00Z'),
      renewable: true,
    });
  });

  void test('an unknown lease is gone, not an error; other failures stay errors', async () => {
    const gone = fake(() => {
      throw new VaultError('invalid', 'sys.leases.lookup: invalid lease', 400, 'sys.leases.lookup');
    });
    assert.equal(await lookupLease(gone, 'L'), undefined);
    assert.equal(isLeaseGone(new VaultError('invalid', 'sys.leases.renew: lease not found', 400)), true);
    assert.equal(isLeaseGone(new VaultError('forbidden', 'sys.leases.renew: permission denied', 403)), false);
    const down = fake(() => {
      throw new VaultError('unavailable', 'sys.leases.lookup: connection refused');
    });
    await assert.rejects(lookupLease(down, 'L'), /connection refused/);
  });

  void test('the token lookup goes through the session (no token of its own) and reads accessor and end', async () => {
    const v = fake(() => ({ data: { accessor: 'acc', expire_time: '2026-12-03T09:00:00Z', renewable: true } }));
    assert.deepEqual(await currentTokenLease(v), {
      accessor: 'acc',
      expireTime: Date.parse('2026-12-03T09:00:00Z'),
      renewable: true,
      periodic: false,
    });
    assert.equal(v.sent[0]!.token, undefined);
  });

  void test("another token by its accessor: its end and whether it is periodic; gone when Vault says 'invalid accessor'", async () => {
    const v = fake(() => ({ data: { accessor: 'old', expire_time: '2026-12-03T09:00:00Z', period: 3600 } }));
    assert.deepEqual(await lookupTokenByAccessor(v, 'old'), {
      accessor: 'old',
      expireTime: Date.parse('2026-12-03T09:00:00Z'),
      renewable: false,
      periodic: true,
    });
    assert.deepEqual(v.sent[0]!.body, { accessor: 'old' });
    assert.equal(v.sent[0]!.path, 'auth/token/lookup-accessor');
    const gone = fake(() => {
      throw new VaultError('invalid', 'auth.token.lookup_accessor: invalid accessor', 400);
    });
    assert.equal(await lookupTokenByAccessor(gone, 'old'), undefined);
    const denied = fake(() => {
      throw new VaultError('forbidden', 'auth.token.lookup_accessor: permission denied', 403);
    });
    await assert.rejects(lookupTokenByAccessor(denied, 'old'), /permission denied/);
  });
});
