// Fast tier, no helm needed: values against values.schema.json (as `helm lint`/`install` do), and a
// template lint (balanced actions, every included template defined, no tabs).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { CHART_DIR, CI_FILES } from './render.ts';

const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as object;
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(schema);
const defaults = parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<string, unknown>;

/** Helm coalesces user values over the defaults (maps merge, everything else replaces). */
function coalesce(base: unknown, over: unknown): unknown {
  if (
    over &&
    typeof over === 'object' &&
    !Array.isArray(over) &&
    base &&
    typeof base === 'object' &&
    !Array.isArray(base)
  ) {
    const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
    for (const [k, v] of Object.entries(over)) out[k] = coalesce(out[k], v);
    return out;
  }
  return over === undefined ? base : over;
}

function errorsFor(values: unknown): string[] {
  return validate(coalesce(defaults, values))
    ? []
    : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
}

void describe('chart values', () => {
  void test('values.yaml satisfies values.schema.json (draft-07)', () => {
    assert.equal((schema as { $schema: string }).$schema, 'http://json-schema.org/draft-07/schema#');
    assert.deepEqual(errorsFor({}), []);
  });

  for (const file of CI_FILES) {
    void test(`ci/${file} satisfies the schema`, () => {
      assert.deepEqual(errorsFor(parse(readFileSync(join(CHART_DIR, 'ci', file), 'utf8'))), []);
    });
  }

  void test('bad values are rejected with the offending path', () => {
    assert.match(errorsFor({ webhook: { replica: 3 } }).join(), /must NOT have additional properties/);
    assert.match(errorsFor({ webhook: { timeoutSeconds: 60 } }).join(), /\/webhook\/timeoutSeconds must be <= 30/);
    assert.match(errorsFor({ namePrefix: 'acme.prod' }).join(), /\/namePrefix must match pattern/);
    assert.match(
      errorsFor({ webhook: { esoFailurePolicy: 'Sometimes' } }).join(),
      /\/webhook\/esoFailurePolicy must be equal to one of the allowed values/,
    );
    assert.match(errorsFor({ eso: { installCRDs: 'maybe' } }).join(), /\/eso\/installCRDs/);
    assert.match(errorsFor({ webhook: { urlOverride: 'http://insecure:80' } }).join(), /\/webhook\/urlOverride/);
    assert.match(
      errorsFor({ certManager: { enabled: true }, webhook: { caBundle: 'QUJD' } }).join(),
      /\/webhook\/caBundle must NOT have more than 0 characters/,
    );
    assert.match(errorsFor({ guardrails: { default: { mode: 'block' } } }).join(), /\/guardrails\/default\/mode/);
    assert.deepEqual(errorsFor({ eso: { installCRDs: false } }), [], 'a YAML boolean is fine too');
  });
});

void describe('chart template lint', () => {
  const dir = join(CHART_DIR, 'templates');
  const files = readdirSync(dir).filter((f) => /\.(ya?ml|tpl|txt)$/.test(f));
  const all = files.map((f) => [f, readFileSync(join(dir, f), 'utf8')] as const);
  const defined = new Set(
    all.flatMap(([, text]) => [...text.matchAll(/\{\{-?\s*define\s+"([^"]+)"/g)].map((m) => m[1]!)),
  );

  void test('every {{ opens and closes on the same line (comments aside), and no tabs', () => {
    for (const [file, raw] of all) {
      // a {{/* comment */}} may span lines: blank it out, keeping the line numbers
      const text = raw.replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, (c) => c.replace(/[^\n]/g, ' '));
      text.split('\n').forEach((line, i) => {
        assert.equal(
          (line.match(/\{\{/g) ?? []).length,
          (line.match(/\}\}/g) ?? []).length,
          `${file}:${i + 1} unbalanced {{ }}`,
        );
        assert.ok(!line.includes('\t'), `${file}:${i + 1} has a tab`);
      });
    }
  });

  void test('every include/template names a defined template; define/end blocks balance', () => {
    for (const [file, text] of all) {
      for (const m of text.matchAll(/\{\{-?\s*(?:include|template)\s+"([^"]+)"/g))
        assert.ok(defined.has(m[1]!), `${file}: "${m[1]}" is not defined`);
      for (const m of text.matchAll(/\(include\s+"([^"]+)"/g))
        assert.ok(defined.has(m[1]!), `${file}: "${m[1]}" is not defined`);
      const opens = (text.match(/\{\{-?\s*(if|range|with|define)\b/g) ?? []).length;
      const ends = (text.match(/\{\{-?\s*end\s*-?\}\}/g) ?? []).length;
      assert.equal(opens, ends, `${file}: ${opens} blocks opened, ${ends} closed`);
    }
  });

  void test('the Grafana dashboard is valid JSON with panels for admission, certificates, reconcilers and Vault', () => {
    const dash = JSON.parse(readFileSync(join(CHART_DIR, 'dashboards', 'vaultgate.json'), 'utf8')) as {
      panels: { title: string; targets?: { expr: string }[] }[];
    };
    const exprs = dash.panels.flatMap((p) => p.targets?.map((t) => t.expr) ?? []).join('\n');
    for (const metric of [
      'vaultgate_admission_requests_total',
      'vaultgate_admission_duration_seconds_bucket',
      'vaultgate_webhook_certificate_expiry_timestamp_seconds',
      'vaultgate_cert_keeper_actions_total',
      'controller_runtime_reconcile_total',
      'vault_requests_total',
      'vault_logins_total',
    ]) {
      assert.ok(exprs.includes(metric), `dashboard lacks ${metric}`);
    }
  });

  void test('the bootstrap policy grants only the prefixed ACL policies and kubernetes-auth roles', () => {
    const hcl = readFileSync(join(CHART_DIR, 'files', 'bootstrap-policy.hcl'), 'utf8');
    const paths = [...hcl.matchAll(/^path\s+"([^"]+)"/gm)].map((m) => m[1]);
    assert.deepEqual(paths, ['sys/policies/acl/vaultgate.*', 'auth/kubernetes/role/vaultgate.*']);
    assert.doesNotMatch(hcl, /sudo/);
  });
});
