// Go's fmt verbs as templates' printf and Sprig's functions print values: each expected string is what
// Go 1.22 prints for the same arguments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatFloat, goQuote, sprint, sprintf, sprintln } from '../../golang/fmt.ts';
import { GoMap, GoNum, goString } from '../../golang/values.ts';

// A Go int is a JS number; a float64 is tagged (values.ts).
const int = (n: number): number => n;
const f64 = (x: number): GoNum => new GoNum('float64', x);

test('width, padding and precision as Go prints them', () => {
  assert.equal(sprintf('%5d|%-5d|%05d', [int(42), int(42), int(42)]), '   42|42   |00042');
  assert.equal(sprintf('%x %X %o %b', [int(255), int(255), int(8), int(5)]), 'ff FF 10 101');
  assert.equal(sprintf('%.2f %8.3f', [f64(1.005), f64(3.14159)]), '1.00    3.142');
  assert.equal(sprintf('%s and %q', ['plain', 'a "quoted"\n']), 'plain and "a \\"quoted\\"\\n"');
  assert.equal(sprintf('100%%', []), '100%');
});

test('a wrong verb or a missing argument is written into the output, as Go does, never thrown', () => {
  assert.equal(sprintf('%d', ['text']), '%!d(string=text)');
  assert.equal(sprintf('%s %s', ['one']), 'one %!s(MISSING)');
  assert.equal(sprintf('%s', ['a', 'b']), 'a%!(EXTRA string=b)');
});

test('%v of a map lists keys sorted; sprint adds spaces only between non-strings', () => {
  assert.equal(
    sprintf('%v', [
      new GoMap([
        ['b', '2'],
        ['a', '1'],
      ]),
    ]),
    'map[a:1 b:2]',
  );
  assert.equal(sprint(['a', 'b']), 'ab');
  assert.equal(sprint([int(1), int(2)]), '1 2');
  assert.equal(sprintln(['a', int(1)]), 'a 1\n');
});

test("floats in Go's shortest forms; quoting escapes as strconv.Quote", () => {
  assert.equal(formatFloat(1e21, 'g', -1), '1e+21');
  assert.equal(formatFloat(100000, 'g', -1), '100000');
  assert.equal(formatFloat(0.000001, 'e', 2), '1.00e-06');
  assert.equal(goQuote('tab\there'), '"tab\\there"');
  assert.equal(sprintf('%v %v', [f64(1234567), int(1234567)]), '1.234567e+06 1234567');
  assert.equal(goQuote(goString('é'), true), '"\\u00e9"');
});
