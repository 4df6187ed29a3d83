// ClusterExternalSecret admission: its externalSecretSpec is checked by the ExternalSecret rules (fields
// reported under spec.externalSecretSpec), refreshTime and selectors as ESO's controller reads them, the
// schema as ESO's CRD; warnings for what selects nothing or everything.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../../webhook/admission/kinds.ts';
import { defaultContext } from '../../../../webhook/admission/context.ts';
import type { EsoAdmissionContext, StoreReference } from '../../../../webhook/rules/eso/index.ts';
import { denials, edit, findings, rules, warnings } from '../../../eso/helpers.ts';

const ces: KubeObject = {
  apiVersion: 'external-secrets.io/v1',
  kind: 'ClusterExternalSecret',
  metadata: { name: 'db' },
  spec: {
    externalSecretName: 'db-credentials',
    namespaceSelectors: [{ matchLabels: { 'team.example.com/db': 'true' } }],
    namespaces: ['team-a'],
    refreshTime: '1m',
    externalSecretMetadata: { labels: { app: 'db' }, annotations: { owner: 'platform' } },
    externalSecretSpec: {
      secretStoreRef: { name: 'vault', kind: 'SecretStore' },
      refreshInterval: '1h',
      data: [{ secretKey: 'password', remoteRef: { key: 'shared/db', property: 'password' } }],
    },
  },
};

void describe('ClusterExternalSecret admission', () => {
  void test('an ESO ClusterExternalSecret is admitted without findings', () => {
    assert.deepEqual(findings(ces), []);
  });

  void test('externalSecretSpec is an ExternalSecret spec: its rules and schema, reported under spec.externalSecretSpec', () => {
    const fs = findings(
      edit(ces, {
        'spec.externalSecretSpec.data': [],
        'spec.externalSecretSpec.target': { creationPolicy: 'Merge', deletionPolicy: 'Delete' },
      }),
    );
    assert.deepEqual(fs.map((f) => [f.field, f.rule]).sort(), [
      ['spec.externalSecretSpec', 'eso.es.data-required'],
      ['spec.externalSecretSpec.target.deletionPolicy', 'eso.es.deletion-policy'],
    ]);
    const schema = findings(edit(ces, { 'spec.externalSecretSpec.secretStoreRef.kind': 'VaultStore' }));
    assert.deepEqual(
      schema.map((f) => [f.field, f.rule]),
      [['spec.externalSecretSpec.secretStoreRef.kind', 'schema.enum']],
    );
    assert.deepEqual(rules(findings(edit(ces, { 'spec.externalSecretSpec': undefined }))), ['schema.required']);
  });

  void test('refreshTime is a Go duration; selectors are ones apimachinery accepts', () => {
    const fs = findings(
      edit(ces, {
        'spec.refreshTime': '1 minute',
        'spec.namespaceSelectors': [{ matchExpressions: [{ key: 'tier', operator: 'In' }] }],
      }),
    );
    assert.deepEqual(
      fs.map((f) => [f.field, f.rule]),
      [
        ['spec.refreshTime', 'eso.ces.refresh-time'],
        ['spec.namespaceSelectors[0].matchExpressions[0].values', 'eso.ces.selector'],
      ],
    );
    assert.match(fs[0]?.message ?? '', /time: unknown unit " minute" in duration "1 minute"/);
    assert.deepEqual(rules(findings(edit(ces, { 'spec.namespaces': ['Team_A'] }))), ['schema.pattern']);
  });

  void test('warnings: nothing selected, every namespace selected, the deprecated namespaceSelector', () => {
    const none = findings(edit(ces, { 'spec.namespaces': undefined, 'spec.namespaceSelectors': undefined }));
    assert.deepEqual(denials(none), []);
    assert.deepEqual(rules(warnings(none)), ['eso.ces.no-namespaces']);
    const everyone = findings(edit(ces, { 'spec.namespaceSelectors': [{}] }));
    assert.deepEqual(
      warnings(everyone).map((f) => [f.field, f.rule]),
      [['spec.namespaceSelectors[0]', 'eso.ces.every-namespace']],
    );
    assert.deepEqual(rules(warnings(findings(edit(ces, { 'spec.namespaceSelector': { matchLabels: { a: 'b' } } })))), [
      'eso.ces.deprecated',
    ]);
  });

  void test('one whose ExternalSecrets read a ClusterSecretStore of another controller class is left to that controller', () => {
    const ctx: EsoAdmissionContext = {
      ...defaultContext({ controllerClass: 'vaultgate' }),
      storeControllerClass: (ref: StoreReference) =>
        ref.kind === 'ClusterSecretStore' && ref.name === 'shared' ? 'eso' : undefined,
    };
    const theirs = edit(ces, {
      'spec.externalSecretSpec.secretStoreRef': { name: 'shared', kind: 'ClusterSecretStore' },
      'spec.externalSecretSpec.data': [],
    });
    assert.deepEqual(findings(theirs, ctx), []);
    assert.deepEqual(rules(findings(edit(theirs, { 'spec.externalSecretSpec.secretStoreRef.name': 'ours' }), ctx)), [
      'eso.es.data-required',
    ]);
  });
});
