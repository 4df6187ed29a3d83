// #14 flags: --namespace (repeatable, comma-separated) scopes both processes; --allowed-vault-server
// reaches both; the webhook learns the apiserver's audiences from its own ServiceAccount token
// (--service-account-token-file). Bad values name the flag.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONTROLLER_OPTIONS, controllerOptionsFrom } from '../../cli/commands/controller.ts';
import { WEBHOOK_OPTIONS, webhookOptionsFrom } from '../../cli/commands/webhook.ts';
import { silentLogger } from '../../observability/log.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

const controller = (args: string[]) =>
  controllerOptionsFrom(
    parseArgs({ args: ['--vault-addr=http://vault:8200', ...args], options: CONTROLLER_OPTIONS, strict: true }).values,
    { client: new FakeKubeClient(), log: silentLogger, env: { VAULT_TOKEN: 't' } },
  );
const webhook = (args: string[]) =>
  webhookOptionsFrom(
    parseArgs({ args: ['--no-kube', '--no-audit', ...args], options: WEBHOOK_OPTIONS, strict: true }).values,
  );

void describe('security flags', () => {
  void test('--namespace: repeatable and comma-separated, deduplicated; absent = all namespaces', () => {
    assert.deepEqual(controller(['--namespace=team-a', '--namespace', 'team-b,team-a']).namespaces, [
      'team-a',
      'team-b',
    ]);
    assert.equal(controller([]).namespaces, undefined);
    assert.deepEqual(webhook(['--namespace=team-a,team-b']).namespaces, ['team-a', 'team-b']);
    assert.throws(() => controller(['--namespace=Team_A']), /--namespace must be a namespace name/);
  });

  void test('--allowed-vault-server reaches both processes', () => {
    assert.deepEqual(controller(['--allowed-vault-server=https://vault.example:8200']).vaultServers, [
      'https://vault.example:8200',
    ]);
    assert.deepEqual(webhook(['--allowed-vault-server=https://vault.example:8200']).vaultServers, [
      'https://vault.example:8200',
    ]);
  });

  void test("--service-account-token-file: the aud of the webhook's own token are the apiserver's audiences", () => {
    const dir = mkdtempSync(join(tmpdir(), 'vg-flags-'));
    const file = join(dir, 'token');
    writeFileSync(
      file,
      `e30.${Buffer.from(JSON.stringify({ aud: ['https://kubernetes.default.svc.cluster.local'] })).toString('base64url')}.sig\n`,
    );
    assert.deepEqual(webhook(['--service-account-token-file', file]).apiServerAudiences, [
      'https://kubernetes.default.svc.cluster.local',
    ]);
    assert.throws(
      () => webhook(['--service-account-token-file', join(dir, 'missing')]),
      /--service-account-token-file: cannot read .*ENOENT/,
    );
    writeFileSync(file, 'not-a-token');
    assert.throws(
      () => webhook(['--service-account-token-file', file]),
      /--service-account-token-file: .* holds no ServiceAccount token with an audience/,
    );
  });
});
