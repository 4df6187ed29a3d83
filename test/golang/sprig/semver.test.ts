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

test('SetPrerelease and SetMetadata replace their part (an empty string clears it) and refuse bad identifiers', () => {
  assert.equal(sprig('{{ ((semver "1.2.3+b.1").SetPrerelease "rc.1").String }}'), '1.2.3-rc.1+b.1');
  assert.equal(sprig('{{ ((semver "1.2.3-rc.1+b.1").SetMetadata "build.01").String }}'), '1.2.3-rc.1+build.01');
  assert.equal(sprig('{{ ((semver "1.2.3-rc.1+b.1").SetPrerelease "").String }}'), '1.2.3+b.1');
  assert.equal(sprig('{{ ((semver "1.2.3-rc.1+b.1").SetMetadata "").String }}'), '1.2.3-rc.1');
  // Numeric identifiers may not start with 0 in a prerelease only.
  assert.throws(() => sprig('{{ (semver "1.2.3").SetPrerelease "01" }}'), /Version segment starts with 0/);
  assert.throws(() => sprig('{{ (semver "1.2.3").SetPrerelease "a$" }}'), /Invalid Prerelease string/);
  assert.throws(() => sprig('{{ (semver "1.2.3").SetMetadata "a$" }}'), /Invalid Metadata string/);
});
