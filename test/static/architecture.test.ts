// The layout is the architecture (ARCHITECTURE.md): these checks fail a change that puts an import in
// the wrong direction, so the layers stay as written down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cycles, packageGraph, productImports, under, type ImportEdge } from './import-graph.ts';
import * as kubeResources from '../../kube/resources.ts';
import { KINDS } from '../../schemas/kinds.ts';

const root = new URL('../..', import.meta.url).pathname;
const edges = productImports(root);
const offending = (pred: (e: ImportEdge) => boolean): string[] => edges.filter(pred).map((e) => `${e.from} → ${e.to}`);

test('the import graph is read (a broken reader would pass every rule below)', () => {
  assert.ok(edges.length > 300, `only ${edges.length} imports found`);
  assert.ok(edges.some((e) => e.from === 'controller/reconcilers/vaultpolicy.ts' && e.to === 'policy/spec-rules.ts'));
});

test('no package-level import cycle', () => {
  assert.deepEqual(cycles(packageGraph(edges)), []);
});

test('the cycle finder finds cycles (so the test above can fail)', () => {
  const g = packageGraph([
    { from: 'a/x.ts', to: 'b/y.ts' },
    { from: 'b/y.ts', to: 'c/z.ts' },
    { from: 'c/z.ts', to: 'a/w.ts' },
    { from: 'c/z.ts', to: 'd/v.ts' },
  ]);
  assert.deepEqual(cycles(g), [['a', 'b', 'c']]);
});

// What each bottom layer may import: nothing above it.
const BOTTOM: Record<string, readonly string[]> = {
  observability: [],
  golang: [],
  schemas: ['golang'],
  kube: ['observability', 'schemas'],
  vault: ['observability'],
  policy: ['schemas', 'vault'],
  eso: ['schemas', 'kube', 'golang'],
  trail: ['kube', 'observability'],
  certs: ['kube', 'observability'],
};

for (const [layer, allowed] of Object.entries(BOTTOM)) {
  test(`${layer}/ imports only ${allowed.length ? allowed.map((a) => `${a}/`).join(', ') : 'itself'}`, () => {
    const bad = offending((e) => under(e.from, layer) && !under(e.to, layer) && !allowed.some((a) => under(e.to, a)));
    assert.deepEqual(bad, []);
  });
}

test('nothing outside controller/ imports it, except the CLI starting the controller process', () => {
  const bad = offending(
    (e) =>
      under(e.to, 'controller') &&
      !under(e.from, 'controller') &&
      !(under(e.from, 'cli') && e.to === 'controller/main.ts'),
  );
  assert.deepEqual(bad, []);
});

test('the webhook never imports the controller, and the trail never imports a process', () => {
  assert.deepEqual(
    offending((e) => under(e.from, 'webhook') && under(e.to, 'controller')),
    [],
  );
  assert.deepEqual(
    offending(
      (e) =>
        (under(e.from, 'audit') || under(e.from, 'trail')) &&
        (under(e.to, 'controller') || under(e.to, 'webhook/review') || e.to.startsWith('webhook/main')),
    ),
    [],
  );
});

test("kube/ addresses only Kubernetes' own kinds (the product's are schemas/resources.ts)", () => {
  const refs = Object.values(kubeResources).filter((v) => typeof v === 'object' && v !== null && 'plural' in v) as {
    group: string;
    kind: string;
  }[];
  assert.ok(refs.length > 5, `only ${refs.length} refs found`);
  const productGroups = new Set(KINDS.map((k) => k.group));
  assert.deepEqual(
    refs.filter((r) => productGroups.has(r.group)).map((r) => `${r.group} ${r.kind}`),
    [],
  );
});

// golang/ (Go's semantics: text/template, Sprig, values, fmt, time, durations, JSON, regexp) is used
// through its packages' index files only, so what it offers is what they export.
const GOLANG_ENTRIES = ['golang/index.ts', 'golang/template/index.ts', 'golang/sprig/index.ts'];

test('outside golang/, code imports golang/ through its index files only', () => {
  assert.deepEqual(
    offending((e) => !under(e.from, 'golang') && under(e.to, 'golang') && !GOLANG_ENTRIES.includes(e.to)),
    [],
  );
});

/** File → files it imports, for the files under `folder`. */
function fileGraph(folder: string): Map<string, Set<string>> {
  const g = new Map<string, Set<string>>();
  for (const e of edges.filter((x) => under(x.from, folder) && under(x.to, folder))) {
    if (!g.has(e.from)) g.set(e.from, new Set());
    if (!g.has(e.to)) g.set(e.to, new Set());
    g.get(e.from)!.add(e.to);
  }
  return g;
}

test('no file-level import cycle inside golang/', () => {
  assert.ok(fileGraph('golang').size > 10, "golang/'s files are read");
  assert.deepEqual(cycles(fileGraph('golang')), []);
});
