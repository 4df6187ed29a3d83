// ESO manifests apply unchanged: examples and real-world-looking fixtures pass the schemas and the
// rules; the schemas refuse malformed objects; the generated CRDs stay small enough for client-side apply.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ESO_KINDS } from '../../schemas/eso-kinds.ts';
import { buildCrd } from '../../schemas/generate.ts';
import { validateObject } from '../../schemas/validator.ts';
import type { KubeObject } from '../../webhook/admission/kinds.ts';
import { denials, edit, findings, loadManifests, schemaErrors, schemaValidator } from './helpers.ts';

const namespaceOf = (o: KubeObject) =>
  String((o.metadata as { namespace?: string } | undefined)?.namespace ?? 'default');

function accepted(o: KubeObject): { schema: string[]; denied: string[]; problems: string[] } {
  return {
    schema: schemaErrors(o),
    denied: denials(findings(o, undefined, namespaceOf(o))).map((f) => `${f.field}: ${f.message}`),
    problems: validateObject(o)
      .filter((p) => p.severity === 'deny')
      .map((p) => `${p.field}: ${p.message}`),
  };
}

void describe('examples/eso-*.yaml', () => {
  for (const file of [
    'examples/eso-secretstore.yaml',
    'examples/eso-clustersecretstore.yaml',
    'examples/eso-externalsecret.yaml',
  ]) {
    void test(`${file} is valid and draws no finding at all`, () => {
      const docs = loadManifests(file);
      assert.equal(docs.length, 1);
      for (const o of docs) {
        assert.equal(o.apiVersion, 'external-secrets.io/v1');
        assert.deepEqual(accepted(o), { schema: [], denied: [], problems: [] });
        assert.deepEqual(findings(o, undefined, namespaceOf(o)), []);
        assert.deepEqual(validateObject(o), [], 'no unknown-field warnings either');
      }
    });
  }
});

void describe('real-world ESO manifests (test/eso/fixtures) are accepted unchanged', () => {
  for (const file of ['secretstores.yaml', 'clustersecretstores.yaml', 'externalsecrets.yaml']) {
    const docs = loadManifests(`test/eso/fixtures/${file}`);
    void test(`${file}: ${docs.length} manifests`, () => {
      assert.ok(docs.length >= 3);
      for (const o of docs)
        assert.deepEqual(
          accepted(o),
          { schema: [], denied: [], problems: [] },
          String((o.metadata as { name: string }).name),
        );
    });
  }
});

void describe('schemas refuse malformed objects', () => {
  const store = loadManifests('examples/eso-secretstore.yaml')[0] as KubeObject;
  const es = loadManifests('examples/eso-externalsecret.yaml')[0] as KubeObject;
  const cases: Array<[string, KubeObject, RegExp]> = [
    ['store without provider', edit(store, { 'spec.provider': undefined }), /must have required property 'provider'/],
    [
      'vault without server',
      edit(store, { 'spec.provider.vault.server': undefined }),
      /must have required property 'server'/,
    ],
    [
      'KV version v3',
      edit(store, { 'spec.provider.vault.version': 'v3' }),
      /\/spec\/provider\/vault\/version: must be equal to one of the allowed values/,
    ],
    [
      'caProvider of an unknown type',
      edit(store, { 'spec.provider.vault.caProvider.type': 'File' }),
      /caProvider\/type/,
    ],
    [
      'kubernetes auth without role',
      edit(store, { 'spec.provider.vault.auth.kubernetes.role': undefined }),
      /must have required property 'role'/,
    ],
    [
      'serviceAccountRef without name',
      edit(store, { 'spec.provider.vault.auth.kubernetes.serviceAccountRef': { audiences: ['vault'] } }),
      /must have required property 'name'/,
    ],
    [
      'caBundle that is not base64',
      edit(store, { 'spec.provider.vault.caBundle': '-----BEGIN CERTIFICATE-----' }),
      /must match format "byte"/,
    ],
    [
      'a namespace that is not a DNS label',
      edit(store, { 'spec.conditions': [{ namespaces: ['Team_A'] }] }),
      /namespaces\/0: must match pattern/,
    ],
    ['store refreshInterval of another type', edit(store, { 'spec.refreshInterval': true }), /refreshInterval/],
    ['secretKey with a slash', edit(es, { 'spec.data.0.secretKey': 'a/b' }), /secretKey: must match pattern/],
    [
      'data entry without remoteRef',
      edit(es, { 'spec.data.0.remoteRef': undefined }),
      /must have required property 'remoteRef'/,
    ],
    ['unknown store kind', edit(es, { 'spec.secretStoreRef.kind': 'VaultStore' }), /secretStoreRef\/kind/],
    ['unknown refreshPolicy', edit(es, { 'spec.refreshPolicy': 'Always' }), /refreshPolicy/],
    ['unknown decodingStrategy', edit(es, { 'spec.data.0.remoteRef.decodingStrategy': 'Hex' }), /decodingStrategy/],
    [
      'two rewrite operations in one entry',
      edit(es, { 'spec.dataFrom.0.rewrite': [{ regexp: { source: 'a', target: 'b' }, transform: { template: 'x' } }] }),
      /must NOT have more than 1 properties/,
    ],
  ];
  for (const [name, o, message] of cases) {
    void test(name, () => assert.match(schemaErrors(o).join('\n'), message));
  }
});

