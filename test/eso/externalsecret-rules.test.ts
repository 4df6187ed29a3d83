// ExternalSecret admission: ESO's rules (ESO's messages) and vaultgate's refusals of what it does not
// implement. Each rule: an accepted and a refused manifest.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext } from '../../webhook/admission/context.ts';
import type { KubeObject } from '../../webhook/admission/kinds.ts';
import type { EsoAdmissionContext, StoreReference } from '../../webhook/rules/eso/index.ts';
import { denials, edit, findings, rules, schemaErrors, warnings } from './helpers.ts';

const es: KubeObject = {
  apiVersion: 'external-secrets.io/v1',
  kind: 'ExternalSecret',
  metadata: { name: 'app', namespace: 'team-a' },
  spec: {
    refreshInterval: '1h',
    secretStoreRef: { name: 'vault', kind: 'SecretStore' },
    target: { name: 'app' },
    data: [{ secretKey: 'password', remoteRef: { key: 'team-a/db', property: 'password' } }],
  },
};
const T = 'spec.target.template';

void describe('baseline', () => {
  void test('a plain ExternalSecret is accepted without findings and matches the schema', () => {
    assert.deepEqual(findings(es), []);
    assert.deepEqual(schemaErrors(es), []);
  });
});

void describe('creationPolicy / deletionPolicy (ESO validatePolicies)', () => {
  const policies = (creationPolicy: string | undefined, deletionPolicy: string | undefined) =>
    findings(edit(es, { 'spec.target.creationPolicy': creationPolicy, 'spec.target.deletionPolicy': deletionPolicy }));
  for (const [c, d] of [['Owner', 'Delete'], ['Owner', 'Retain'], ['Orphan', 'Delete'], ['Merge', 'Merge'], ['Merge', 'Retain'], ['None', 'Retain'], [undefined, 'Delete'], [undefined, undefined]]) {
    void test(`accepts creationPolicy=${c ?? '(default)'} deletionPolicy=${d ?? '(default)'}`, () => assert.deepEqual(policies(c, d), []));
  }
  for (const c of ['Merge', 'None']) {
    void test(`refuses deletionPolicy=Delete with creationPolicy=${c}`, () => {
      const fs = policies(c, 'Delete');
      assert.deepEqual(rules(fs), ['eso.es.deletion-policy']);
      assert.equal(fs[0]?.message, "deletionPolicy=Delete must not be used when the controller doesn't own the secret. Please set creationPolicy=Owner");
    });
  }
  void test('refuses deletionPolicy=Merge with creationPolicy=None', () => {
    const fs = policies('None', 'Merge');
    assert.deepEqual(rules(fs), ['eso.es.deletion-policy']);
    assert.match(fs[0]?.message ?? '', /There is no Secret to merge with/);
  });
  void test('CreateOrMerge (ESO v1) is in the schema but refused as not supported', () => {
    const manifest = edit(es, { 'spec.target.creationPolicy': 'CreateOrMerge' });
    assert.deepEqual(schemaErrors(manifest), []);
    assert.deepEqual(rules(findings(manifest)), ['eso.es.unsupported']);
    assert.deepEqual(rules(findings(edit(manifest, { 'spec.target.deletionPolicy': 'Delete' }))).sort(), ['eso.es.deletion-policy', 'eso.es.unsupported']);
  });
});

