// Every permission the chart grants, per values file, is checked in (test/chart/rbac-rules.expected.json):
// a new permission fails this test until the list is changed in the same commit, so it is a reviewed
// change. Regenerate the list with UPDATE_RBAC_RULES=1 after reviewing the diff this test prints.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CI_FILES, helmSkip, render, type Obj } from './render.ts';

const EXPECTED = join(import.meta.dirname, 'rbac-rules.expected.json');
const RBAC_KINDS = new Set(['ClusterRole', 'Role']);

/** One line per rule: `Kind/name[ns]: verbs on apiGroup/resources [names]`, sorted, so diffs read well. */
function grants(objs: Obj[]): string[] {
  const out: string[] = [];
  for (const o of objs.filter((x) => RBAC_KINDS.has(x.kind as string))) {
    const meta = o.metadata as { name: string; namespace?: string };
    const where = `${o.kind as string}/${meta.name}${meta.namespace ? `[${meta.namespace}]` : ''}`;
    for (const r of (o.rules ?? []) as Obj[]) {
      const groups = ((r.apiGroups ?? []) as string[]).map((g) => g || 'core').join(',');
      const names = r.resourceNames ? ` [${(r.resourceNames as string[]).join(',')}]` : '';
      out.push(
        `${where}: ${(r.verbs as string[]).join(',')} on ${groups}/${(r.resources as string[]).join(',')}${names}`,
      );
    }
  }
  return out.sort();
}

const cases = [undefined, ...CI_FILES.map((f) => `ci/${f}`)];

void describe('chart RBAC is the reviewed list', { skip: helmSkip() }, () => {
  const actual: Record<string, string[]> = {};
  for (const v of cases) actual[v ?? 'defaults'] = grants(render(v ? { valuesFile: v } : {}));
  if (process.env.UPDATE_RBAC_RULES === '1') writeFileSync(EXPECTED, `${JSON.stringify(actual, null, 2)}\n`);
  const expected = JSON.parse(readFileSync(EXPECTED, 'utf8')) as Record<string, string[]>;

  for (const v of cases) {
    const key = v ?? 'defaults';
    void test(`${key}: every Role/ClusterRole rule is in rbac-rules.expected.json, and nothing more`, () => {
      const want = expected[key] ?? [];
      const added = (actual[key] ?? []).filter((g) => !want.includes(g));
      const removed = want.filter((g) => !(actual[key] ?? []).includes(g));
      assert.deepEqual({ added, removed }, { added: [], removed: [] }, 'review the change, then UPDATE_RBAC_RULES=1');
    });
  }

  void test('with the ESO kinds off, the controller has no right on Secrets (but its cert Secret) nor on ServiceAccount tokens', () => {
    const off = actual['ci/eso-off-values.yaml'] ?? [];
    assert.ok(off.length > 0);
    const controller = off.filter((g) => g.includes('-controller'));
    assert.deepEqual(
      controller.filter((g) => /core\/.*secrets/.test(g) && !/\[.*-webhook-tls.*\]|\[.*cert.*\]/.test(g)),
      [],
    );
    assert.deepEqual(
      controller.filter((g) => g.includes('serviceaccounts/token')),
      [],
    );
    assert.ok(
      (actual.defaults ?? []).some((g) => g.includes('-controller') && g.includes('serviceaccounts/token')),
      'with ESO on, TokenRequest is granted',
    );
  });

  void test("with watchNamespaces, every right on tenants' objects is a Role in a watched namespace; cluster-wide only guardrails and those Namespaces", () => {
    const ns = actual['ci/namespaced-values.yaml'] ?? [];
    const cluster = ns.filter((g) => g.startsWith('ClusterRole/'));
    const tenant =
      /core\/(secrets|configmaps|serviceaccounts\/token|events)|vaultpolicies|vaultrolebindings|secretstores|externalsecrets|clustersecretstores/;
    assert.deepEqual(
      cluster.filter((g) => tenant.test(g)),
      [],
      'no ClusterRole on tenant objects',
    );
    assert.deepEqual(
      cluster.filter((g) => g.includes('core/namespaces')).map((g) => g.replace(/^.*: /, '')),
      ['get,list,watch on core/namespaces [team-a,team-b]', 'get,list,watch on core/namespaces [team-a,team-b]'],
    );
    // Besides the release namespace's own named objects (Lease, cert Secret, audit key and JWKS).
    const own = (g: string): boolean =>
      g.startsWith('Role/rel-vaultgate-webhook-audit[vaultgate]') || / \[[^\]]+\]$/.test(g);
    const roleNamespaces = new Set(
      ns.filter((g) => g.startsWith('Role/') && tenant.test(g) && !own(g)).map((g) => /\[([^\]]+)\]:/.exec(g)?.[1]),
    );
    assert.deepEqual([...roleNamespaces].sort(), ['team-a', 'team-b']);
    assert.ok(
      ns.some(
        (g) => g.startsWith('Role/rel-vaultgate-controller-watch[team-a]') && g.includes('serviceaccounts/token'),
      ),
    );
  });

  void test("no rule grants a verb the code never uses (update on reconciled kinds, more than the controller's status apply on guardrail status)", () => {
    for (const [key, list] of Object.entries(actual)) {
      assert.deepEqual(
        list.filter((g) => g.includes('vaultguardrails/status')),
        ['ClusterRole/rel-vaultgate-controller: patch on vaultgate.io/vaultguardrails/status'],
        key,
      );
      assert.deepEqual(
        list.filter((g) =>
          /ClusterRole\/\S*-controller: \S*update\S* on (vaultgate\.io|external-secrets\.io)\//.test(g),
        ),
        [],
        key,
      );
    }
  });
});
