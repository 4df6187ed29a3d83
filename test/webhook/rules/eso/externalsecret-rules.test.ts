// ExternalSecret admission: ESO's rules (ESO's messages) and vaultgate's refusals of what it does not
// implement. Each rule: an accepted and a refused manifest.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext } from '../../../../webhook/admission/context.ts';
import type { KubeObject } from '../../../../webhook/admission/kinds.ts';
import type { EsoAdmissionContext, StoreReference } from '../../../../webhook/rules/eso/index.ts';
import { denials, edit, findings, rules, schemaErrors, warnings } from '../../../eso/helpers.ts';

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
  for (const [c, d] of [
    ['Owner', 'Delete'],
    ['Owner', 'Retain'],
    ['Orphan', 'Delete'],
    ['Merge', 'Merge'],
    ['Merge', 'Retain'],
    ['None', 'Retain'],
    [undefined, 'Delete'],
    [undefined, undefined],
  ]) {
    void test(`accepts creationPolicy=${c ?? '(default)'} deletionPolicy=${d ?? '(default)'}`, () =>
      assert.deepEqual(policies(c, d), []));
  }
  for (const c of ['Merge', 'None', 'CreateOrMerge']) {
    void test(`refuses deletionPolicy=Delete with creationPolicy=${c}`, () => {
      const fs = policies(c, 'Delete');
      assert.deepEqual(rules(fs), ['eso.es.deletion-policy']);
      assert.equal(
        fs[0]?.message,
        "deletionPolicy=Delete must not be used when the controller doesn't own the secret. Please set creationPolicy=Owner",
      );
    });
  }
  void test('refuses deletionPolicy=Merge with creationPolicy=None', () => {
    const fs = policies('None', 'Merge');
    assert.deepEqual(rules(fs), ['eso.es.deletion-policy']);
    assert.match(fs[0]?.message ?? '', /There is no Secret to merge with/);
  });
  void test('CreateOrMerge (ESO v1) is admitted, with Retain or Merge', () => {
    const manifest = edit(es, { 'spec.target.creationPolicy': 'CreateOrMerge' });
    assert.deepEqual(schemaErrors(manifest), []);
    assert.deepEqual(findings(manifest), []);
    assert.deepEqual(findings(edit(manifest, { 'spec.target.deletionPolicy': 'Merge' })), []);
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
    assert.deepEqual(
      findings(edit(es, { 'spec.dataFrom': [{ find: { path: 'team-a', name: { regexp: '^db-' } } }] })),
      [],
    );
    const both = findings(edit(es, { 'spec.dataFrom': [{ extract: { key: 'a' }, find: { path: 'b' } }] }));
    assert.deepEqual(rules(both), ['eso.es.datafrom-exclusive']);
    assert.equal(both[0]?.message, 'extract, find, or generatorRef cannot be set at the same time');
    const empty = findings(edit(es, { 'spec.dataFrom': [{ rewrite: [{ regexp: { source: 'a', target: 'b' } }] }] }));
    assert.deepEqual(rules(empty), ['eso.es.datafrom-empty']);
    assert.equal(empty[0]?.message, 'either extract, find, or sourceRef must be set to dataFrom');
  });

  void test('a dataFrom sourceRef needs storeRef or generatorRef; Password, VaultDynamicSecret and ClusterGenerator are admitted, other generators refused', () => {
    const neither = findings(edit(es, { 'spec.dataFrom': [{ sourceRef: {} }] }));
    assert.deepEqual(rules(neither), ['eso.es.sourceref']);
    assert.equal(neither[0]?.message, 'generatorRef or storeRef must be set when using sourceRef in dataFrom');
    const gen = (generatorRef: Record<string, unknown>) =>
      findings(edit(es, { 'spec.dataFrom': [{ sourceRef: { generatorRef } }] }));
    const api = 'generators.external-secrets.io/v1alpha1';
    for (const kind of ['Password', 'VaultDynamicSecret', 'ClusterGenerator'])
      assert.deepEqual(gen({ apiVersion: api, kind, name: 'g' }), [], kind);
    const uuid = gen({ apiVersion: api, kind: 'UUID', name: 'u' });
    assert.deepEqual(
      uuid.map((f) => [f.field, f.rule]),
      [['spec.dataFrom[0].sourceRef.generatorRef.kind', 'eso.es.unsupported']],
    );
    assert.match(uuid[0]?.message ?? '', /generator kind "UUID" is not supported by vaultgate/);
    assert.deepEqual(
      gen({ apiVersion: 'generators.external-secrets.io/v1', kind: 'Password', name: 'p' }).map((f) => f.field),
      ['spec.dataFrom[0].sourceRef.generatorRef.apiVersion'],
    );
    // A generator needs no store: an ExternalSecret of generators only has no secretStoreRef.
    const noStore = edit(es, {
      'spec.secretStoreRef': undefined,
      'spec.data': undefined,
      'spec.dataFrom': [{ sourceRef: { generatorRef: { apiVersion: api, kind: 'Password', name: 'p' } } }],
    });
    assert.deepEqual(findings(noStore), []);
    const mixed = findings(
      edit(es, {
        'spec.dataFrom': [{ extract: { key: 'a' }, sourceRef: { generatorRef: { kind: 'UUID', name: 'u' } } }],
      }),
    );
    assert.deepEqual(rules(mixed).sort(), ['eso.es.datafrom-exclusive', 'eso.es.generator-ref']);
    assert.deepEqual(
      findings(edit(es, { 'spec.dataFrom': [{ extract: { key: 'a' }, sourceRef: { storeRef: { name: 'other' } } }] })),
      [],
    );
  });

  void test('data[].sourceRef.storeRef (a per-entry store) is admitted; a generatorRef there is refused as not supported', () => {
    assert.deepEqual(
      findings(edit(es, { 'spec.data.0.sourceRef': { storeRef: { name: 'other', kind: 'ClusterSecretStore' } } })),
      [],
    );
    const fs = findings(edit(es, { 'spec.data.0.sourceRef': { generatorRef: { kind: 'Password', name: 'pw' } } }));
    assert.deepEqual(
      fs.map((f) => [f.field, f.rule]),
      [['spec.data[0].sourceRef.generatorRef', 'eso.es.unsupported']],
    );
  });

  void test('duplicate secretKey is refused with deletionPolicy=Retain (ESO) and warned otherwise', () => {
    const twice = [
      { secretKey: 'a', remoteRef: { key: 'x' } },
      { secretKey: 'b', remoteRef: { key: 'y' } },
      { secretKey: 'a', remoteRef: { key: 'z' } },
    ];
    const retain = findings(edit(es, { 'spec.data': twice }));
    assert.deepEqual(
      retain.map((f) => [f.field, f.rule, f.severity]),
      [['spec.data[2].secretKey', 'eso.es.duplicate-key', 'deny']],
    );
    assert.equal(retain[0]?.message, 'duplicate secretKey found: a');
    const del = findings(edit(es, { 'spec.data': twice, 'spec.target.deletionPolicy': 'Delete' }));
    assert.deepEqual(denials(del), []);
    assert.deepEqual(rules(warnings(del)), ['eso.es.duplicate-key']);
    assert.deepEqual(findings(edit(es, { 'spec.data': twice.slice(0, 2) })), []);
  });

  void test('a pinned version, metadataPolicy=Fetch and nullBytePolicy=Fail are admitted (and match the schema)', () => {
    const manifest = edit(es, {
      'spec.data.0.remoteRef.version': '3',
      'spec.data.0.remoteRef.metadataPolicy': 'Fetch',
      'spec.dataFrom': [
        { extract: { key: 'k', nullBytePolicy: 'Fail', version: '2' } },
        { find: { path: 'p', nullBytePolicy: 'Fail' } },
      ],
    });
    assert.deepEqual(findings(manifest), []);
    assert.deepEqual(schemaErrors(manifest), []);
  });

  void test('find.name.regexp and rewrite.regexp.source must compile as Go RE2', () => {
    const good = edit(es, {
      'spec.dataFrom': [
        { find: { name: { regexp: '^db-(?P<n>.*)$' } }, rewrite: [{ regexp: { source: 'db-(.*)', target: '$1' } }] },
      ],
    });
    assert.deepEqual(findings(good), []);
    const bad = findings(
      edit(es, {
        'spec.dataFrom': [
          { find: { name: { regexp: '(' } }, rewrite: [{ regexp: { source: '(a)\\1', target: 'x' } }] },
        ],
      }),
    );
    assert.deepEqual(
      bad.map((f) => [f.field, f.rule]),
      [
        ['spec.dataFrom[0].find.name.regexp', 'eso.es.regexp'],
        ['spec.dataFrom[0].rewrite[0].regexp.source', 'eso.es.regexp'],
      ],
    );
    assert.equal(bad[1]?.message, 'error parsing regexp: invalid escape sequence: `\\1`', "Go's own message");
  });

  void test('rewrite.merge is admitted (JSON needs into); rewrite.transform templates are checked', () => {
    for (const merge of [
      { into: 'all' },
      {},
      { strategy: 'JSON', into: 'all', priority: ['b'], priorityPolicy: 'IgnoreNotFound', conflictPolicy: 'Ignore' },
    ]) {
      const manifest = edit(es, { 'spec.dataFrom': [{ extract: { key: 'k' }, rewrite: [{ merge }] }] });
      assert.deepEqual(findings(manifest), [], JSON.stringify(merge));
      assert.deepEqual(schemaErrors(manifest), [], JSON.stringify(merge));
    }
    const noInto = findings(
      edit(es, { 'spec.dataFrom': [{ extract: { key: 'k' }, rewrite: [{ merge: { strategy: 'JSON' } }] }] }),
    );
    assert.deepEqual(
      noInto.map((f) => [f.field, f.rule]),
      [['spec.dataFrom[0].rewrite[0].merge.into', 'eso.es.rewrite-merge']],
    );
    assert.deepEqual(
      rules(
        findings(
          edit(es, { 'spec.dataFrom': [{ extract: { key: 'k' }, rewrite: [{ merge: { strategy: 'Deep' } }] }] }),
        ),
      ),
      ['schema.enum'],
    );
    assert.deepEqual(
      findings(
        edit(es, {
          'spec.dataFrom': [{ extract: { key: 'k' }, rewrite: [{ transform: { template: '{{ .value | lower }}' } }] }],
        }),
      ),
      [],
    );
    const tpl = findings(
      edit(es, {
        'spec.dataFrom': [{ extract: { key: 'k' }, rewrite: [{ transform: { template: '{{ .value | shuffle }}' } }] }],
      }),
    );
    assert.deepEqual(
      tpl.map((f) => [f.field, f.rule]),
      [['spec.dataFrom[0].rewrite[0].transform.template', 'eso.es.template-unsupported']],
    );
  });
});

