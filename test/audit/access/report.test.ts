// Effective access from manifest fixtures: who-can queries, per-subject grants, the matrix, findings,
// the JSON schema, and the HTML page being self-contained.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildAccessModel,
  buildAccessReport,
  isBroadPattern,
  samplePath,
  subjectGrants,
  whoCan,
} from '../../../audit/access/report.ts';
import { desiredState, type KubeObj } from '../../../audit/access/model.ts';
import { loadManifests } from '../../../audit/access/sources.ts';
import { contextFromManifests, evaluate, parseManifests } from '../../../cli/commands/validate.ts';
import { readFileSync } from 'node:fs';
import { EXAMPLE, vp, vrb } from './fixtures.ts';

const state = desiredState(loadManifests([EXAMPLE]));
const model = buildAccessModel(state);

/** The webhook's decision on every manifest of the example, with the example as the cluster (vaultgate validate). */
const manifests = parseManifests(readFileSync(EXAMPLE, 'utf8'), EXAMPLE);
const decisions = evaluate(manifests, contextFromManifests(manifests, { prefix: 'vaultgate', namespace: 'default' }), {
  namespace: 'default',
  user: 'test',
});
const decisionOf = (kind: string, ns: string, name: string) =>
  decisions.find((d) => d.kind === kind && d.namespace === ns && d.name === name);
/** What the cluster holds after `kubectl apply -f` of the example: the objects admission lets in. */
const admittedModel = buildAccessModel(
  desiredState(
    manifests.filter((_, i) => decisions[i]?.outcome !== 'DENIED').map((m) => m.object as unknown as KubeObj),
  ),
);

void describe('queries', () => {
  void test("orders/app's secret/data/+/db is refused by the built-in floor although the only guardrail selecting orders is warn", () => {
    const d = decisionOf('VaultPolicy', 'orders', 'app');
    assert.equal(d?.outcome, 'DENIED');
    assert.deepEqual(d?.denials, [
      'spec.rules[1].path: "secret/data/+/db" is forbidden by the built-in guardrail defaults: it reaches outside the allowed paths "secret/data/orders/*", "secret/metadata/orders/*" (rule guardrail.allowed-path)',
    ]);
    assert.deepEqual(d?.warnings, [], 'not merely a warning from prod-tenants');
    // The report on the manifests names the same refusal.
    const f = buildAccessReport(state, { source: 'test' }).findings.filter(
      (x) => x.object === 'VaultPolicy orders/app' && x.id.startsWith('guardrail.'),
    );
    assert.deepEqual(
      f.map((x) => [x.id, x.path]),
      [['guardrail.allowed-path', 'secret/data/+/db']],
    );
    assert.match(f[0]?.message ?? '', /is forbidden by the built-in guardrail defaults/);
  });

  void test("who can read secret/data/payments/db once applied: only payments' own SAs (orders-api is refused by default)", () => {
    const { allowed } = whoCan(admittedModel, 'secret/data/payments/db', 'read');
    assert.deepEqual(
      allowed.map((e) => [e.subject, e.matchedPattern, e.policies.join()]),
      [
        ['payments/api', 'secret/data/payments/db', 'payments/db-read'],
        ['payments/worker', 'secret/data/payments/db', 'payments/db-read'],
      ],
    );
  });

  void test("an enforce guardrail's relaxFloor is what lets payments read the shared tree; the warn guardrail only warns", () => {
    const d = decisionOf('VaultPolicy', 'payments', 'shared-config');
    assert.equal(d?.outcome, 'ALLOWED');
    assert.match(d?.warnings.join('\n') ?? '', /violates guardrail "prod-tenants"/);
    assert.deepEqual(
      decisionOf('VaultPolicy', 'platform', 'operator')?.rules.filter((r) => r.startsWith('guardrail.')),
      ['guardrail.forbidden-capability', 'guardrail.forbidden-path', 'guardrail.allowed-path'],
    );
  });

  void test('a deny in the raw-text policy keeps payments/batch out of payments/db', () => {
    const { denied } = whoCan(model, 'secret/data/payments/db', 'read');
    const batch = denied.find((e) => e.subject === 'payments/batch');
    assert.ok(batch);
    assert.match(batch.reason, /denied by policy "payments\/shared-config"/);
  });

  void test('nobody can write payments/db', () => {
    assert.deepEqual(whoCan(model, 'secret/data/payments/db', 'update').allowed, []);
  });

  void test("access is per role: a deny in one role's policy does not hide another role's grant", () => {
    const s = desiredState([
      vp('t', 'grant', [{ path: 'secret/data/t/x', capabilities: ['read'] }]),
      vp('t', 'block', [{ path: 'secret/data/t/x', capabilities: ['deny'] }]),
      vrb('t', 'a', ['app'], ['grant']),
      vrb('t', 'b', ['app'], ['block']),
    ]);
    const { allowed, denied } = whoCan(buildAccessModel(s), 'secret/data/t/x', 'read');
    assert.deepEqual(
      allowed.map((e) => e.role),
      ['vaultgate.t.a'],
    );
    assert.deepEqual(
      denied.map((e) => e.role),
      ['vaultgate.t.b'],
    );
  });

  void test('what can payments/api do: its patterns with the capabilities that hold there', () => {
    const grants = subjectGrants(model, 'payments/api');
    assert.deepEqual(
      grants?.map((g) => [g.pattern, g.capabilities.join(' '), g.role]),
      [
        ['secret/data/payments/db', 'read', 'vaultgate.payments.api'],
        ['secret/metadata/payments/*', 'list', 'vaultgate.payments.api'],
      ],
    );
    assert.equal(subjectGrants(model, 'payments/nobody'), undefined);
  });

  void test('the matrix: subjects × patterns, sudo shown where it holds', () => {
    const r = buildAccessReport(state, { source: 'test', now: new Date(0) });
    const i = r.matrix.subjects.indexOf('platform/vault-operator');
    const j = r.matrix.patterns.indexOf('sys/mounts/*');
    assert.deepEqual(r.matrix.cells[i]?.[j], ['read', 'list', 'sudo']);
    const k = r.matrix.subjects.indexOf('payments/api');
    assert.deepEqual(r.matrix.cells[k]?.[j], []);
  });

  void test('samplePath replaces wildcards with a placeholder no policy names', () => {
    assert.equal(samplePath('secret/data/+/db'), 'secret/data/\u2026/db');
    assert.equal(samplePath('secret/data/x/*'), 'secret/data/x/\u2026');
  });
});

