import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { validateObject } from '../../schemas/validator.ts';
import { staleFiles, CRD_DIR, ESO_CRD_DIR } from '../../schemas/generate.ts';
import { KINDS } from '../../schemas/kinds.ts';
import { vaultName, parseVaultName, prefixProblem } from '../../schemas/vault-names.ts';
import { parseDuration } from '../../schemas/ttl.ts';

const vp = (spec: unknown) => ({
  apiVersion: 'vaultgate.io/v1alpha1',
  kind: 'VaultPolicy',
  metadata: { name: 'p', namespace: 'ns' },
  spec,
});

void describe('schema validator', () => {
  void test('a clean VaultPolicy has no problems', () => {
    assert.deepEqual(validateObject(vp({ rules: [{ path: 'secret/data/ns/*', capabilities: ['read'] }] })), []);
  });

  void test('errors name the field path in kubectl form and say what is expected', () => {
    const problems = validateObject(
      vp({ rules: [{ path: 'a', capabilities: ['read', 'reed'], maxWrappingTTL: '5 minutes' }, { capabilities: [] }] }),
    );
    const byField = new Map(problems.map((p) => [p.field, p]));
    assert.match(byField.get('spec.rules[0].capabilities[1]')?.message ?? '', /"reed" is not one of/);
    assert.match(byField.get('spec.rules[0].maxWrappingTTL')?.message ?? '', /Go duration/);
    assert.equal(byField.get('spec.rules[1].path')?.message, 'is required');
    assert.equal(byField.get('spec.rules[1].capabilities')?.message, 'must list at least one item');
    assert.ok(problems.every((p) => p.severity === 'deny' && p.rule.startsWith('schema.')));
  });

  void test('reports every error, not just the first', () => {
    const problems = validateObject({
      apiVersion: 'vaultgate.io/v1alpha1',
      kind: 'VaultRoleBinding',
      metadata: { name: 'b' },
      spec: { serviceAccounts: [], policies: [], tokenTTL: 5 },
    });
    assert.deepEqual(problems.map((p) => p.field).sort(), ['spec.policies', 'spec.serviceAccounts', 'spec.tokenTTL']);
  });

  void test('unknown fields are warnings with a suggestion', () => {
    const problems = validateObject(vp({ rule: [], policy: 'path "a" { capabilities = ["read"] }' }));
    assert.deepEqual(
      problems.map((p) => [p.field, p.severity, p.rule]),
      [['spec.rule', 'warn', 'schema.unknown-field']],
    );
    assert.match(problems[0]?.message ?? '', /did you mean "rules"/);
  });

  void test('map keys with odd characters are quoted in field paths', () => {
    const problems = validateObject(
      vp({ rules: [{ path: 'a', capabilities: ['update'], allowedParameters: { 'a/b': 'x' } }] }),
    );
    assert.equal(problems[0]?.field, 'spec.rules[0].allowedParameters["a/b"]');
  });

  void test('kinds vaultgate does not serve are not judged', () => {
    assert.deepEqual(validateObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }), []);
  });
});

void describe('generated files', () => {
  void test('CRDs and types are up to date with the schemas (run `npm run generate` if this fails)', async () => {
    assert.deepEqual(await staleFiles(), []);
  });

  void test('every CRD is a valid, structural apiextensions/v1 object and small enough for client-side apply', () => {
    // vaultgate's CRDs in crds/; ESO-group CRDs in files/eso-crds/ (rendered only when ESO's are absent).
    const files = [CRD_DIR, ESO_CRD_DIR].flatMap((dir) =>
      readdirSync(dir)
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => `${dir}/${f}`),
    );
    assert.equal(files.length, new Set(KINDS.map((k) => `${k.plural}.${k.group}`)).size);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      // kubectl apply stores the object in an annotation limited to 256 KiB (ESO #5098): stay far below.
      assert.ok(text.length < 128 * 1024, `${file} is ${text.length} bytes`);
      const crd = parse(text) as Record<string, unknown>;
      new CustomResourceDefinition(crd as ConstructorParameters<typeof CustomResourceDefinition>[0]).validate();
      assert.doesNotMatch(text, /\$schema|\$id|tsType/, `${file} carries keywords a CRD refuses`);
    }
  });

  void test('vaultgate CRDs have status, printer columns, short names and the vaultgate category', () => {
    const crd = parse(readFileSync(`${CRD_DIR}/vaultpolicies.vaultgate.io.yaml`, 'utf8')) as {
      spec: {
        names: { shortNames: string[]; categories: string[] };
        scope: string;
        versions: Array<{ subresources: unknown; additionalPrinterColumns: Array<{ name: string; jsonPath: string }> }>;
      };
    };
    assert.deepEqual(crd.spec.names.shortNames, ['vp']);
    assert.deepEqual(crd.spec.names.categories, ['vaultgate']);
    const v = crd.spec.versions[0];
    assert.deepEqual(v?.subresources, { status: {} });
    assert.deepEqual(
      v?.additionalPrinterColumns.map((c) => c.name),
      ['Ready', 'Vault Name', 'Age'],
    );
    const vgr = parse(readFileSync(`${CRD_DIR}/vaultguardrails.vaultgate.io.yaml`, 'utf8')) as {
      spec: { scope: string };
    };
    assert.equal(vgr.spec.scope, 'Cluster');
  });
});

void describe('vault names and durations', () => {
  void test('<prefix>.<namespace>.<name>, reversible for our prefix only', () => {
    assert.equal(vaultName('vaultgate', 'team-a', 'app.v2'), 'vaultgate.team-a.app.v2');
    assert.deepEqual(parseVaultName('vaultgate', 'vaultgate.team-a.app.v2'), { namespace: 'team-a', name: 'app.v2' });
    assert.equal(parseVaultName('vaultgate', 'other.team-a.app'), undefined);
  });

  void test('prefixes with dots or capitals are refused', () => {
    assert.match(prefixProblem('my.gate') ?? '', /must not contain "."/);
    assert.ok(prefixProblem('Gate'));
    assert.equal(prefixProblem('vg-prod'), undefined);
    assert.throws(() => vaultName('a.b', 'ns', 'n'));
  });

  void test('Go durations', () => {
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('90s'), 90_000);
    assert.equal(parseDuration('0'), 0);
    assert.equal(parseDuration('5'), undefined);
    assert.equal(parseDuration('1d'), undefined);
  });
});
