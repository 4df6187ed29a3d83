// pathProblems answers plain paths from a regular expression without running the checks: it must give
// exactly what the complete check gives, for plain paths and for everything else.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pathProblems, pathProblemsFull } from '../../policy/paths.ts';

const plainChar = fc.constantFrom(...'aZ09_.-'.split(''));
const anyChar = fc.constantFrom(
  ...'aZ09_.-/*+{} \t\u0000\u007fé'.split(''),
  '{{namespace}}',
  '{{ namespace }}',
  '{{x}}',
  '//',
);
const plainSegment = fc.string({ unit: plainChar, minLength: 1, maxLength: 6 });
/** Strings the fast path accepts: segments, then nothing, `*` or `/*`. */
const plainPath = fc
  .tuple(fc.array(plainSegment, { minLength: 1, maxLength: 5 }), fc.constantFrom('', '*', '/*'))
  .map(([segs, tail]) => segs.join('/') + tail);
/** Near misses and anything else: the complete check must run for these. */
const otherPath = fc.string({ unit: anyChar, maxLength: 24 });
const templated = fc
  .tuple(plainPath, fc.constantFrom('/{{namespace}}', '{{ namespace }}/', '/+', '+*', '/', '//x'))
  .map(([p, t]) => p + t);

void describe('pathProblems fast path', () => {
  void test('equals the complete check on plain paths, near misses and arbitrary text', () => {
    fc.assert(
      fc.property(fc.oneof(plainPath, otherPath, templated), fc.boolean(), (path, allowNamespaceTemplate) => {
        assert.deepEqual(
          pathProblems(path, { allowNamespaceTemplate }),
          pathProblemsFull(path, { allowNamespaceTemplate }),
        );
      }),
      { numRuns: 5000 },
    );
  });

  void test('plain paths have no problems; everyday mistakes still do', () => {
    for (const p of ['secret/data/app/*', 'secret/data/app*', 'kv/x.y-z_1', 'secret/data/a/b/c'])
      assert.deepEqual(pathProblems(p), [], p);
    assert.deepEqual(
      pathProblems('secret/*/x').map((x) => x.code),
      ['glob-not-last'],
    );
    assert.deepEqual(
      pathProblems('secret/data/x/').map((x) => x.code),
      [],
    );
    assert.deepEqual(
      pathProblems('secret//x').map((x) => x.code),
      ['empty-segment'],
    );
    assert.deepEqual(
      pathProblems('/secret/x').map((x) => x.code),
      ['leading-slash'],
    );
  });
});
