import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { parse } from 'yaml';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { staleFiles, CRD_DIR, ESO_CRD_DIR } from '../../schemas/generate.ts';
import { KINDS } from '../../schemas/kinds.ts';

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