void describe('store reference and refresh', () => {
  void test('secretStoreRef.name is required unless every entry names its own store', () => {
    assert.deepEqual(rules(findings(edit(es, { 'spec.secretStoreRef': undefined }))), ['eso.es.store-required']);
    const own = { storeRef: { name: 'vault', kind: 'SecretStore' } };
    assert.deepEqual(findings(edit(es, { 'spec.secretStoreRef': undefined, 'spec.data.0.sourceRef': own })), []);
    const partly = edit(es, {
      'spec.secretStoreRef': undefined,
      'spec.data.0.sourceRef': own,
      'spec.dataFrom': [{ extract: { key: 'k' } }],
    });
    assert.deepEqual(rules(findings(partly)), ['eso.es.store-required']);
  });
  void test("syncWindows: cron schedules and Go durations as ESO's controller reads them", () => {
    const ok = edit(es, {
      'spec.syncWindows': {
        kind: 'deny',
        windows: [
          { schedule: '0 22 * * 1-5', duration: '8h' },
          { schedule: '@every 6h', duration: '30m' },
        ],
      },
    });
    assert.deepEqual(findings(ok), []);
    assert.deepEqual(schemaErrors(ok), []);
    const bad = findings(
      edit(es, {
        'spec.syncWindows': {
          kind: 'allow',
          windows: [
            { schedule: '0 25 * * *', duration: '1h' },
            { schedule: '@daily', duration: '1 day' },
          ],
        },
      }),
    );
    assert.deepEqual(
      bad.map((f) => [f.field, f.rule]),
      [
        ['spec.syncWindows.windows[0].schedule', 'eso.es.sync-window'],
        ['spec.syncWindows.windows[1].duration', 'eso.es.sync-window'],
      ],
    );
    assert.equal(bad[0]?.message, 'schedule is not a cron expression: end of range (25) above maximum (23): 25');
    // The CRD's own rules: kind is allow or deny, at least one window, five fields or a descriptor.
    assert.deepEqual(rules(findings(edit(es, { 'spec.syncWindows': { kind: 'sometimes', windows: [] } }))).sort(), [
      'schema.enum',
      'schema.minItems',
    ]);
    // Four fields: the schema's pattern refuses it too; robfig's text says why.
    const four = findings(
      edit(es, { 'spec.syncWindows': { kind: 'deny', windows: [{ schedule: '0 22 * *', duration: '1h' }] } }),
    );
    assert.deepEqual(
      four.map((f) => [f.rule, f.message]),
      [['eso.es.sync-window', 'schedule is not a cron expression: expected exactly 5 fields, found 4: [0 22 * *]']],
    );
  });
  void test('refreshInterval: a non-negative Go duration', () => {
    for (const ok of ['0', '0s', '15s', '1h0m0s', '2h30m', '1.5h', '500ms'])
      assert.deepEqual(findings(edit(es, { 'spec.refreshInterval': ok })), [], ok);
    for (const [bad, pattern] of [
      ['-1m', /must not be negative/],
      ['1d', /unknown unit "d"/],
      ['60', /missing unit/],
      ['soon', /invalid duration/],
    ] as const) {
      const fs = findings(edit(es, { 'spec.refreshInterval': bad }));
      assert.deepEqual(rules(fs), ['eso.es.refresh-interval'], bad);
      assert.match(fs[0]?.message ?? '', pattern);
    }
  });
});

