// #14 in the chart: the Vault servers stores may send tokens to (--allowed-vault-server, from vault.address
// and eso.allowedVaultServers) reach both processes, and watchNamespaces reaches both processes and the
// webhook configurations. Rendered with the helm binary built by `npm run upstream`.
/* eslint-disable @typescript-eslint/no-unsafe-member-access --
   rendered manifests are untyped YAML that these checks walk field by field */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CHART_DIR, helm, helmSkip, one, ofKind, render, type Obj } from './render.ts';

const args = (objs: Obj[], component: 'controller' | 'webhook'): string[] =>
  (one(objs, 'Deployment', `-${component}`).spec.template.spec.containers[0] as Obj).args as string[];

void describe('chart: token oracle and namespaced install settings', { skip: helmSkip() }, () => {
  void test('both processes get vault.address (as an origin) and eso.allowedVaultServers as --allowed-vault-server', () => {
    const objs = render({
      set: [
        'vault.address=https://vault.example:8200/some/path',
        'eso.allowedVaultServers[0]=https://vault-b.example:8200',
      ],
    });
    for (const c of ['controller', 'webhook'] as const) {
      assert.deepEqual(
        args(objs, c).filter((a) => a.startsWith('--allowed-vault-server')),
        ['--allowed-vault-server=https://vault.example:8200', '--allowed-vault-server=https://vault-b.example:8200'],
        c,
      );
    }
  });

  void test('a malformed extra server fails helm install with the offending path', () => {
    const r = helm(['template', 'rel', CHART_DIR, '--set', 'eso.allowedVaultServers[0]=vault-b:8200']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /eso\.allowedVaultServers\.0|allowedVaultServers/);
  });

  void test('watchNamespaces: --namespace for each on both processes, and the webhooks see only those namespaces', () => {
    const objs = render({ valuesFile: 'ci/namespaced-values.yaml' });
    for (const c of ['controller', 'webhook'] as const) {
      assert.deepEqual(
        args(objs, c).filter((a) => a.startsWith('--namespace')),
        ['--namespace=team-a', '--namespace=team-b'],
        c,
      );
    }
    for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
      for (const hook of (ofKind(objs, kind)[0]?.webhooks ?? []) as Obj[]) {
        const exprs = hook.namespaceSelector.matchExpressions as Obj[];
        assert.deepEqual(
          exprs.find((e) => e.operator === 'In'),
          { key: 'kubernetes.io/metadata.name', operator: 'In', values: ['team-a', 'team-b'] },
          `${kind} ${String(hook.name)}`,
        );
      }
    }
    const defaults = render();
    assert.deepEqual(
      args(defaults, 'controller').filter((a) => a.startsWith('--namespace')),
      [],
      'cluster-wide by default',
    );
  });

  void test('watchNamespaces must be namespace names', () => {
    const r = helm(['template', 'rel', CHART_DIR, '--set', 'watchNamespaces[0]=Team_A']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /watchNamespaces/);
  });
});
