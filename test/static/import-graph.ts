// The product's import graph at package level (a package is a folder, as in Go: `audit/plan` and
// `audit/access` are two packages), read with TypeScript's own pre-processor, and the checks the
// architecture test runs over it: cycles (Tarjan's strongly connected components) and layer rules.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

/** Top-level folders that hold product code (tests, charts and generated bundles are not layers). */
export const PRODUCT_ROOTS = [
  'observability',
  'golang',
  'schemas',
  'kube',
  'vault',
  'policy',
  'eso',
  'trail',
  'audit',
  'certs',
  'webhook',
  'controller',
  'cli',
] as const;

export interface ImportEdge {
  from: string;
  to: string;
}

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Every relative import between product files, as repository-relative paths. */
export function productImports(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const top of PRODUCT_ROOTS) {
    for (const file of tsFiles(join(root, top))) {
      const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const imp of info.importedFiles) {
        if (!imp.fileName.startsWith('.')) continue;
        edges.push({ from: relative(root, file), to: normalize(relative(root, join(dirname(file), imp.fileName))) });
      }
    }
  }
  return edges;
}

export const packageOf = (file: string): string => dirname(file);

/** Package → packages it imports (self-imports left out). */
export function packageGraph(edges: readonly ImportEdge[]): Map<string, Set<string>> {
  const g = new Map<string, Set<string>>();
  for (const e of edges) {
    const a = packageOf(e.from);
    const b = packageOf(e.to);
    if (!g.has(a)) g.set(a, new Set());
    if (!g.has(b)) g.set(b, new Set());
    if (a !== b) g.get(a)!.add(b);
  }
  return g;
}

/** The cycles of a graph: each strongly connected component with more than one node, sorted. */
export function cycles(g: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      for (;;) {
        const w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
        if (w === v) break;
      }
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of [...g.keys()].sort()) if (!idx.has(v)) visit(v);
  return out;
}

export const under = (file: string, folder: string): boolean => file === folder || file.startsWith(`${folder}/`);