void describe('target and template', () => {
  void test('privileged Secret types are refused as ESO does', () => {
    const sa = {
      type: 'kubernetes.io/service-account-token',
      metadata: { annotations: { 'kubernetes.io/service-account.name': 'admin' } },
    };
    const fs = findings(edit(es, { [T]: sa }));
    assert.deepEqual(rules(fs), ['eso.es.privileged-template']);
    assert.equal(
      fs[0]?.message,
      'template.type="kubernetes.io/service-account-token" with annotation "kubernetes.io/service-account.name" is not allowed',
    );
    const viaTemplate = findings(
      edit(es, {
        [T]: {
          type: 'kubernetes.io/service-account-token',
          templateFrom: [{ target: 'annotations', literal: 'a: b' }],
        },
      }),
    );
    assert.deepEqual(rules(viaTemplate), ['eso.es.privileged-template']);
    assert.deepEqual(rules(findings(edit(es, { [T]: { type: 'bootstrap.kubernetes.io/token' } }))), [
      'eso.es.privileged-template',
    ]);
    // The same type without the binding annotation, and ordinary types, are fine.
    assert.deepEqual(findings(edit(es, { [T]: { type: 'kubernetes.io/service-account-token' } })), []);
    assert.deepEqual(findings(edit(es, { [T]: { type: 'kubernetes.io/dockerconfigjson' } })), []);
  });

  void test('templateFrom target must be Data, Annotations or Labels (any case)', () => {
    const ok = edit(es, {
      [T]: {
        templateFrom: [{ literal: 'a: b' }, { target: 'Labels', literal: 'l: v' }, { target: 'data', literal: 'k: v' }],
      },
    });
    assert.deepEqual(findings(ok), []);
    assert.deepEqual(schemaErrors(ok), []);
    const fs = findings(edit(es, { [T]: { templateFrom: [{ target: 'metadata.ownerReferences', literal: 'x: y' }] } }));
    assert.deepEqual(rules(fs), ['eso.es.template-target']);
    assert.equal(
      fs[0]?.message,
      'templateFrom target="metadata.ownerReferences" is not allowed when targeting a Secret, must be one of "Data", "Annotations" or "Labels"',
    );
  });

  void test('target.manifest is refused as not supported; template finalizers, syncWindows and templateFrom configMap/secret are admitted', () => {
    const fs = findings(
      edit(es, {
        [`${T}.templateFrom`]: [
          { configMap: { name: 'tpl', items: [{ key: 'config.yaml' }] } },
          { secret: { name: 's', items: [{ key: 'k' }] } },
        ],
        [`${T}.metadata.finalizers`]: ['example.com/keep'],
        'spec.target.manifest': { apiVersion: 'v1', kind: 'ConfigMap' },
        'spec.syncWindows': { kind: 'allow', windows: [{ schedule: '0 9 * * 1-5', duration: '8h' }] },
      }),
    );
    assert.deepEqual(
      fs.map((f) => f.field),
      ['spec.target.manifest'],
    );
    assert.ok(fs.every((f) => f.rule === 'eso.es.unsupported' && / is not supported by vaultgate/.test(f.message)));
  });

  void test('Go templates are accepted (range, filterPEM, variables); refused functions and syntax errors are named', () => {
    const ok = {
      data: {
        '.dockerconfigjson': '{"auths":{"r":{"auth":"{{ printf "%s:%s" .u .p | b64enc }}"}}}',
        dsn: '{{ if .tls }}sslmode=require{{ else }}sslmode=disable{{ end }}',
        'tls.crt': '{{ .bundle | filterPEM "CERTIFICATE" }}',
        x: '{{ range $k, $v := . }}{{ $k }}{{ end }}',
      },
    };
    assert.deepEqual(findings(edit(es, { [T]: ok })), []);
    const fs = findings(edit(es, { [T]: { data: { r: '{{ randAlphaNum 8 }}', e: '{{ env "HOME" }}' } } }));
    assert.deepEqual(fs.map((f) => [f.field, f.rule]).sort(), [
      [`${T}.data.e`, 'eso.es.template-syntax'],
      [`${T}.data.r`, 'eso.es.template-unsupported'],
    ]);
    assert.match(
      fs.find((f) => f.field.endsWith('.r'))?.message ?? '',
      /^template function "randAlphaNum" is not supported by vaultgate: its output changes on every render/,
    );
    assert.match(fs.find((f) => f.field.endsWith('.e'))?.message ?? '', /function "env" not defined/);
    const syntax = findings(edit(es, { [T]: { templateFrom: [{ literal: 'a: {{ .x ' }] } }));
    assert.deepEqual(
      syntax.map((f) => [f.field, f.rule]),
      [[`${T}.templateFrom[0].literal`, 'eso.es.template-syntax']],
    );
  });

  void test('metadata labels and annotations are templates: checked like data', () => {
    const fs = findings(
      edit(es, {
        [`${T}.metadata`]: {
          labels: { ok: '{{ .team | lower }}', bad: '{{ .x | nosuch }}' },
          annotations: { a: '{{ if .x }}' },
        },
      }),
    );
    assert.deepEqual(fs.map((f) => [f.field, f.rule]).sort(), [
      [`${T}.metadata.annotations.a`, 'eso.es.template-syntax'],
      [`${T}.metadata.labels.bad`, 'eso.es.template-syntax'],
    ]);
  });

  void test('template findings never repeat template text (it may hold secret material)', () => {
    const secret = 'hunter2-VERY-SECRET';
    const fs = findings(
      edit(es, {
        [T]: {
          data: {
            a: `${secret} {{ .x | uuidv4 }}`,
            b: `"${secret}" {{ "${secret}`,
            c: `{{ printf "${secret}" | nope }}`,
          },
        },
      }),
    );
    assert.equal(fs.length, 3);
    for (const f of fs) assert.ok(!f.message.includes('SECRET'), f.message);
  });
});