void describe('data and dataFrom', () => {
  void test('either data or dataFrom is required', () => {
    assert.deepEqual(findings(edit(es, { 'spec.data': undefined, 'spec.dataFrom': [{ extract: { key: 'k' } }] })), []);
    const fs = findings(edit(es, { 'spec.data': [] }));
    assert.deepEqual(rules(fs), ['eso.es.data-required']);
    assert.equal(fs[0]?.message, 'either data or dataFrom should be specified');
  });

  void test('each dataFrom sets exactly one of extract, find, generatorRef', () => {
    assert.deepEqual(findings(edit(es, { 'spec.dataFrom': [{ find: { path: 'team-a', name: { regexp: '^db-' } } }] })), []);
    const both = findings(edit(es, { 'spec.dataFrom': [{ extract: { key: 'a' }, find: { path: 'b' } }] }));
    assert.deepEqual(rules(both), ['eso.es.datafrom-exclusive']);
    assert.equal(both[0]?.message, 'extract, find, or generatorRef cannot be set at the same time');
    const empty = findings(edit(es, { 'spec.dataFrom': [{ rewrite: [{ regexp: { source: 'a', target: 'b' } }] }] }));
    assert.deepEqual(rules(empty), ['eso.es.datafrom-empty']);
    assert.equal(empty[0]?.message, 'either extract, find, or sourceRef must be set to dataFrom');
  });

  void test('a dataFrom sourceRef needs storeRef or generatorRef; both are refused as not supported by vaultgate', () => {
    const neither = findings(edit(es, { 'spec.dataFrom': [{ sourceRef: {} }] }));
    assert.deepEqual(rules(neither), ['eso.es.sourceref']);
    assert.equal(neither[0]?.message, 'generatorRef or storeRef must be set when using sourceRef in dataFrom');
    const gen = findings(edit(es, { 'spec.dataFrom': [{ sourceRef: { generatorRef: { apiVersion: 'generators.external-secrets.io/v1alpha1', kind: 'Password', name: 'pw' } } }] }));
    assert.deepEqual(gen.map((f) => [f.field, f.rule]), [['spec.dataFrom[0].sourceRef.generatorRef', 'eso.es.unsupported']]);
    assert.match(gen[0]?.message ?? '', /generatorRef \(generators\) is not supported by vaultgate/);
    const mixed = findings(edit(es, { 'spec.dataFrom': [{ extract: { key: 'a' }, sourceRef: { generatorRef: { kind: 'UUID', name: 'u' } } }] }));
    assert.deepEqual(rules(mixed).sort(), ['eso.es.datafrom-exclusive', 'eso.es.unsupported']);
    const store = findings(edit(es, { 'spec.dataFrom': [{ extract: { key: 'a' }, sourceRef: { storeRef: { name: 'other' } } }] }));
    assert.deepEqual(store.map((f) => f.field), ['spec.dataFrom[0].sourceRef.storeRef']);
  });

  void test('data[].sourceRef (store override, deprecated generatorRef) is refused as not supported', () => {
    const fs = findings(edit(es, { 'spec.data.0.sourceRef': { storeRef: { name: 'other', kind: 'ClusterSecretStore' } } }));
    assert.deepEqual(fs.map((f) => [f.field, f.rule]), [['spec.data[0].sourceRef.storeRef', 'eso.es.unsupported']]);
  });

  void test('duplicate secretKey is refused with deletionPolicy=Retain (ESO) and warned otherwise', () => {
    const twice = [{ secretKey: 'a', remoteRef: { key: 'x' } }, { secretKey: 'b', remoteRef: { key: 'y' } }, { secretKey: 'a', remoteRef: { key: 'z' } }];
    const retain = findings(edit(es, { 'spec.data': twice }));
    assert.deepEqual(retain.map((f) => [f.field, f.rule, f.severity]), [['spec.data[2].secretKey', 'eso.es.duplicate-key', 'deny']]);
    assert.equal(retain[0]?.message, 'duplicate secretKey found: a');
    const del = findings(edit(es, { 'spec.data': twice, 'spec.target.deletionPolicy': 'Delete' }));
    assert.deepEqual(denials(del), []);
    assert.deepEqual(rules(warnings(del)), ['eso.es.duplicate-key']);
    assert.deepEqual(findings(edit(es, { 'spec.data': twice.slice(0, 2) })), []);
  });

  void test('reading a pinned version, metadataPolicy=Fetch and nullBytePolicy=Fail are refused, not ignored', () => {
    const fs = findings(edit(es, {
      'spec.data.0.remoteRef.version': '3',
      'spec.data.0.remoteRef.metadataPolicy': 'Fetch',
      'spec.dataFrom': [{ extract: { key: 'k', nullBytePolicy: 'Fail' } }, { find: { path: 'p', nullBytePolicy: 'Fail' } }],
    }));
    assert.deepEqual(fs.map((f) => f.field), [
      'spec.data[0].remoteRef.version', 'spec.data[0].remoteRef.metadataPolicy',
      'spec.dataFrom[0].extract.nullBytePolicy', 'spec.dataFrom[1].find.nullBytePolicy',
    ]);
    assert.ok(fs.every((f) => f.rule === 'eso.es.unsupported' && f.message.includes('not supported by vaultgate')));
    assert.deepEqual(findings(edit(es, { 'spec.data.0.remoteRef.metadataPolicy': 'None', 'spec.data.0.remoteRef.nullBytePolicy': 'Ignore' })), []);
  });

  void test('find.name.regexp and rewrite.regexp.source must compile as Go RE2', () => {
    const good = edit(es, { 'spec.dataFrom': [{ find: { name: { regexp: '^db-(?P<n>.*)$' } }, rewrite: [{ regexp: { source: 'db-(.*)', target: '$1' } }] }] });
    assert.deepEqual(findings(good), []);
    const bad = findings(edit(es, { 'spec.dataFrom': [{ find: { name: { regexp: '(' } }, rewrite: [{ regexp: { source: '(a)\\1', target: 'x' } }] }] }));
    assert.deepEqual(bad.map((f) => [f.field, f.rule]), [['spec.dataFrom[0].find.name.regexp', 'eso.es.regexp'], ['spec.dataFrom[0].rewrite[0].regexp.source', 'eso.es.regexp']]);
    assert.match(bad[1]?.message ?? '', /backreferences/);
  });

  void test('rewrite.merge is refused; rewrite.transform templates are checked', () => {
    const merge = findings(edit(es, { 'spec.dataFrom': [{ extract: { key: 'k' }, rewrite: [{ merge: { into: 'all' } }] }] }));
    assert.deepEqual(merge.map((f) => f.field), ['spec.dataFrom[0].rewrite[0].merge']);
    assert.deepEqual(findings(edit(es, { 'spec.dataFrom': [{ extract: { key: 'k' }, rewrite: [{ transform: { template: '{{ .value | lower }}' } }] }] })), []);
    const tpl = findings(edit(es, { 'spec.dataFrom': [{ extract: { key: 'k' }, rewrite: [{ transform: { template: '{{ .value | snakecase }}' } }] }] }));
    assert.deepEqual(tpl.map((f) => [f.field, f.rule]), [['spec.dataFrom[0].rewrite[0].transform.template', 'eso.es.template-unsupported']]);
  });
});

