// Go's time.ParseDuration and RE2 regular expressions, as ESO evaluates them, in JavaScript.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseGoDuration } from '../../schemas/duration.ts';
import { parseGoRegexp as compileGoRegexp } from '../../eso/go-regexp.ts';

void describe('parseGoDuration', () => {
  void test('reads what Go reads', () => {
    const cases: Array<[string, number]> = [
      ['0', 0], ['-0', 0], ['1h', 3_600_000], ['1h0m0s', 3_600_000], ['2h30m', 9_000_000], ['1.5h', 5_400_000],
      ['.5s', 500], ['500ms', 500], ['-1m', -60_000], ['+15s', 15_000], ['1µs', 0.001], ['1us', 0.001], ['10ns', 0.00001],
    ];
    for (const [text, ms] of cases) {
      const r = parseGoDuration(text);
      assert.ok(r.ok, text);
      assert.ok(Math.abs(r.ms - ms) < 1e-9, `${text}: ${r.ms}`);
    }
  });

  void test('refuses what Go refuses, with Go\'s message', () => {
    assert.deepEqual(parseGoDuration(''), { ok: false, error: 'time: invalid duration ""' });
    assert.deepEqual(parseGoDuration('10'), { ok: false, error: 'time: missing unit in duration "10"' });
    assert.deepEqual(parseGoDuration('1d'), { ok: false, error: 'time: unknown unit "d" in duration "1d"' });
    for (const bad of ['h', '.s', '1h 30m', '-', '1e3s', '99999999999h']) assert.equal(parseGoDuration(bad).ok, false, bad);
  });

  void test('sums of unit parts equal the whole (property)', () => {
    fc.assert(fc.property(fc.nat(100), fc.nat(59), fc.nat(59), (h, m, s) => {
      const r = parseGoDuration(`${h}h${m}m${s}s`);
      return r.ok && r.ms === ((h * 60 + m) * 60 + s) * 1000;
    }));
  });
});

void describe('compileGoRegexp', () => {
  const matches = (pattern: string, input: string): boolean => {
    const r = compileGoRegexp(pattern);
    assert.ok(r.ok, `${pattern}: ${r.ok ? '' : r.error}`);
    return r.regexp.test(input);
  };

  void test('Go spellings without a JavaScript equivalent are translated', () => {
    assert.ok(matches('(?i)^team-a$', 'TEAM-A'));
    assert.ok(matches('^(?P<env>dev|prod)-', 'prod-x'));
    assert.ok(matches('^[[:alpha:]][[:digit:]]+$', 'a123'));
    assert.ok(!matches('^[[:alpha:]]+$', 'a1'));
    assert.ok(matches('\\Aab\\z', 'ab'));
    assert.ok(!matches('\\Aab\\z', 'abc'));
    assert.ok(matches('^\\x{41}\\x42$', 'AB'));
    assert.ok(matches('[]a]', ']'), 'a leading ] in a class is literal in Go');
    assert.ok(!matches('[^]a]', ']'));
    assert.ok(matches('^\\Qa.b\\E$', 'a.b'), '\\Q…\\E quotes a literal');
    assert.ok(!matches('^\\Qa.b\\E$', 'axb'));
  });

  void test('RE2 refuses lookaround, backreferences and unknown escapes: so does admission', () => {
    for (const [pattern, message] of [
      ['a(?=b)', /invalid or unsupported Perl syntax: `\(\?=`/],
      ['(?<!a)b', /invalid or unsupported Perl syntax/],
      ['(a)\\1', /invalid escape sequence: `\\1`/],
      ['\\y', /invalid escape sequence/],
      ['(', /^error parsing regexp: /],
      ['[a-', /missing closing \]/],
    ] as const) {
      const r = compileGoRegexp(pattern);
      assert.equal(r.ok, false, pattern);
      if (!r.ok) assert.match(r.error, message, pattern);
    }
  });

  void test('Go features vaultgate cannot reproduce faithfully are refused, never approximated', () => {
    for (const pattern of ['\\pL+', '(?U)a+', 'a(?i)b', '[[:^alpha:]]']) {
      const r = compileGoRegexp(pattern);
      assert.equal(r.ok, false, pattern);
      if (!r.ok) assert.match(r.error, /not supported by vaultgate|unsupported|invalid/, pattern);
    }
  });

  void test('plain patterns behave like JavaScript RegExp (property)', () => {
    fc.assert(fc.property(fc.stringMatching(/^[a-z0-9.*+?|^$-]{0,12}$/), fc.string({ maxLength: 12 }), (pattern, input) => {
      let js: RegExp;
      try { js = new RegExp(pattern); } catch { return true; }
      const go = compileGoRegexp(pattern);
      return go.ok && go.regexp.test(input) === js.test(input);
    }));
  });
});
