// PushSecret admission: ESO's v1alpha1 schema, what ESO's controller would fail on at every sync refused
// up front naming the field, generators refused by name, templates checked as an ExternalSecret's.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../../webhook/admission/kinds.ts';
import { defaultContext } from '../../../../webhook/admission/context.ts';
import type { EsoAdmissionContext, StoreReference } from '../../../../webhook/rules/eso/index.ts';
import { denials, edit, findings, rules, warnings } from '../../../eso/helpers.ts';

const ps: KubeObject = {
  apiVersion: 'external-secrets.io/v1alpha1',
  kind: 'PushSecret',
  metadata: { name: 'push', namespace: 'team-a' },
  spec: {
    refreshInterval: '10s',
    updatePolicy: 'Replace',
    deletionPolicy: 'Delete',
    secretStoreRefs: [{ name: 'vault', kind: 'SecretStore' }],
    selector: { secret: { name: 'app' } },
    data: [{ match: { secretKey: 'password', remoteRef: { remoteKey: 'team-a/app', property: 'password' } } }],
  },
};

void describe('PushSecret admission', () => {
  void test('an ESO PushSecret is admitted without findings', () => {
    assert.deepEqual(findings(ps, defaultContext(), 'team-a'), []);
  });

  void test("the schema is ESO's: required fields, enums", () => {
    assert.deepEqual(rules(findings(edit(ps, { 'spec.selector': undefined }))), ['schema.required']);
    assert.deepEqual(rules(findings(edit(ps, { 'spec.updatePolicy': 'Always' }))), ['schema.enum']);
    assert.deepEqual(rules(findings(edit(ps, { 'spec.data.0.match.remoteRef.remoteKey': undefined }))), [
      'schema.required',
    ]);
  });

  void test("what ESO's controller fails on at every sync is refused naming the field", () => {
    const fs = findings(
      edit(ps, {
        'spec.refreshInterval': 'hourly',
        'spec.secretStoreRefs': [{ kind: 'SecretStore' }, { name: 'vault' }],
        'spec.dataTo': [
          { storeRef: { name: 'elsewhere' } },
          { storeRef: { name: 'vault' }, remoteKey: 'team-a/all', rewrite: [{ regexp: { source: 'a', target: 'b' } }] },
          { storeRef: { name: 'vault' }, match: { regexp: '(' } },
        ],
      }),
    );
    assert.deepEqual(
      denials(fs).map((f) => [f.field, f.rule]),
      [
        ['spec.refreshInterval', 'eso.ps.refresh-interval'],
        ['spec.secretStoreRefs[0]', 'eso.ps.store-ref'],
        ['spec.dataTo[0].storeRef.name', 'eso.ps.datato-store'],
        ['spec.dataTo[1].rewrite', 'eso.ps.datato-rewrite'],
        ['spec.dataTo[2].match.regexp', 'eso.ps.regexp'],
      ],
    );
  });

  void test('generators are refused by name; a Secret needs a name or a selector', () => {
    const gen = findings(
      edit(ps, {
        'spec.selector': {
          generatorRef: { apiVersion: 'generators.external-secrets.io/v1alpha1', kind: 'Password', name: 'pw' },
        },
      }),
    );
    assert.deepEqual(
      gen.map((f) => [f.field, f.rule]),
      [['spec.selector.generatorRef', 'eso.ps.unsupported']],
    );
    assert.deepEqual(rules(findings(edit(ps, { 'spec.selector': { secret: {} } }))), ['eso.ps.selector']);
    assert.deepEqual(
      rules(
        warnings(
          findings(edit(ps, { 'spec.selector': { secret: { name: 'app', selector: { matchLabels: { a: 'b' } } } } })),
        ),
      ),
      ['eso.ps.selector'],
    );
  });

  void test('spec.template is checked as an ExternalSecret template, reported under spec.template', () => {
    const fs = findings(
      edit(ps, { 'spec.template': { data: { a: '{{ randAlphaNum 8 }}', b: '{{ .password | b64enc }}' } } }),
    );
    assert.deepEqual(
      fs.map((f) => [f.field, f.rule]),
      [['spec.template.data.a', 'eso.es.template-unsupported']],
    );
  });

  void test("one whose named stores are all another controller's is left to that controller", () => {
    const ctx: EsoAdmissionContext = {
      ...defaultContext({ controllerClass: 'vaultgate' }),
      storeControllerClass: (ref: StoreReference) => (ref.name === 'vault' ? 'eso' : undefined),
    };
    const bad = edit(ps, { 'spec.refreshInterval': 'hourly' });
    assert.deepEqual(findings(bad, ctx, 'team-a'), []);
    assert.deepEqual(
      rules(findings(edit(bad, { 'spec.secretStoreRefs': [{ name: 'vault' }, { name: 'ours' }] }), ctx, 'team-a')),
      ['eso.ps.refresh-interval'],
    );
  });
});
