// Go's time layouts (the reference time Mon Jan 2 15:04:05 MST 2006), as Sprig's date functions and
// ESO templates format and parse with them; each expected value is what Go's time package gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatGoTime, loadLocation, parseGoTime, ZERO_TIME } from '../../golang/time.ts';
import { GoTime } from '../../golang/values.ts';

const t = new GoTime(Date.UTC(2024, 1, 29, 13, 4, 5, 120)); // Thu 29 Feb 2024 13:04:05.12 UTC

test('layout elements format as Go formats them', () => {
  assert.equal(formatGoTime(t, '2006-01-02T15:04:05Z07:00'), '2024-02-29T13:04:05Z');
  assert.equal(formatGoTime(t, 'Mon Jan _2 3:04PM'), 'Thu Feb 29 1:04PM');
  assert.equal(formatGoTime(t, '02/01/06 15h04m05.000'), '29/02/24 13h04m05.120');
  assert.equal(formatGoTime(t, '2006-01-02 15:04:05.999999999'), '2024-02-29 13:04:05.12', 'trailing 9s drop zeros');
  assert.equal(formatGoTime(ZERO_TIME, '2006-01-02'), '0001-01-01');
});

test('a zone is applied by offset and named', () => {
  const ist = loadLocation('Asia/Kolkata', t.ms);
  assert.deepEqual(ist?.offsetSeconds, 19800);
  assert.equal(formatGoTime(new GoTime(t.ms, ist), '15:04 -0700'), '18:34 +0530');
  assert.equal(loadLocation('Not/AZone', t.ms), undefined);
});

test('parse reads what the layout writes, and refuses what Go refuses', () => {
  const p = parseGoTime('2006-01-02 15:04:05', '2024-02-29 13:04:05');
  assert.ok(p instanceof GoTime, typeof p === 'string' ? p : '');
  assert.equal(p.ms, Date.UTC(2024, 1, 29, 13, 4, 5));
  const rfc = parseGoTime('2006-01-02T15:04:05Z07:00', '2024-02-29T18:34:05+05:30');
  assert.ok(rfc instanceof GoTime);
  assert.equal(rfc.ms, Date.UTC(2024, 1, 29, 13, 4, 5), 'the offset moves the instant');
  assert.equal(parseGoTime('2006-01-02', '2023-02-29'), 'parsing time: day out of range');
  const refused = parseGoTime('2006-01-02', '24-02-29');
  assert.ok(typeof refused === 'string');
  assert.match(refused, /does not match the layout/);
  assert.ok(!refused.includes('24-02-29'), 'the value may be a secret: it is not echoed');
});
