// The pure admission core: patches, pass-through cases, response shape, dry-run, UPDATE semantics.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { applyPatch } from 'rfc6902';
import {
  decideSync,
  mutate,
  validate,
  reviewMutation,
  reviewValidation,
  decide,
} from '../../../webhook/review/review.ts';
import { KindRegistry } from '../../../webhook/admission/kinds.ts';
import { defaultContext } from '../../../webhook/admission/context.ts';
import type { AdmissionRequest } from '../../../webhook/admission/types.ts';

const ctx = defaultContext();
function vpRequest(over: Partial<AdmissionRequest> = {}, metadata: Record<string, unknown> = {}): AdmissionRequest {
  return {
    uid: 'u-1',
    kind: { group: 'vaultgate.io', version: 'v1alpha1', kind: 'VaultPolicy' },
    resource: { group: 'vaultgate.io', version: 'v1alpha1', resource: 'vaultpolicies' },
    name: 'app',
    namespace: 'team-a',
    operation: 'CREATE',
    userInfo: { username: 'alice@example.com' },
    object: {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultPolicy',
      metadata: { name: 'app', namespace: 'team-a', ...metadata },
      spec: { rules: [{ path: 'secret/data/{{namespace}}/app/*', capabilities: ['LIST', 'read', 'Read'] }] },
    },
    ...over,
  };
}

void describe('mutation', () => {
  void test('defaults and normalisation as a JSON Patch that applies cleanly to the original', () => {
    const req = vpRequest();
    const d = mutate(req, ctx);
    assert.equal(d.response.allowed, true);
    assert.equal(d.response.patchType, 'JSONPatch');
    assert.deepEqual(JSON.parse(Buffer.from(d.response.patch ?? '', 'base64').toString()), d.patchOps);
    const copy = structuredClone(req.object);
    assert.deepEqual(applyPatch(copy, d.patchOps as Parameters<typeof applyPatch>[1]).filter(Boolean), []);
    const spec = (copy as { spec: { vaultName: string; rules: Array<{ path: string; capabilities: string[] }> } }).spec;
    assert.equal(spec.vaultName, 'vaultgate.team-a.app');
    assert.deepEqual(spec.rules[0], { path: 'secret/data/team-a/app/*', capabilities: ['read', 'list'] });
    const meta = (copy as { metadata: { labels: Record<string, string>; annotations: Record<string, string> } })
      .metadata;
    assert.equal(meta.labels['app.kubernetes.io/managed-by'], 'vaultgate');
    assert.equal(meta.annotations['vaultgate.io/created-by'], 'alice@example.com');
    assert.equal(meta.annotations['vaultgate.io/last-applied-by'], 'alice@example.com');
  });

  void test('never adds under a missing parent: absent labels/annotations are added whole', () => {
    const ops = mutate(vpRequest(), ctx).patchOps;
    assert.ok(ops.some((o) => o.op === 'add' && o.path === '/metadata/labels'));
    assert.ok(!ops.some((o) => o.path.startsWith('/metadata/labels/')));
  });

  void test('keys with "/" are escaped as ~1 when the parent map exists', () => {
    const ops = mutate(vpRequest({}, { labels: { team: 'a' }, annotations: { note: 'x' } }), ctx).patchOps;
    assert.ok(
      ops.some(
        (o) => o.op === 'add' && o.path === '/metadata/labels/app.kubernetes.io~1managed-by' && o.value === 'vaultgate',
      ),
    );
    assert.ok(ops.some((o) => o.path === '/metadata/annotations/vaultgate.io~1last-applied-by'));
  });

  void test('an already-normalised object gets no patch beyond ownership metadata it already has', () => {
    const req = vpRequest();
    const first = decideSync(req, ctx).object;
    const again = mutate({ ...req, object: first ?? null }, ctx);
    assert.deepEqual(again.patchOps, []);
    assert.equal(again.response.patch, undefined);
  });

  void test('UPDATE: created-by is kept; last-applied-by moves only when the spec changes', () => {
    const created = decideSync(vpRequest(), ctx).object as Record<string, unknown>;
    const finalizerOnly = structuredClone(created);
    (finalizerOnly.metadata as Record<string, unknown>).finalizers = ['vaultgate.io/finalizer'];
    const byController = mutate(
      vpRequest({
        operation: 'UPDATE',
        userInfo: { username: 'system:serviceaccount:vaultgate:controller' },
        object: finalizerOnly,
        oldObject: created,
      }),
      ctx,
    );
    assert.deepEqual(byController.patchOps, []);
    const edited = structuredClone(created);
    (edited.spec as { rules: Array<{ capabilities: string[] }> }).rules[0]!.capabilities = ['read'];
    const byBob = mutate(
      vpRequest({ operation: 'UPDATE', userInfo: { username: 'bob' }, object: edited, oldObject: created }),
      ctx,
    );
    assert.deepEqual(byBob.patchOps, [
      { op: 'replace', path: '/metadata/annotations/vaultgate.io~1last-applied-by', value: 'bob' },
    ]);
  });
});

