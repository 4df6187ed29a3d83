// Golden AdmissionReview pairs: each test/golden/<case>.json holds a request ("review"), the context it
// is judged in, and the expected mutating and validating AdmissionReview responses.
// Refresh after an intended change, then review the diff:
//   UPDATE_GOLDEN=1 node --import tsx --test test/golden/golden.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { decideSync } from '../../webhook/review/review.ts';
import { defaultContext, type GuardrailObject } from '../../webhook/admission/context.ts';
import type { AdmissionRequest, AdmissionResponse } from '../../webhook/admission/types.ts';

interface GoldenCase {
  description: string;
  context: {
    guardrails?: GuardrailObject[];
    namespaces?: Record<string, Record<string, string>>;
    policies?: string[];
    prefix?: string;
  };
  review: { apiVersion: string; kind: string; request: AdmissionRequest };
  expected?: {
    mutation: { apiVersion: string; kind: string; response: AdmissionResponse };
    validation: { apiVersion: string; kind: string; response: AdmissionResponse };
    rules: string[];
  };
}

const dir = new URL('./', import.meta.url);
const update = process.env.UPDATE_GOLDEN === '1';

for (const file of readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort()) {
  void test(`golden ${file}`, () => {
    const url = new URL(file, dir);
    const golden = JSON.parse(readFileSync(url, 'utf8')) as GoldenCase;
    const c = golden.context;
    const ctx = defaultContext({
      guardrails: c.guardrails ?? [],
      namespaceLabels: (ns) => c.namespaces?.[ns],
      ...(c.policies
        ? { policyExists: (ns: string, name: string) => c.policies?.includes(`${ns}/${name}`) ?? false }
        : {}),
      ...(c.prefix ? { namePrefix: c.prefix } : {}),
    });
    const { mutation, validation } = decideSync(golden.review.request, ctx);
    const actual = {
      mutation: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: mutation.response },
      validation: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: validation.response },
      rules: [...new Set([...mutation.rules, ...validation.rules])],
    };
    if (update) {
      writeFileSync(url, `${JSON.stringify({ ...golden, expected: actual }, null, 2)}\n`);
      return;
    }
    assert.ok(golden.expected, `${file} has no expected responses: run with UPDATE_GOLDEN=1`);
    assert.deepEqual(JSON.parse(JSON.stringify(actual)), golden.expected);
  });
}