void describe('store reference and refresh', () => {
  void test('secretStoreRef.name is required (no per-entry stores in vaultgate)', () => {
    assert.deepEqual(rules(findings(edit(es, { 'spec.secretStoreRef': undefined }))), ['eso.es.store-required']);
  });
  void test('refreshInterval: a non-negative Go duration', () => {
    for (const ok of ['0', '0s', '15s', '1h0m0s', '2h30m', '1.5h', '500ms']) assert.deepEqual(findings(edit(es, { 'spec.refreshInterval': ok })), [], ok);
    for (const [bad, pattern] of [['-1m', /must not be negative/], ['1d', /unknown unit "d"/], ['60', /missing unit/], ['soon', /invalid duration/]] as const) {
      const fs = findings(edit(es, { 'spec.refreshInterval': bad }));
      assert.deepEqual(rules(fs), ['eso.es.refresh-interval'], bad);
      assert.match(fs[0]?.message ?? '', pattern);
    }
  });
});

void describe('target and template', () => {
  void test('privileged Secret types are refused as ESO does', () => {
    const sa = { type: 'kubernetes.io/service-account-token', metadata: { annotations: { 'kubernetes.io/service-account.name': 'admin' } } };
    const fs = findings(edit(es, { [T]: sa }));
    assert.deepEqual(rules(fs), ['eso.es.privileged-template']);
    assert.equal(fs[0]?.message, 'template.type="kubernetes.io/service-account-token" with annotation "kubernetes.io/service-account.name" is not allowed');
    const viaTemplate = findings(edit(es, { [T]: { type: 'kubernetes.io/service-account-token', templateFrom: [{ target: 'annotations', literal: 'a: b' }] } }));
    assert.deepEqual(rules(viaTemplate), ['eso.es.privileged-template']);
    assert.deepEqual(rules(findings(edit(es, { [T]: { type: 'bootstrap.kubernetes.io/token' } }))), ['eso.es.privileged-template']);
    // The same type without the binding annotation, and ordinary types, are fine.
    assert.deepEqual(findings(edit(es, { [T]: { type: 'kubernetes.io/service-account-token' } })), []);
    assert.deepEqual(findings(edit(es, { [T]: { type: 'kubernetes.io/dockerconfigjson' } })), []);
  });

  void test('templateFrom target must be Data, Annotations or Labels (any case)', () => {
    const ok = edit(es, { [T]: { templateFrom: [{ literal: 'a: b' }, { target: 'Labels', literal: 'l: v' }, { target: 'data', literal: 'k: v' }] } });
    assert.deepEqual(findings(ok), []);
    assert.deepEqual(schemaErrors(ok), []);
    const fs = findings(edit(es, { [T]: { templateFrom: [{ target: 'metadata.ownerReferences', literal: 'x: y' }] } }));
    assert.deepEqual(rules(fs), ['eso.es.template-target']);
    assert.equal(fs[0]?.message, 'templateFrom target="metadata.ownerReferences" is not allowed when targeting a Secret, must be one of "Data", "Annotations" or "Labels"');
  });

  void test('templateFrom configMap / secret, template finalizers, target.manifest and syncWindows are refused as not supported', () => {
    const fs = findings(edit(es, {
      [`${T}.templateFrom`]: [{ configMap: { name: 'tpl', items: [{ key: 'config.yaml' }] } }, { secret: { name: 's', items: [{ key: 'k' }] } }],
      [`${T}.metadata.finalizers`]: ['example.com/keep'],
      'spec.target.manifest': { apiVersion: 'v1', kind: 'ConfigMap' },
      'spec.syncWindows': { kind: 'allow', windows: [{ schedule: '0 9 * * 1-5', duration: '8h' }] },
    }));
    assert.deepEqual(fs.map((f) => f.field).sort(), [
      'spec.syncWindows', 'spec.target.manifest', `${T}.metadata.finalizers`, `${T}.templateFrom[0].configMap`, `${T}.templateFrom[1].secret`,
    ].sort());
    assert.ok(fs.every((f) => f.rule === 'eso.es.unsupported' && / is not supported by vaultgate/.test(f.message)));
  });

  void test('templates within the supported subset are accepted; others are refused naming the function', () => {
    const ok = { data: { '.dockerconfigjson': '{"auths":{"r":{"auth":"{{ printf "%s:%s" .u .p | b64enc }}"}}}', dsn: '{{ if .tls }}sslmode=require{{ else }}sslmode=disable{{ end }}' } };
    assert.deepEqual(findings(edit(es, { [T]: ok })), []);
    const fs = findings(edit(es, { [T]: { data: { 'tls.crt': '{{ .bundle | filterPEM "CERTIFICATE" }}', 'x': '{{ range . }}{{ . }}{{ end }}' } } }));
    assert.deepEqual(fs.map((f) => [f.field, f.rule]), [[`${T}.data[tls.crt]`, 'eso.es.template-unsupported'], [`${T}.data.x`, 'eso.es.template-unsupported']]);
    assert.match(fs[0]?.message ?? '', /^template function "filterPEM" at line 1, column 14 is not supported by vaultgate \(supported: and, or, /);
    assert.match(fs[1]?.message ?? '', /template action "range"/);
    const syntax = findings(edit(es, { [T]: { templateFrom: [{ literal: 'a: {{ .x ' }] } }));
    assert.deepEqual(syntax.map((f) => [f.field, f.rule]), [[`${T}.templateFrom[0].literal`, 'eso.es.template-syntax']]);
  });

  void test('template findings never repeat template text (it may hold secret material)', () => {
    const secret = 'hunter2-VERY-SECRET';
    const fs = findings(edit(es, { [T]: { data: { a: `${secret} {{ .x | sha1sum }}`, b: `"${secret}" {{ "${secret}`, c: `{{ printf "${secret}" | nope }}` } } }));
    assert.equal(fs.length, 3);
    for (const f of fs) assert.ok(!f.message.includes('SECRET'), f.message);
  });
});

void describe('controller class via the store', () => {
  const unsupported = edit(es, { 'spec.syncWindows': { kind: 'deny', windows: [] } });
  const lookup = (classOf: Record<string, string>): EsoAdmissionContext => ({
    ...defaultContext({ controllerClass: 'vaultgate' }),
    storeControllerClass: (ref: StoreReference) => classOf[`${ref.kind}/${ref.namespace ?? ''}/${ref.name}`],
  });
  void test('an ExternalSecret whose store belongs to another controller is admitted untouched', () => {
    assert.deepEqual(findings(unsupported, lookup({ 'SecretStore/team-a/vault': 'eso' }), 'team-a'), []);
  });
  void test('a store of our class, of every class (empty) or unknown yet: validated', () => {
    const variants: Array<Record<string, string>> = [{ 'SecretStore/team-a/vault': 'vaultgate' }, { 'SecretStore/team-a/vault': '' }, {}];
    for (const classes of variants) {
      assert.deepEqual(rules(findings(unsupported, lookup(classes), 'team-a')), ['eso.es.unsupported']);
    }
  });
  void test('ClusterSecretStore references are looked up without a namespace', () => {
    const css = edit(unsupported, { 'spec.secretStoreRef.kind': 'ClusterSecretStore' });
    assert.deepEqual(findings(css, lookup({ 'ClusterSecretStore//vault': 'eso' }), 'team-a'), []);
  });
});
