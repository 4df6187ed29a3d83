// `vaultgate controller` flags → ControllerAppOptions, including the webhook certificate keeper's flags,
// and agreement with what the Helm chart passes.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment --
   rendered manifests are untyped YAML */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import { CONTROLLER_HELP, CONTROLLER_OPTIONS, controllerOptionsFrom } from '../../../cli/commands/controller.ts';
import { silentLogger } from '../../../observability/log.ts';
import { FakeKubeClient } from '../../sim/kube-fake-client.ts';
import { helmSkip, render, one } from '../../chart/render.ts';

const deps = { client: new FakeKubeClient(), log: silentLogger, env: { POD_NAMESPACE: 'vaultgate', VAULT_TOKEN: 't' } };
const parse = (args: string[]) =>
  controllerOptionsFrom(parseArgs({ args, options: CONTROLLER_OPTIONS, strict: true }).values, deps);

void describe('vaultgate controller flags', () => {
  void test('the webhook certificate flags turn the keeper on, with the pod namespace by default', () => {
    const o = parse([
      '--vault-addr=http://vault:8200',
      '--webhook-cert-secret=vg-tls',
      '--webhook-service=vg-webhook',
      '--webhook-config-selector=app=vg',
      '--webhook-cert-days=90',
      '--webhook-ca-days=1000',
    ]);
    assert.deepEqual(o.webhookCerts, {
      namespace: 'vaultgate',
      secretName: 'vg-tls',
      service: 'vg-webhook',
      configSelector: 'app=vg',
      leafValidityDays: 90,
      caValidityDays: 1000,
    });
    assert.equal(
      parse(['--vault-addr=http://vault:8200']).webhookCerts,
      undefined,
      'off without --webhook-cert-secret',
    );
    assert.equal(
      parse(['--vault-addr=http://v', '--webhook-cert-secret=s', '--webhook-service=svc', '--webhook-namespace=other'])
        .webhookCerts?.namespace,
      'other',
    );
  });

  void test('inconsistent certificate flags are refused with the flag named', () => {
    assert.throws(
      () => parse(['--vault-addr=http://v', '--webhook-cert-secret=s']),
      /--webhook-service is required with --webhook-cert-secret/,
    );
    assert.throws(
      () => parse(['--vault-addr=http://v', '--webhook-service=svc']),
      /--webhook-service needs --webhook-cert-secret/,
    );
    assert.throws(
      () =>
        parse(['--vault-addr=http://v', '--webhook-cert-secret=s', '--webhook-service=svc', '--webhook-cert-days=0']),
      /--webhook-cert-days must be a whole number/,
    );
    assert.throws(
      () =>
        parse([
          '--vault-addr=http://v',
          '--webhook-cert-secret=s',
          '--webhook-service=svc',
          '--webhook-cert-days=400',
          '--webhook-ca-days=300',
        ]),
      /must be longer than --webhook-cert-days/,
    );
    assert.throws(() => parse([]), /--vault-addr \(or VAULT_ADDR\) is required/);
    assert.throws(() => parse(['--vault-addr=http://v', '--name-prefix=a.b']), /--name-prefix/);
  });

  void test('--help documents every flag', () => {
    for (const flag of Object.keys(CONTROLLER_OPTIONS))
      assert.ok(CONTROLLER_HELP.includes(`--${flag}`), `--${flag} in the help`);
  });

  void test('every argument the chart passes to the controller is accepted', { skip: helmSkip() }, () => {
    const deployment = one(render(), 'Deployment', '-controller');
    const container = deployment.spec.template.spec.containers[0];
    const args: string[] = container.args;
    assert.equal(args[0], 'controller');
    assert.ok(
      args.some((a) => a.startsWith('--webhook-cert-secret=')),
      'the default chart wires the keeper',
    );
    const o = parse(args.slice(1));
    assert.equal(o.webhookCerts?.namespace, 'vaultgate');
    assert.ok(o.webhookCerts?.service.endsWith('webhook'), o.webhookCerts?.service);
    assert.ok(o.leaderElection, 'leader-elected');
  });
});
