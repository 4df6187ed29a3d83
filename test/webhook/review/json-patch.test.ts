// The mutating webhook's hand-written clone and diff (webhook/admission/json-patch.ts) give exactly
// what the generic tools they replace gave: structuredClone, and rfc6902's createPatch with arrays
// diffed index by index (the core's previous implementation, kept here as the reference).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyPatch, createPatch, type Operation, type Pointer } from 'rfc6902';
import { cloneJson, jsonPatch } from '../../../webhook/review/json-patch.ts';

function arraysByIndex(input: unknown, output: unknown, ptr: Pointer): Operation[] | void {
  if (!Array.isArray(input) || !Array.isArray(output)) return undefined;
  if (input.length !== output.length) return [{ op: 'replace', path: ptr.toString(), value: output }];
  return input.flatMap((item: unknown, i) =>
    createPatch(item, output[i], arraysByIndex).map((op) => ({
      ...op,
      path: `${ptr.add(String(i)).toString()}${op.path}`,
    })),
  );
}

const reference = (a: unknown, b: unknown): unknown => createPatch(a, b, arraysByIndex);

/** A document and a variant of it: some values replaced, keys added and removed, lists resized. */
const edited = fc.jsonValue({ maxDepth: 4 }).chain((doc) =>
  fc
    .tuple(fc.constant(doc), fc.jsonValue({ maxDepth: 2 }), fc.integer({ min: 0, max: 1000 }))
    .map(([original, replacement, seed]) => {
      const copy = structuredClone(original);
      let n = seed;
      const visit = (v: unknown): unknown => {
        n = (n * 7 + 3) % 1001;
        if (Array.isArray(v)) {
          if (n % 11 === 0) return [...(v as unknown[]), replacement];
          return v.map(visit);
        }
        if (typeof v === 'object' && v !== null) {
          const o = v as Record<string, unknown>;
          for (const k of Object.keys(o)) {
            if (n % 13 === 0) delete o[k];
            else o[k] = visit(o[k]);
          }
          if (n % 5 === 0) o[`new/key~${n}`] = replacement;
          return o;
        }
        return n % 3 === 0 ? replacement : v;
      };
      return [original, visit(copy)] as const;
    }),
);

void describe('jsonPatch', () => {
  void test('equals rfc6902 createPatch with index-by-index arrays, and applies', () => {
    fc.assert(
      fc.property(edited, ([a, b]) => {
        const ops = jsonPatch(a, b);
        assert.equal(JSON.stringify(ops), JSON.stringify(reference(a, b)));
        // rfc6902's applyPatch skips paths through "__proto__", "constructor" and "prototype" keys (its pointer.js
        // guards against prototype pollution) and drops "__proto__" keys from the values it copies in; the
        // apiserver applies the patch, not rfc6902: check application only where rfc6902 can.
        if (/"(__proto__|constructor|prototype)"/.test(JSON.stringify([a, b]))) return;
        const target = { doc: structuredClone(a) };
        const rooted = ops.map((op) => ({ ...op, path: `/doc${op.path}` }));
        assert.deepEqual(applyPatch(target, rooted as Operation[]).filter(Boolean), []);
        assert.deepEqual(target.doc, b);
      }),
      { numRuns: 2000 },
    );
  });

  void test('escapes "~" and "/" in keys and ignores undefined-valued keys, as rfc6902 does', () => {
    const a = { metadata: { labels: { 'a/b': 'x', 'c~d': 'y', gone: undefined } } };
    const b = { metadata: { labels: { 'a/b': 'z', 'e~/f': 'w', gone: 'back' } } };
    assert.deepEqual(jsonPatch(a, b), reference(a, b));
    assert.deepEqual(
      jsonPatch(a, b).map((op) => `${op.op} ${op.path}`),
      [
        'remove /metadata/labels/c~0d',
        'add /metadata/labels/e~0~1f',
        'add /metadata/labels/gone',
        'replace /metadata/labels/a~1b',
      ],
    );
  });
});

void describe('cloneJson', () => {
  void test('is a deep copy equal to structuredClone for JSON documents', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (doc) => {
        const copy = cloneJson(doc);
        assert.deepEqual(copy, structuredClone(doc));
        if (typeof doc === 'object' && doc !== null) assert.notEqual(copy, doc);
      }),
      { numRuns: 1000 },
    );
  });

  void test('keeps a "__proto__" key from JSON.parse as data, and clones other objects as structuredClone does', () => {
    const doc = JSON.parse('{"a":{"__proto__":{"polluted":true}}}') as { a: Record<string, unknown> };
    const copy = cloneJson(doc);
    assert.deepEqual(Object.keys(copy.a), ['__proto__']);
    assert.equal(Object.getPrototypeOf(copy.a), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const when = new Date(0);
    assert.deepEqual(cloneJson({ when }), { when });
    assert.notEqual(cloneJson({ when }).when, when);
  });
});
