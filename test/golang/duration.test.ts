// One Go-duration parser: vaultgate's TTL fields are read by Go's rules (parseGoDuration) within the
// CRD pattern's narrower grammar.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseGoDuration } from '../../golang/duration.ts';
import { DURATION_PATTERN, durationSeconds, parseDuration } from '../../schemas/ttl.ts';

void describe('golang/duration and schemas/ttl', () => {
  void test('every TTL the CRD pattern accepts has the value Go gives it', () => {
    const part = fc
      .tuple(
        fc.nat(10_000),
        fc.option(fc.nat(999), { nil: undefined }),
        fc.constantFrom('ns', 'us', 'ms', 's', 'm', 'h'),
      )
      .map(([n, f, u]) => `${n}${f === undefined ? '' : `.${f}`}${u}`);
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 4 }), (parts) => {
        const text = parts.join('');
        assert.ok(DURATION_PATTERN.test(text), text);
        const go = parseGoDuration(text);
        assert.ok(go.ok, text);
        assert.equal(parseDuration(text), go.ms);
      }),
    );
  });

  void test('outside the TTL grammar: Go accepts a sign and µs, the TTL fields do not', () => {
    assert.deepEqual(parseGoDuration('-1h'), { ok: true, ms: -3_600_000 });
    assert.deepEqual(parseGoDuration('1µs'), { ok: true, ms: 0.001 });
    for (const t of ['-1h', '+1h', '1µs', '.5h', '5', '1d', '']) assert.equal(parseDuration(t), undefined, t);
    assert.equal(durationSeconds('1h30m'), 5400);
    assert.equal(durationSeconds('1500ms'), 1);
    assert.equal(durationSeconds('0'), 0);
  });
});
