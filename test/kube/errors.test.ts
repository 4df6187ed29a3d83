// Kubernetes API failures become one error type carrying the Status reason and HTTP code, never the body.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorFromResponse, isGone, isNotFound, KubeApiError, toKubeError } from '../../kube/errors.ts';

test("a Status body's reason and message are kept; without one the HTTP code names the reason", () => {
  const e = errorFromResponse(409, { kind: 'Status', reason: 'AlreadyExists', message: 'secrets "s" already exists' });
  assert.deepEqual(e.toJSON(), { code: 409, reason: 'AlreadyExists', message: 'secrets "s" already exists' });
  assert.deepEqual(errorFromResponse(404, '<html>nginx</html>').toJSON(), {
    code: 404,
    reason: 'NotFound',
    message: 'HTTP 404',
  });
  assert.equal(errorFromResponse(418, {}).reason, 'Unknown');
  assert.ok(isNotFound(errorFromResponse(404, {})));
  assert.ok(isGone(errorFromResponse(200, { reason: 'Expired' })), 'a watch whose resourceVersion expired');
});

test('long messages are cut, so an echoed request body cannot fill a log line or a condition', () => {
  const e = new KubeApiError(422, 'Invalid', 'x'.repeat(5000));
  assert.ok(e.message.length <= 401, `${e.message.length} characters`);
  assert.ok(e.message.endsWith('…'));
});

test('transport failures become NetworkError or ClientTimeout with code 0', () => {
  const refused = toKubeError(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:443'), { code: 'ECONNREFUSED' }));
  assert.deepEqual([refused.code, refused.reason, refused.message], [0, 'NetworkError', 'network error: ECONNREFUSED']);
  const timeout = toKubeError(Object.assign(new Error('t'), { name: 'TimeoutError' }));
  assert.equal(timeout.reason, 'ClientTimeout');
  const same = new KubeApiError(500, 'InternalError', 'boom');
  assert.equal(toKubeError(same), same, 'an API error passes through unchanged');
});
