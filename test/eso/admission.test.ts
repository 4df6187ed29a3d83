// The ESO handlers behind the admission core, as the apiserver would see them: AdmissionRequest in,
// allowed/denied with readable messages and warnings out.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext } from '../../webhook/admission/context.ts';
import { decideSync, defaultRegistry } from '../../webhook/review/review.ts';
import type { KubeObject } from '../../webhook/admission/kinds.ts';
import { edit, loadManifests, request } from './helpers.ts';

const store = loadManifests('examples/eso-secretstore.yaml')[0] as KubeObject;
const es = loadManifests('examples/eso-externalsecret.yaml')[0] as KubeObject;
const ctx = defaultContext();

void describe('admission core with the ESO handlers', () => {
  void test('the three ESO kinds are registered in external-secrets.io/v1', () => {
    const reg = defaultRegistry();
    for (const kind of ['SecretStore', 'ClusterSecretStore', 'ExternalSecret']) {
      assert.ok(reg.get({ group: 'external-secrets.io', version: 'v1', kind }), kind);
    }
  });

  void test('a valid store is allowed and not patched (ESO has no mutating webhook)', () => {
    const { mutation, validation } = decideSync(request(store, 'team-a'), ctx);
    assert.equal(mutation.patchOps.length, 0);
    assert.equal(validation.response.allowed, true);
    assert.equal(validation.response.warnings, undefined);
  });

  void test('an unsupported provider is denied with one readable sentence naming field and rule', () => {
    const aws = edit(store, { 'spec.provider': { aws: { service: 'SecretsManager', region: 'eu-west-1' } } });
    const { validation } = decideSync(request(aws, 'team-a'), ctx);
    assert.equal(validation.response.allowed, false);
    assert.equal(validation.response.status?.code, 403);
    assert.equal(
      validation.response.status?.message,
      'spec.provider.aws: provider aws is not supported by vaultgate (only vault) (rule eso.store.provider-unsupported)',
    );
  });

  void test('every problem is reported, schema and semantic alike', () => {
    const bad = edit(es, {
      'spec.secretStoreRef.kind': 'VaultStore',
      'spec.target.manifest': { apiVersion: 'v1', kind: 'ConfigMap' },
      'spec.target.deletionPolicy': 'Delete',
      'spec.target.creationPolicy': 'Merge',
    });
    const { validation } = decideSync(request(bad, 'team-a'), ctx);
    assert.equal(validation.response.allowed, false);
    const lines = validation.response.status?.message?.split('\n') ?? [];
    assert.equal(lines.length, 3, lines.join('\n'));
    assert.ok(validation.rules.includes('eso.es.unsupported') && validation.rules.includes('eso.es.deletion-policy'));
    assert.ok(
      lines.some((l) => l.startsWith('spec.secretStoreRef.kind: ')),
      lines.join('\n'),
    );
  });

  void test('warnings reach kubectl for allowed objects', () => {
    const css = edit(store, {
      kind: 'ClusterSecretStore',
      'metadata.namespace': undefined,
      'spec.provider.vault.auth.kubernetes.serviceAccountRef': undefined,
      'spec.provider.vault.caProvider.namespace': 'vault',
    });
    const { validation } = decideSync(request(css), ctx);
    assert.equal(validation.response.allowed, true);
    assert.deepEqual(
      validation.response.warnings?.map((w) => w.replace(/:.*\(rule /, ' (rule ')),
      ['spec.provider.vault.auth.kubernetes.serviceAccountRef (rule eso.store.kubernetes-identity)'],
    );
  });

  void test('a store of another controller class is allowed untouched even when it would be refused', () => {
    const foreign = edit(store, { 'spec.controller': 'eso', 'spec.provider': { gcpsm: { projectID: 'p' } } });
    const { validation } = decideSync(request(foreign, 'team-a'), defaultContext({ controllerClass: 'vaultgate' }));
    assert.equal(validation.response.allowed, true);
    assert.deepEqual(validation.rules, []);
  });

  void test('deletes pass through (ESO #2015: an ExternalSecret must stay deletable)', () => {
    const req = {
      ...request(edit(es, { 'spec.data': [] }), 'team-a'),
      operation: 'DELETE' as const,
      oldObject: es,
      object: null,
    };
    assert.equal(decideSync(req, ctx).validation.response.allowed, true);
  });

  void describe('ratcheting: objects stored before vaultgate (or while its webhook was down) never get stuck', () => {
    const invalid = edit(es, { 'spec.target.manifest': { apiVersion: 'v1', kind: 'ConfigMap' } });
    const update = (object: KubeObject, oldObject: KubeObject) => ({
      ...request(object, 'team-a'),
      operation: 'UPDATE' as const,
      oldObject,
    });

    void test('an UPDATE that leaves spec unchanged (a label, a finalizer removal) is allowed with the findings as warnings', () => {
      const relabelled = edit(invalid, { 'metadata.labels': { team: 'a' } });
      const { validation } = decideSync(update(relabelled, invalid), ctx);
      assert.equal(validation.response.allowed, true);
      assert.match(
        validation.response.warnings?.[0] ?? '',
        /a generic \(non-Secret\) target is not supported by vaultgate.*\(tolerated: this update leaves spec unchanged\)/,
      );
    });

    void test('an UPDATE to an object being deleted is allowed', () => {
      const deleting = edit(invalid, {
        'metadata.deletionTimestamp': '2026-01-01T00:00:00Z',
        'spec.refreshInterval': '5m',
      });
      assert.equal(decideSync(update(deleting, invalid), ctx).validation.response.allowed, true);
    });

    void test('an UPDATE that changes spec is validated in full', () => {
      const changed = edit(invalid, { 'spec.refreshInterval': '5m' });
      assert.equal(decideSync(update(changed, invalid), ctx).validation.response.allowed, false);
    });
  });
});
