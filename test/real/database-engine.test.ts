// The database secrets engine on real servers: OpenBao 2.7.2's postgresql-database-plugin against a
// throwaway PostgreSQL 15. Credentials minted through OpenBao log in; after sys/leases/revoke their role
// is gone and the same login fails; a renewal moves the lease's expiry. The lifecycle reconciler's tests
// stand on these facts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOpenBao, type OpenBaoServer } from '../harness/openbao.ts';
import {
  configureDatabaseEngine,
  postgresSkipReason,
  runNoStdin,
  startPostgres,
  type PostgresServer,
} from '../harness/postgres.ts';
import { baoSkipReason } from '../harness/real-tier.ts';
import { vaultRequest } from '../harness/vault.ts';

const skip = baoSkipReason() || postgresSkipReason();

interface Creds {
  lease_id: string;
  lease_duration: number;
  renewable: boolean;
  data: { username: string; password: string };
}

void describe('OpenBao database engine on PostgreSQL 15 (real servers)', { skip }, () => {
  let bao: OpenBaoServer;
  let pg: PostgresServer;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'vaultgate-dbengine-'));
    [bao, pg] = await Promise.all([startOpenBao({ dir }), startPostgres()]);
  });
  after(async () => {
    await Promise.all([bao?.stop(), pg?.stop()]);
    rmSync(dir, { recursive: true, force: true });
  });

  void test('minted credentials log in, a renewal extends the lease, and after revoke the role is gone and the login fails', async () => {
    const v = { addr: bao.addr, token: bao.rootToken };
    const { credsPath } = await configureDatabaseEngine(v, pg, { role: 'app', defaultTtl: '60s', maxTtl: '300s' });
    const res = await vaultRequest(v, 'GET', credsPath);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const creds = res.body as Creds;
    assert.equal(creds.lease_duration, 60, "the role's default_ttl is the lease");
    assert.equal(creds.renewable, true);
    const login = { user: creds.data.username, password: creds.data.password };

    const q = await pg.query('SELECT current_user', login);
    assert.ok(q.ok, q.stderr);
    assert.equal(q.stdout, creds.data.username);
    assert.ok((await pg.loginRoles()).includes(creds.data.username));

    const lookup = await vaultRequest(v, 'PUT', 'sys/leases/lookup', { lease_id: creds.lease_id });
    assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
    const issued = (lookup.body as { data: { issue_time: string; expire_time: string } }).data;
    const renew = await vaultRequest(v, 'PUT', 'sys/leases/renew', { lease_id: creds.lease_id, increment: 60 });
    assert.equal(renew.status, 200, JSON.stringify(renew.body));
    const after = (await vaultRequest(v, 'PUT', 'sys/leases/lookup', { lease_id: creds.lease_id })).body as {
      data: { expire_time: string };
    };
    assert.ok(
      Date.parse(after.data.expire_time) >= Date.parse(issued.expire_time),
      'the renewal did not move the expiry back',
    );
    assert.ok((await pg.query('SELECT 1', login)).ok, 'still logs in after the renewal');

    const revoke = await vaultRequest(v, 'PUT', 'sys/leases/revoke', { lease_id: creds.lease_id });
    assert.equal(revoke.status, 204, JSON.stringify(revoke.body));
    assert.ok(!(await pg.loginRoles()).includes(creds.data.username), "the revoked credential's role is dropped");
    const denied = await pg.query('SELECT 1', login);
    assert.equal(denied.ok, false, 'a revoked credential must not log in');
    assert.match(denied.stderr, /authentication failed|does not exist/);
    const gone = await vaultRequest(v, 'PUT', 'sys/leases/lookup', { lease_id: creds.lease_id });
    assert.equal(gone.status, 400, 'the lease is gone from OpenBao');
  });

  void test('the harness leaves no PostgreSQL process and no dir behind', async () => {
    const other = await startPostgres();
    const d = other.dir;
    await other.stop();
    assert.equal(existsSync(d), false);
    const ps = await runNoStdin('pgrep', ['-f', `${d}/data`]);
    assert.equal(ps.stdout.trim(), '', 'no postgres of the stopped cluster is left');
  });
});
