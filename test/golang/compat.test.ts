// Go's time.ParseDuration and RE2 regular expressions, as ESO evaluates them, in JavaScript.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseGoDuration } from '../../golang/duration.ts';
import { parseGoRegexp as compileGoRegexp } from '../../golang/regexp.ts';

void describe('parseGoDuration', () => {
  void test('reads what Go reads', () => {
    const cases: Array<[string, number]> = [
      ['0', 0],
      ['-0', 0],
      ['1h', 3_600_000],
      ['1h0m0s', 3_600_000],
      ['2h30m', 9_000_000],
      ['1.5h', 5_400_000],
      ['.5s', 500],
      ['500ms', 500],
      ['-1m', -60_000],
      ['+15s', 15_000],
      ['1µs', 0.001],
      ['1us', 0.001],
      ['10ns', 0.00001],
    ];
    for (const [text, ms] of cases) {
      const r = parseGoDuration(text);
      assert.ok(r.ok, text);
      assert.ok(Math.abs(r.ms - ms) < 1e-9, `${text}: ${r.ms}`);
    }
  });

  void test("refuses what Go refuses, with Go's message", () => {
    assert.deepEqual(parseGoDuration(''), { ok: false, error: 'time: invalid duration ""' });
    assert.deepEqual(parseGoDuration('10'), { ok: false, error: 'time: missing unit in duration "10"' });
    assert.deepEqual(parseGoDuration('1d'), { ok: false, error: 'time: unknown unit "d" in duration "1d"' });
    for (const bad of ['h', '.s', '1h 30m', '-', '1e3s', '99999999999h'])
      assert.equal(parseGoDuration(bad).ok, false, bad);
  });

  void test('sums of unit parts equal the whole (property)', () => {
    fc.assert(
      fc.property(fc.nat(100), fc.nat(59), fc.nat(59), (h, m, s) => {
        const r = parseGoDuration(`${h}h${m}m${s}s`);
        return r.ok && r.ms === ((h * 60 + m) * 60 + s) * 1000;
      }),
    );
  });
});

void describe("compileGoRegexp (re2js: Go's regexp)", () => {
  const matches = (pattern: string, input: string): boolean => {
    const r = compileGoRegexp(pattern);
    assert.ok(r.ok, `${pattern}: ${r.ok ? '' : r.error}`);
    return r.regexp.test(input);
  };

  void test('Go spellings without a JavaScript equivalent mean what they mean in Go', () => {
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

  void test('Unicode classes, flags anywhere, negated POSIX classes and runes beyond U+FFFF work as in Go', () => {
    assert.ok(matches('^\\p{Greek}+$', 'αβγ'));
    assert.ok(!matches('^\\p{Greek}+$', 'abc'));
    assert.ok(matches('^\\pL+$', 'héllo'));
    assert.ok(matches('^a(?i)b$', 'aB'));
    assert.ok(!matches('^a(?i)b$', 'AB'));
    assert.ok(matches('^[[:^alpha:]]+$', '12'));
    assert.ok(matches('^\\x{1F600}$', '😀'));
    assert.ok(matches('^.$', '😀'), 'one rune, not two UTF-16 units');
    assert.ok(matches('^a.c$', 'a\rc'), "Go's . stops only at \\n");
  });

  void test("RE2 refuses lookaround, backreferences and unknown escapes, with Go's message: so does admission", () => {
    for (const [pattern, message] of [
      ['a(?=b)', 'error parsing regexp: invalid or unsupported Perl syntax: `(?=`'],
      ['(a)\\1', 'error parsing regexp: invalid escape sequence: `\\1`'],
      ['\\y', 'error parsing regexp: invalid escape sequence: `\\y`'],
      ['(', 'error parsing regexp: missing closing ): `(`'],
      ['[a-', 'error parsing regexp: missing closing ]: `[a-`'],
      ['a{1001}', 'error parsing regexp: invalid repeat count: `{1001}`'],
    ] as const) {
      const r = compileGoRegexp(pattern);
      assert.equal(r.ok, false, pattern);
      if (!r.ok) assert.equal(r.error, message, pattern);
    }
  });

  void test("a pattern whose program is beyond vaultgate's bound is refused, naming the bound", () => {
    const r = compileGoRegexp('(?:\\pL{1000}){1}\\pN{1000}x{1000}y{1000}z{1000}'.repeat(3));
    assert.equal(r.ok, false);
    if (!r.ok)
      assert.equal(
        r.error,
        'error parsing regexp: expression too large for vaultgate (its program exceeds 10000 instructions)',
      );
    // A long pattern is refused before it is compiled (a 64 KiB one takes about a second to compile).
    const t0 = performance.now();
    assert.deepEqual(compileGoRegexp(`(?:${'a|'.repeat(20_000)}b)`), {
      ok: false,
      error: 'error parsing regexp: expression too long for vaultgate (at most 4096 characters)',
    });
    assert.ok(performance.now() - t0 < 50, `${performance.now() - t0} ms`);
    assert.ok(compileGoRegexp(`^(?:${'a|'.repeat(2000)}b)$`).ok, 'a 4 KB pattern compiles');
  });
});