void describe('controller class via the store', () => {
  const unsupported = edit(es, { 'spec.target.manifest': { apiVersion: 'v1', kind: 'ConfigMap' } });
  const lookup = (classOf: Record<string, string>): EsoAdmissionContext => ({
    ...defaultContext({ controllerClass: 'vaultgate' }),
    storeControllerClass: (ref: StoreReference) => classOf[`${ref.kind}/${ref.namespace ?? ''}/${ref.name}`],
  });
  void test('an ExternalSecret whose store belongs to another controller is admitted untouched', () => {
    assert.deepEqual(findings(unsupported, lookup({ 'SecretStore/team-a/vault': 'eso' }), 'team-a'), []);
  });
  void test('a store of our class, of every class (empty) or unknown yet: validated', () => {
    const variants: Array<Record<string, string>> = [
      { 'SecretStore/team-a/vault': 'vaultgate' },
      { 'SecretStore/team-a/vault': '' },
      {},
    ];
    for (const classes of variants) {
      assert.deepEqual(rules(findings(unsupported, lookup(classes), 'team-a')), ['eso.es.unsupported']);
    }
  });
  void test('ClusterSecretStore references are looked up without a namespace', () => {
    const css = edit(unsupported, { 'spec.secretStoreRef.kind': 'ClusterSecretStore' });
    assert.deepEqual(findings(css, lookup({ 'ClusterSecretStore//vault': 'eso' }), 'team-a'), []);
  });
});
