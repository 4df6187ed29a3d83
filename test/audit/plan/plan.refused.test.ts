// `vaultgate plan` tells the truth (issue #12 item 7): it runs the controller's pipeline, admission
// first. An object the webhook and the controller refuse is shown as refused, naming each rule, and
// counted as refused, never as "to create".
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { desiredState, type KubeObj } from '../../../audit/access/model.ts';
import { computePlan, renderPlan } from '../../../audit/plan/plan.ts';
import { admissionRefusals } from '../../../cli/commands/plan.ts';
import { admissionDenials } from '../../../controller/reconcilers/common.ts';
import { defaultContext } from '../../../webhook/admission/context.ts';
import type { KubeObject } from '../../../kube/objects.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

function cli(...args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'cli/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' } },
      (err, stdout) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout });
      },
    );
  });
}

const vp = (ns: string, name: string, rules: Array<{ path: string; capabilities: string[] }>): KubeObj => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name, namespace: ns },
  spec: { rules },
});
const vrb = (ns: string, name: string, policies: string[]): KubeObj => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultRoleBinding',
  metadata: { name, namespace: ns },
  spec: { serviceAccounts: ['api'], policies },
});

void describe('plan runs admission first', () => {
  void test('the example the webhook refuses is refused, naming each rule, and counted as refused', async () => {
    const r = await cli('plan', '-f', 'examples/bad-vaultpolicy-sudo-sys.yaml');
    assert.equal(r.code, 1, 'a refusal is something to look at: non-zero exit');
    assert.doesNotMatch(r.stdout, /1 to create/);
    assert.match(
      r.stdout,
      /^x refused policy sys\/policies\/acl\/vaultgate\.team-a\.root-ish {2}\(VaultPolicy team-a\/root-ish\)$/m,
    );
    for (const rule of ['guardrail.forbidden-capability', 'guardrail.forbidden-path', 'guardrail.allowed-path'])
      assert.match(r.stdout, new RegExp(`\\(rule ${rule.replace('.', '\\.')}\\)`));
    assert.match(r.stdout, /Plan: 0 to create, 0 to update, 0 to delete, 0 unchanged, 1 refused\./);
    const json = await cli('plan', '-f', 'examples/bad-vaultpolicy-sudo-sys.yaml', '-o', 'json');
    const plan = JSON.parse(json.stdout) as {
      counts: Record<string, number>;
      items: Array<{ action: string; refusals?: Array<{ rule: string }> }>;
    };
    assert.equal(plan.counts.refused, 1);
    assert.equal(plan.counts.create, 0);
    assert.deepEqual(plan.items[0]?.refusals?.map((x) => x.rule).sort(), [
      'guardrail.allowed-path',
      'guardrail.forbidden-capability',
      'guardrail.forbidden-path',
    ]);
  });

  void test("plan refuses exactly what the controller's re-check refuses (same admission core)", () => {
    const objects = [
      vp('team-a', 'ok', [{ path: 'secret/data/{{namespace}}/app', capabilities: ['read'] }]),
      vp('team-a', 'wide', [
        { path: 'secret/data/+/db', capabilities: ['read'] },
        { path: 'auth/token/create', capabilities: ['update'] },
      ]),
      vrb('team-a', 'api', ['ok', 'wide']),
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultRoleBinding',
        metadata: { name: 'other-ns', namespace: 'team-a' },
        spec: { serviceAccounts: ['team-b:api'], policies: ['ok'] },
      },
    ];
    const refusals = admissionRefusals(objects, 'vaultgate');
    for (const o of objects) {
      const controller = admissionDenials(
        { ...(o as unknown as KubeObject), metadata: { ...o.metadata, namespace: 'team-a' } },
        defaultContext(),
      );
      assert.deepEqual(
        [...new Set((refusals.get(`${o.kind} team-a/${o.metadata.name}`) ?? []).map((f) => f.rule))].sort(),
        [...new Set(controller.map((f) => f.rule))].sort(),
        `${o.kind} ${o.metadata.name}`,
      );
    }
    assert.ok(refusals.has('VaultPolicy team-a/wide'));
    assert.ok(!refusals.has('VaultPolicy team-a/ok'));
  });

  void test('a role is planned without the refused policy it names (the controller binds only Ready policies)', () => {
    const objects = [
      vp('team-a', 'ok', [{ path: 'secret/data/team-a/app', capabilities: ['read'] }]),
      vp('team-a', 'root', [{ path: 'sys/*', capabilities: ['sudo'] }]),
      vrb('team-a', 'api', ['ok', 'root']),
    ];
    const plan = computePlan(desiredState(objects), undefined, { refusals: admissionRefusals(objects, 'vaultgate') });
    assert.deepEqual(
      plan.items.map((i) => `${i.action} ${i.vaultName}`),
      ['create vaultgate.team-a.ok', 'refused vaultgate.team-a.root', 'create vaultgate.team-a.api'],
    );
    const role = plan.items[2]!;
    assert.match(role.diff, /"vaultgate\.team-a\.ok"/);
    assert.doesNotMatch(role.diff, /vaultgate\.team-a\.root/);
    assert.match(role.reason, /written without vaultgate\.team-a\.root/);
    assert.match(renderPlan(plan), /Plan: 2 to create, 0 to update, 0 to delete, 0 unchanged, 1 refused\./);
  });

  void test('with Vault compared: the controller removes the policy it wrote for a refused spec, and leaves a foreign one alone', () => {
    const objects = [vp('team-a', 'root', [{ path: 'sys/*', capabilities: ['sudo'] }])];
    const refusals = admissionRefusals(objects, 'vaultgate');
    const ours =
      '# managed-by: vaultgate\n# namespace: team-a\n# name: root\npath "sys/*" { capabilities = ["sudo"] }\n';
    const plan = computePlan(
      desiredState(objects),
      { policies: new Map([['vaultgate.team-a.root', ours]]), roles: new Map() },
      { refusals },
    );
    assert.deepEqual(
      plan.items.map((i) => i.action),
      ['refused', 'delete'],
    );
    assert.match(plan.items[1]!.diff, /^-path "sys\/\*"/m);
    assert.match(renderPlan(plan), /Plan: 0 to create, 0 to update, 1 to delete, 0 unchanged, 1 refused\./);
    const foreign = computePlan(
      desiredState(objects),
      {
        policies: new Map([['vaultgate.team-a.root', 'path "sys/*" { capabilities = ["sudo"] }\n']]),
        roles: new Map(),
      },
      { refusals },
    );
    assert.deepEqual(
      foreign.items.map((i) => i.action),
      ['refused'],
    );
    assert.match(foreign.items[0]!.reason, /did not write: left alone/);
  });
});
