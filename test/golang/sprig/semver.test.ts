// Sprig's semver and semverCompare (Masterminds/semver v3): versions, ranges, and refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { semverCompare } from '../../../golang/sprig/semver.ts';
import { sprig } from './sprig.ts';

test('constraints: caret, tilde, ranges, OR, and prereleases only when asked for', () => {
  const cases: Array<[string, string, boolean]> = [
    ['^1.2.0', '1.9.9', true],
    ['^1.2.0', '2.0.0', false],
    ['~1.2.3', '1.2.9', true],
    ['~1.2.3', '1.3.0', false],
    ['>=1.2.3, <2', '1.5.0', true],
    ['<1 || >=3', '2.0.0', false],
    ['1.x', '1.4.2', true],
    ['>=1.0.0', '1.1.0-beta.1', false],
    ['>=1.0.0-0', '1.1.0-beta.1', true],
  ];
  for (const [c, v, want] of cases) assert.equal(semverCompare(c, v), want, `${c} vs ${v}`);
});

test('a version exposes its parts; an invalid one is an error that names the function', () => {
  assert.equal(
    sprig(
      '{{ $v := semver "1.2.3-beta.1+build.5" }}{{ $v.Major }}.{{ $v.Minor }} {{ $v.Prerelease }} {{ $v.Metadata }}',
    ),
    '1.2 beta.1 build.5',
  );
  assert.equal(sprig('{{ (semver "v2.0.1").Original }}'), 'v2.0.1');
  assert.throws(() => sprig('{{ semver "one.two" }}'), /error calling semver: Invalid Semantic Version/);
  assert.throws(() => sprig('{{ semverCompare "!!" "1.0.0" }}'), /error calling semverCompare/);
});
