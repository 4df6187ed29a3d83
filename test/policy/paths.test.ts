// policy/paths.ts: ACL path syntax, containment and overlap, as admission and the planners judge paths.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { pathProblems, pathWithin, pathsOverlap, pathForbiddenBy, expandNamespace } from '../../policy/paths.ts';

void describe('path syntax', () => {
  const codes = (p: string) => pathProblems(p, { allowNamespaceTemplate: true }).map((x) => x.code);
  void test('valid patterns', () => {
    for (const p of [
      'secret/data/app/*',
      'secret/data/+/config',
      'secret/+/x/*',
      'auth/token/lookup-self',
      'secret/data/{{namespace}}/*',
      '*',
      '+/*',
    ]) {
      assert.deepEqual(codes(p), [], p);
    }
  });
  void test('each mistake is named', () => {
    assert.deepEqual(codes('/secret/data/x'), ['leading-slash']);
    assert.deepEqual(codes('secret/*/x'), ['glob-not-last']);
    assert.deepEqual(codes('secret/+*'), ['plus-star']);
    assert.deepEqual(codes('secret/a+/x'), ['plus-partial']);
    assert.deepEqual(codes('secret//x'), ['empty-segment']);
    assert.deepEqual(codes('secret/{{identity.entity.id}}/*'), ['template']);
    assert.deepEqual(codes('secret/a b'), ['whitespace']);
    assert.deepEqual(codes(''), ['empty']);
    assert.match(pathProblems('/a')[0]?.message ?? '', /write "a"/);
  });
  void test('{{namespace}} is expanded', () => {
    assert.equal(expandNamespace('secret/data/{{namespace}}/{{ namespace }}/*', 'ns'), 'secret/data/ns/ns/*');
  });
});

void describe('path containment and overlap', () => {
  void test('containment', () => {
    assert.ok(pathWithin('secret/data/a/x', 'secret/data/a/*'));
    assert.ok(pathWithin('secret/data/a/+/x', 'secret/data/a/*'));
    assert.ok(pathWithin('secret/data/a/b', 'secret/data/+/b'));
    assert.ok(!pathWithin('secret/data/+/x', 'secret/data/a/*'));
    assert.ok(!pathWithin('secret/data/a*', 'secret/data/a/*'), 'a* also matches secret/data/ab');
    assert.ok(!pathWithin('*', 'secret/data/a/*'));
  });
  void test('forbidden paths: overlap, and pure wildcards only forbid what is at least as broad', () => {
    assert.ok(pathForbiddenBy('sys/mounts', 'sys/*'));
    assert.ok(pathForbiddenBy('+/mounts', 'sys/*'));
    assert.ok(pathForbiddenBy('s*', 'sys/*'));
    assert.ok(!pathForbiddenBy('secret/data/a/*', 'sys/*'));
    assert.ok(pathForbiddenBy('*', '*'));
    assert.ok(!pathForbiddenBy('secret/data/a/*', '*'));
  });

  const segment = fc.constantFrom('a', 'b', 'data', '+', 'ab');
  const pattern = fc
    .tuple(fc.array(segment, { minLength: 1, maxLength: 4 }), fc.constantFrom('', '*'))
    .map(([segs, glob]) => `${segs.join('/')}${glob}`)
    .filter((p) => !p.includes('+*'));
  void test('properties: reflexive, and containment implies overlap', () => {
    fc.assert(
      fc.property(pattern, pattern, (p, q) => {
        assert.ok(pathWithin(p, p));
        if (pathWithin(p, q)) assert.ok(pathsOverlap(p, q), `${p} within ${q} but no overlap`);
        assert.equal(pathsOverlap(p, q), pathsOverlap(q, p));
      }),
      { numRuns: 300 },
    );
  });
  void test('property: a concrete path is within a pattern exactly when the pattern matches it', () => {
    const concrete = fc
      .array(fc.constantFrom('a', 'b', 'data', 'ab'), { minLength: 1, maxLength: 5 })
      .map((s) => s.join('/'));
    fc.assert(
      fc.property(concrete, pattern, (path, pat) => {
        const re = new RegExp(
          `^${pat
            .split('/')
            .map((s) => (s === '+' ? '[^/]+' : s.replace('*', '.*')))
            .join('/')}$`,
        );
        assert.equal(pathWithin(path, pat), re.test(path), `${path} vs ${pat}`);
      }),
      { numRuns: 300 },
    );
  });
});