void describe('findings', () => {
  const r = buildAccessReport(state, { source: 'test' });
  const ids = (object: string) =>
    r.findings
      .filter((f) => f.object === object)
      .map((f) => f.id)
      .sort();

  void test('sudo and forbidden sys/* path (built-in guardrail for an unselected namespace)', () => {
    assert.deepEqual(ids('VaultPolicy platform/operator'), [
      'access.broad-glob',
      'access.broad-glob',
      'access.sudo',
      'guardrail.allowed-path',
      'guardrail.allowed-path',
      'guardrail.forbidden-capability',
      'guardrail.forbidden-path',
    ]);
    assert.equal(r.findings[0]?.severity, 'high', 'high findings first');
  });

  void test("a grant outside the namespace's guardrail templates, in warn mode", () => {
    const f = r.findings.find(
      (x) => x.object === 'VaultPolicy payments/shared-config' && x.id === 'guardrail.allowed-path',
    );
    assert.match(
      f?.message ?? '',
      /violates guardrail "prod-tenants": it reaches outside the allowed paths "secret\/data\/payments\/\*"/,
    );
    assert.equal(f?.path, 'secret/data/shared/*');
  });

  void test('a broad + glob reaching other namespaces', () => {
    assert.ok(r.findings.some((x) => x.id === 'access.broad-glob' && x.path === 'secret/data/+/db'));
    assert.equal(isBroadPattern('secret/data/team/*'), false);
    assert.equal(isBroadPattern('secret/data/*'), true);
    assert.equal(isBroadPattern('*'), true);
    assert.equal(isBroadPattern('secret/data/team/app'), false);
  });

  void test('a binding to a missing policy', () => {
    const f = r.findings.find((x) => x.id === 'binding.missing-policy');
    assert.equal(f?.object, 'VaultRoleBinding payments/batch');
    assert.match(f?.message ?? '', /"reporting"/);
    assert.deepEqual(r.subjects.find((s) => s.subject === 'payments/batch')?.roles[0]?.missingPolicies, ['reporting']);
  });

  void test('unbound and unparsable policies', () => {
    const s = desiredState([
      vp('x', 'lonely', [{ path: 'secret/data/x/a', capabilities: ['read'] }]),
      {
        apiVersion: 'vaultgate.io/v1alpha1',
        kind: 'VaultPolicy',
        metadata: { name: 'broken', namespace: 'x' },
        spec: { policy: 'path "a" { capabilities = ["read" }' },
      },
    ]);
    const rr = buildAccessReport(s, { source: 't' });
    assert.deepEqual(rr.findings.map((f) => `${f.id} ${f.object}`).sort(), [
      'policy.unbound VaultPolicy x/broken',
      'policy.unbound VaultPolicy x/lonely',
      'policy.unparsable VaultPolicy x/broken',
    ]);
  });
});
