// The unit test of `a/b.ts` is `test/a/b.test.ts`, or `test/a/b.<theme>.test.ts` for one theme of it, so a
// reader finds a module's tests by its name. This lists product modules without one. Left out by rule:
// generated files, type-only modules (nothing runs) and re-export-only modules (pure wiring: an index).
// Every other module without a test of its name is in MODULE_TEST_ALLOWLIST with its reason; an entry
// "tested by <file>" must name a test that imports the module, and an entry whose module gained a test of
// its name (or is gone) fails until removed, so the list only shrinks. No folder is allowlisted whole.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';
import { PRODUCT_ROOTS } from './import-graph.ts';
import { MODULE_TEST_ALLOWLIST } from './module-tests.allowlist.ts';

const root = new URL('../..', import.meta.url).pathname;

function files(dir: string, suffix: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) files(p, suffix, out);
    else if (name.endsWith(suffix) && !name.endsWith('.d.ts')) out.push(relative(root, p));
  }
  return out;
}

const modules = PRODUCT_ROOTS.flatMap((r) => files(join(root, r), '.ts')).sort();
const testFiles = new Set(files(join(root, 'test'), '.test.ts'));

/** `a/b.ts` → is there `test/a/b.test.ts` or `test/a/b.<theme>.test.ts`? */
export function hasNamedTest(module: string, tests: ReadonlySet<string>): boolean {
  const base = `test/${module.slice(0, -'.ts'.length)}`;
  if (tests.has(`${base}.test.ts`)) return true;
  for (const t of tests)
    if (
      t.startsWith(`${base}.`) &&
      t.endsWith('.test.ts') &&
      !t.slice(base.length + 1, -'.test.ts'.length).includes('/')
    )
      return true;
  return false;
}

/** Generated, type-only or re-export-only: nothing of its own to unit test. */
function exemptByRule(module: string): boolean {
  if (module.endsWith('.generated.ts')) return true;
  const sf = ts.createSourceFile(module, readFileSync(join(root, module), 'utf8'), ts.ScriptTarget.Latest);
  return sf.statements.every(
    (s) =>
      ts.isInterfaceDeclaration(s) ||
      ts.isTypeAliasDeclaration(s) ||
      (ts.isImportDeclaration(s) && (s.importClause?.isTypeOnly ?? false)) ||
      (ts.isExportDeclaration(s) && (s.isTypeOnly || s.moduleSpecifier !== undefined)),
  );
}

const missing = modules.filter((m) => !hasNamedTest(m, testFiles) && !exemptByRule(m));

test('the module list is read, and the name rule finds a known pair (so the checks below can fail)', () => {
  assert.ok(modules.length > 150, `only ${modules.length} modules found`);
  assert.ok(hasNamedTest('kube/workqueue.ts', testFiles));
  assert.ok(hasNamedTest('kube/workqueue.ts', new Set(['test/kube/workqueue.priority.test.ts'])));
  assert.ok(
    !hasNamedTest(
      'kube/workqueue.ts',
      new Set(['test/kube/workqueue-priority.test.ts', 'test/kube/workqueue/x.test.ts']),
    ),
  );
  assert.ok(exemptByRule('schemas/types.generated.ts'));
  assert.ok(!exemptByRule('kube/workqueue.ts'));
});

test('every product module has a unit test of its name, or an allowlisted reason', () => {
  assert.deepEqual(
    missing.filter((m) => !(m in MODULE_TEST_ALLOWLIST)),
    [],
  );
});

test('the allowlist names only modules that exist and still lack a test of their name', () => {
  assert.deepEqual(
    Object.keys(MODULE_TEST_ALLOWLIST).filter((m) => !missing.includes(m)),
    [],
  );
});

test('an entry "tested by <file>" names a test file that imports the module', () => {
  const bad: string[] = [];
  for (const [module, reason] of Object.entries(MODULE_TEST_ALLOWLIST)) {
    const by = /^tested by (test\/\S+\.test\.ts)/.exec(reason)?.[1];
    if (!by) continue;
    if (!existsSync(join(root, by))) {
      bad.push(`${module}: ${by} does not exist`);
      continue;
    }
    const imports = ts
      .preProcessFile(readFileSync(join(root, by), 'utf8'), true, true)
      .importedFiles.map((i) => normalize(relative(root, join(root, dirname(by), i.fileName))));
    if (!imports.includes(module)) bad.push(`${module}: ${by} does not import it`);
  }
  assert.deepEqual(bad, []);
});
