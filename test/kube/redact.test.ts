// The last scrub before text leaves the process (Event notes, conditions, errors): credentials an
// upstream error message echoed are replaced, the rest of the message is kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redactSecrets } from '../../kube/redact.ts';

test('tokens, JWTs, Authorization values and private keys are replaced; the message around them stays', () => {
  const cases: Array<[string, string]> = [
    ['permission denied for hvs.CAESIabcdefghijklmnopqrstuvwxyz now', 'permission denied for [REDACTED] now'],
    ['legacy s.abcdefghijklmnopqrstuvwx token', 'legacy [REDACTED] token'],
    ['jwt eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl end', 'jwt [REDACTED] end'],
    ['header Authorization: Bearer abc.def-ghi_123 rejected', 'header Authorization: [REDACTED] rejected'],
    ['key -----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY----- done', 'key [REDACTED] done'],
    ['key -----BEGIN RSA PRIVATE KEY-----\nMIIE cut off', 'key [REDACTED]'],
  ];
  for (const [input, want] of cases) assert.equal(redactSecrets(input), want);
});

test('ordinary text is left alone', () => {
  const text = 'secret/data/team-a/db: 403 permission denied (s.short is not a token)';
  assert.equal(redactSecrets(text), text);
});
