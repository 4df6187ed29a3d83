// Sprig's date and duration functions that do not read the clock; expected values are ESO's Sprig's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { durationOf, durationRound } from '../../../golang/sprig/dates.ts';
import { sprig } from './sprig.ts';

const day = '(toDate "2006-01-02" "2024-02-29")';

test('dates format in a named zone; an unknown zone is UTC', () => {
  assert.equal(sprig(`{{ dateInZone "2006-01-02 15:04 MST" ${day} "America/New_York" }}`), '2024-02-28 19:00 EST');
  assert.equal(sprig(`{{ dateInZone "15:04 -0700" ${day} "Asia/Kolkata" }}`), '05:30 +0530');
  assert.equal(sprig(`{{ dateInZone "2006" ${day} "Nope/Zone" }}`), '2024');
  assert.equal(sprig(`{{ htmlDate ${day} }} {{ unixEpoch ${day} }}`), '2024-02-29 1709164800');
  assert.equal(sprig(`{{ ${day} | dateModify "1.5h" | date "15:04" }}`), '01:30');
});

test('duration reads seconds from a string; durationRound keeps the largest unit, "3d" is not Go', () => {
  assert.equal(durationOf('95'), '1m35s');
  assert.equal(durationOf(95_000_000_000), '0s', 'an int is not an int64: Sprig gives 0s');
  assert.equal(durationRound('2h10m5s'), '2h');
  assert.equal(durationRound('-1h30m'), '1h');
  assert.equal(durationRound('3d'), '0s');
});

test('a date function never reads the clock: a value that is not a time is refused', () => {
  assert.throws(() => sprig('{{ date "2006" "yesterday" }}'), /does not read the clock/);
});