void describe('pass-through and unexpected requests', () => {
  void test('DELETE is allowed without a patch by both webhooks', () => {
    const req = vpRequest({ operation: 'DELETE', object: null, oldObject: vpRequest().object ?? null });
    const { mutation, validation } = decideSync(req, ctx);
    assert.deepEqual(
      [mutation.response.allowed, mutation.patchOps.length, validation.response.allowed],
      [true, 0, true],
    );
  });

  void test('the status subresource passes through (the controller writes it)', () => {
    const req = vpRequest({
      subResource: 'status',
      operation: 'UPDATE',
      object: { apiVersion: 'vaultgate.io/v1alpha1', kind: 'VaultPolicy', metadata: { name: 'app' }, spec: {} },
    });
    assert.equal(validate(req, ctx).response.allowed, true);
    assert.deepEqual(mutate(req, ctx).patchOps, []);
  });

  void test('kinds of groups we do not serve are allowed untouched', () => {
    const req = vpRequest({
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } },
    });
    assert.equal(validate(req, ctx).response.allowed, true);
    assert.deepEqual(mutate(req, ctx).patchOps, []);
  });

  void test('a served group with an unserved version is refused, naming the kind, version and the served one', () => {
    const req = vpRequest({ kind: { group: 'vaultgate.io', version: 'v1beta1', kind: 'VaultPolicy' } });
    const d = validate(req, ctx);
    assert.equal(d.response.allowed, false);
    assert.match(
      d.response.status?.message ?? '',
      /VaultPolicy vaultgate\.io\/v1beta1 is not served by vaultgate; use vaultgate\.io\/v1alpha1/,
    );
    assert.deepEqual(d.rules, ['admission.unserved-version']);
  });

  void test('handlers come from the registry passed in', () => {
    const reg = new KindRegistry([
      {
        group: 'example.io',
        version: 'v1',
        kind: 'Thing',
        validate: () => [{ field: 'spec.a', rule: 'thing.bad', message: 'is bad', severity: 'deny' }],
      },
    ]);
    const req = vpRequest({ kind: { group: 'example.io', version: 'v1', kind: 'Thing' } });
    assert.equal(validate(req, ctx, reg).response.status?.message, 'spec.a: is bad (rule thing.bad)');
    assert.throws(
      () => reg.register({ group: 'example.io', version: 'v1', kind: 'Thing', validate: () => [] }),
      /registered twice/,
    );
  });
});

void describe('response shape', () => {
  const bad = vpRequest({
    object: {
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultPolicy',
      metadata: { name: 'app', namespace: 'team-a' },
      spec: {
        rules: [
          { path: 'sys/*', capabilities: ['sudo'] },
          { path: '/x', capabilities: ['read'] },
        ],
      },
    },
  });

  void test('denials: 403, every finding one sentence, reason Forbidden when a guardrail refused', () => {
    const d = validate(bad, ctx);
    assert.equal(d.response.allowed, false);
    assert.equal(d.response.uid, 'u-1');
    assert.deepEqual(
      [d.response.status?.code, d.response.status?.reason, d.response.status?.status],
      [403, 'Forbidden', 'Failure'],
    );
    const lines = (d.response.status?.message ?? '').split('\n');
    assert.ok(lines.length >= 4, lines.join('\n'));
    assert.ok(
      lines.every((l) => /^spec\.rules\[\d\]\.[a-z[\]0-9]+: .+ \(rule [a-z.-]+\)$/.test(l)),
      lines.join('\n'),
    );
    assert.deepEqual(d.rules, [...new Set(d.rules)]);
    for (const rule of [
      'guardrail.forbidden-capability',
      'guardrail.forbidden-path',
      'guardrail.allowed-path',
      'vaultpolicy.path-syntax',
    ])
      assert.ok(d.rules.includes(rule), rule);
    assert.equal(d.response.auditAnnotations?.rules, d.rules.join(','));
  });

  void test('reason Invalid when only validity rules refused', () => {
    const d = validate(
      vpRequest({
        object: { apiVersion: 'vaultgate.io/v1alpha1', kind: 'VaultPolicy', metadata: { name: 'app' }, spec: {} },
      }),
      ctx,
    );
    assert.equal(d.response.status?.reason, 'Invalid');
  });

  void test('dry-run requests get the identical answer', () => {
    const plain = decideSync(bad, ctx);
    const dry = decideSync({ ...bad, dryRun: true }, ctx);
    assert.deepEqual(dry, plain);
    const good = vpRequest();
    assert.deepEqual(decideSync({ ...good, dryRun: true }, ctx), decideSync(good, ctx));
  });

  void test('the async entry points give the same decisions', async () => {
    assert.deepEqual(await reviewValidation(bad, ctx), validate(bad, ctx));
    assert.deepEqual(await reviewMutation(bad, ctx), mutate(bad, ctx));
    const both = await decide(bad, ctx);
    assert.equal(both.validation.response.allowed, false);
  });

  void test('decide validates the mutated object (upper-case capabilities are fixed, not refused)', () => {
    const { validation } = decideSync(vpRequest(), ctx);
    assert.equal(validation.response.allowed, true, validation.response.status?.message);
  });
});
