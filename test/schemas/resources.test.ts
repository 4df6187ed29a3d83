// The product's resource refs address exactly what the installed CRDs serve: a wrong plural, version or
// scope would send every LIST, WATCH and apply of that kind to a 404.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import * as product from '../../schemas/resources.ts';
import { resourcePath } from '../../kube/resources.ts';

const root = new URL('../..', import.meta.url).pathname;
const crdDirs = ['charts/vaultgate/crds', 'charts/vaultgate/files/eso-crds'];

interface Crd {
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string };
    versions: { name: string; served: boolean }[];
  };
}
const crds: Crd[] = crdDirs.flatMap((d) =>
  readdirSync(`${root}${d}`)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => parse(readFileSync(`${root}${d}/${f}`, 'utf8')) as Crd),
);
const refs = Object.values(product).filter(
  (v): v is product.ResourceRef => typeof v === 'object' && v !== null && 'plural' in v,
);

test('every installed CRD has one product resource ref, and each ref has its CRD', () => {
  assert.equal(crds.length, 12);
  assert.deepEqual(refs.map((r) => r.kind).sort(), crds.map((c) => c.spec.names.kind).sort());
});

for (const crd of crds) {
  test(`${crd.spec.names.kind} (${crd.spec.group}): the ref's group, served version, plural and scope are the CRD's`, () => {
    const ref = refs.find((r) => r.kind === crd.spec.names.kind && r.group === crd.spec.group)!;
    assert.equal(ref.group, crd.spec.group);
    assert.equal(ref.plural, crd.spec.names.plural);
    assert.ok(
      crd.spec.versions.some((v) => v.name === ref.version && v.served),
      `${ref.version} not served`,
    );
    assert.equal(ref.namespaced, crd.spec.scope === 'Namespaced');
    const path = resourcePath(ref, 'team-a', 'x');
    assert.equal(
      path,
      `/apis/${crd.spec.group}/${ref.version}/${ref.namespaced ? 'namespaces/team-a/' : ''}${crd.spec.names.plural}/x`,
    );
  });
}