void describe("schema defaults are ESO's", () => {
  void test('defaults the apiserver fills in', () => {
    const es = JSON.parse(
      readFileSync(new URL('../../schemas/externalsecret.schema.json', import.meta.url), 'utf8'),
    ) as {
      properties: {
        spec: { properties: Record<string, { default?: unknown; properties?: Record<string, { default?: unknown }> }> };
      };
    };
    const spec = es.properties.spec.properties;
    assert.equal(spec.refreshInterval?.default, '1h');
    assert.deepEqual(spec.target?.default, { creationPolicy: 'Owner', deletionPolicy: 'Retain' });
    const store = JSON.parse(
      readFileSync(new URL('../../schemas/secretstore.schema.json', import.meta.url), 'utf8'),
    ) as Record<string, unknown>;
    const at = (path: string): unknown =>
      path.split('.').reduce<unknown>((n, k) => (n as Record<string, unknown>)[k], store);
    const vault = 'properties.spec.properties.provider.properties.vault.properties';
    assert.equal(at(`${vault}.version.default`), 'v2');
    assert.equal(at(`${vault}.auth.properties.kubernetes.properties.mountPath.default`), 'kubernetes');
    assert.equal(at(`${vault}.auth.properties.appRole.properties.path.default`), 'approle');
    assert.equal(at(`${vault}.auth.properties.jwt.properties.path.default`), 'jwt');
  });

  void test("defaults leave a minimal manifest valid (ajv useDefaults path is not needed for ESO's optional fields)", () => {
    const minimal = {
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      metadata: { name: 'm' },
      spec: { secretStoreRef: { name: 's' }, data: [{ secretKey: 'k', remoteRef: { key: 'p' } }] },
    };
    assert.equal(schemaValidator('ExternalSecret')(minimal), true);
  });
});

void describe('kinds and CRDs', () => {
  void test('ESO names, short names, scopes and printer columns', () => {
    assert.deepEqual(
      ESO_KINDS.map((k) => [k.group, k.version, k.kind, k.plural, k.shortNames.join(), k.scope]),
      [
        ['external-secrets.io', 'v1', 'SecretStore', 'secretstores', 'ss', 'Namespaced'],
        ['external-secrets.io', 'v1', 'ClusterSecretStore', 'clustersecretstores', 'css', 'Cluster'],
        ['external-secrets.io', 'v1', 'ExternalSecret', 'externalsecrets', 'es', 'Namespaced'],
        ['external-secrets.io', 'v1', 'ClusterExternalSecret', 'clusterexternalsecrets', 'ces', 'Cluster'],
        ['external-secrets.io', 'v1alpha1', 'PushSecret', 'pushsecrets', 'ps', 'Namespaced'],
      ],
    );
    assert.deepEqual(
      ESO_KINDS[3]?.printerColumns.map((c) => c.name),
      ['Store', 'Refresh Interval', 'Ready'],
    );
    assert.deepEqual(
      ESO_KINDS[4]?.printerColumns.map((c) => c.name),
      ['Age', 'Status'],
    );
    assert.deepEqual(
      ESO_KINDS[0]?.printerColumns.map((c) => c.name),
      ['Age', 'Status', 'Capabilities', 'Ready'],
    );
    assert.deepEqual(
      ESO_KINDS[2]?.printerColumns.map((c) => c.name),
      ['StoreType', 'Store', 'Refresh Interval', 'Status', 'Ready', 'Age'],
    );
    assert.ok(ESO_KINDS.every((k) => k.categories?.includes('external-secrets') && k.statusSubresource));
  });

  for (const meta of ESO_KINDS) {
    void test(`${meta.kind} CRD is structural and small enough for client-side kubectl apply`, () => {
      const crd = buildCrd([meta]);
      const json = JSON.stringify(crd);
      // The last-applied-configuration annotation holds the whole object: 262144 bytes at most (ESO #5079).
      assert.ok(json.length < 262_144 / 8, `${json.length} bytes`);
      assert.ok(!json.includes('"$ref"') && !json.includes('"$schema"') && !json.includes('"tsType"'));
      const problems: string[] = [];
      const walk = (node: unknown, path: string) => {
        if (!node || typeof node !== 'object') return;
        const n = node as Record<string, unknown>;
        if (n.properties && n.type !== 'object') problems.push(`${path}: properties without type object`);
        if (n.additionalProperties === false) problems.push(`${path}: additionalProperties false`);
        if (n['x-kubernetes-int-or-string'] && n.type) problems.push(`${path}: int-or-string with a type`);
        if (!n['x-kubernetes-int-or-string'] && !n.type && path.includes('properties'))
          problems.push(`${path}: no type`);
        for (const [k, v] of Object.entries(n)) {
          if (k === 'properties' && v && typeof v === 'object')
            for (const [p, s] of Object.entries(v)) walk(s, `${path}.properties.${p}`);
          else if (k === 'items' || k === 'additionalProperties') walk(v, `${path}.${k}`);
        }
      };
      const versions = (crd.spec as { versions: Array<{ schema: { openAPIV3Schema: unknown } }> }).versions;
      walk(versions[0]?.schema.openAPIV3Schema, '');
      assert.deepEqual(problems, []);
    });
  }
});
