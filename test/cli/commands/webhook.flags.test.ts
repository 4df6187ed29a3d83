// `vaultgate webhook`'s flags: the defaults the process gets are the declared ones, and a bad value is a
// usage error naming the flag and its rule (the declarations themselves: flags.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { flagsOf } from '../../../cli/commands/flags.ts';
import { WEBHOOK_OPTIONS, WEBHOOK_SECTIONS, webhookOptionsFrom } from '../../../cli/commands/webhook.ts';

const parse = (...args: string[]) =>
  webhookOptionsFrom(
    parseArgs({ args: ['--no-kube', '--no-audit', ...args], options: WEBHOOK_OPTIONS, strict: true }).values,
  );

void test('the webhook: --port, --metrics-port, --drain-seconds, --host defaults are what the process gets', () => {
  const w = webhookOptionsFrom(
    parseArgs({ args: ['--no-kube', '--no-audit'], options: WEBHOOK_OPTIONS, strict: true }).values,
  );
  const dflt = (name: string): unknown => flagsOf(WEBHOOK_SECTIONS).find((f) => f.name === name)?.default;
  assert.equal(w.port, dflt('port'));
  assert.equal(w.metricsPort, dflt('metrics-port'));
  assert.equal(w.drainSeconds, dflt('drain-seconds'));
  assert.equal(w.host, dflt('host'));
});

test('--admission-workers: 1 by default (workers are opt-in); 0 or a fraction is refused naming the flag', () => {
  assert.equal(parse().admissionWorkers, 1);
  assert.equal(parse('--admission-workers', '2').admissionWorkers, 2);
  for (const bad of ['0', '1.5', 'two'])
    assert.throws(() => parse('--admission-workers', bad), /--admission-workers must be a whole number between 1 and/);
});

test('--client-subject without --client-ca-file is refused: there would be no subject to pin', () => {
  assert.throws(() => parse('--client-subject', 'kube-apiserver'), /--client-subject needs --client-ca-file/);
});

test('--allowed-vault-server must be an origin: a path is refused naming the flag', () => {
  assert.deepEqual(parse('--allowed-vault-server', 'https://vault.example:8200').vaultServers, [
    'https://vault.example:8200',
  ]);
  assert.throws(
    () => parse('--allowed-vault-server', 'https://vault.example:8200/v1/secret'),
    /--allowed-vault-server must be an http\(s\) origin/,
  );
});
