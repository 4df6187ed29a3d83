// The one error policy, one row per kind of error a reconcile can catch: the reason it shows, whether
// its message is shown, and when to try again. A message is shown because of the error's type, never
// because of its class name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorPolicy } from '../../../controller/reconcilers/error-policy.ts';
import { safeMessage } from '../../../controller/reconcilers/common.ts';
import { RenderLimitError } from '../../../controller/reconcilers/render-pool.ts';
import { KubeApiError } from '../../../kube/errors.ts';
import { NEVER, ReconcileError, retryAfter, type Retry } from '../../../kube/reconcile-error.ts';
import { EsoDataError } from '../../../eso/errors.ts';
import { NoSecretError } from '../../../eso/provider-data.ts';
import { PushError } from '../../../eso/push.ts';
import { DecodingError } from '../../../eso/strategies.ts';
import { TemplateSourceMissingError } from '../../../eso/target-template.ts';
import { SecretKeyMissingError } from '../../../eso/values.ts';
import { GoRegexpError, TemplateError } from '../../../golang/index.ts';
import { VaultError } from '../../../vault/errors.ts';

const CANARY = 's3cr3t-Canary-Value-9f2c';
const backoff: Retry = { kind: 'backoff' };
const never: Retry = { kind: 'never' };

class SpoofedName extends Error {
  // The old list trusted any error named so: a class name decides nothing now.
  override readonly name = 'TemplateError';
}

const rows: Array<{ what: string; err: unknown; reason: string; message: string; retry: Retry }> = [
  {
    what: 'ReconcileError (default: backoff)',
    err: new ReconcileError('SecretSyncedError', 'SecretStore vault not found'),
    reason: 'SecretSyncedError',
    message: 'SecretStore vault not found',
    retry: backoff,
  },
  {
    what: 'ReconcileError, never',
    err: new ReconcileError('InvalidSpec', 'spec.data[0].remoteRef.key: required (rule eso.es.key)', NEVER),
    reason: 'InvalidSpec',
    message: 'spec.data[0].remoteRef.key: required (rule eso.es.key)',
    retry: never,
  },
  {
    what: 'ReconcileError, after',
    err: new ReconcileError('SecretMissing', 'target Secret db does not exist', retryAfter(30_000)),
    reason: 'SecretMissing',
    message: 'target Secret db does not exist',
    retry: { kind: 'after', ms: 30_000 },
  },
  {
    what: 'PushError (was "unexpected PushError")',
    err: new PushError('secret key password does not exist'),
    reason: 'PushFailed',
    message: 'secret key password does not exist',
    retry: never,
  },
  {
    what: 'NoSecretError',
    err: new NoSecretError('key: team-a/db'),
    reason: 'ProviderSecretNotFound',
    message: 'secret does not exist at provider using key: team-a/db',
    retry: never,
  },
  {
    what: 'SecretKeyMissingError',
    err: new SecretKeyMissingError('password'),
    reason: 'SecretKeyMissing',
    message: 'cannot find secret data for key: "password"',
    retry: never,
  },
  {
    what: 'DecodingError',
    err: new DecodingError('failed to decode value with decodingStrategy Base64: illegal base64 data'),
    reason: 'DecodingFailed',
    message: 'failed to decode value with decodingStrategy Base64: illegal base64 data',
    retry: never,
  },
  {
    what: 'EsoDataError',
    err: new EsoDataError('secret name collision during conversion: a_b'),
    reason: 'InvalidProviderData',
    message: 'secret name collision during conversion: a_b',
    retry: never,
  },
  {
    what: 'VaultError forbidden',
    err: new VaultError('forbidden', 'kv.read: permission denied', 403, 'kv.read'),
    reason: 'VaultPermissionDenied',
    message: 'kv.read: permission denied',
    retry: backoff,
  },
  {
    what: 'VaultError sealed',
    err: new VaultError('sealed', 'kv.read: Vault is sealed', 503, 'kv.read'),
    reason: 'VaultSealed',
    message: 'kv.read: Vault is sealed',
    retry: backoff,
  },
  {
    what: 'KubeApiError',
    err: new KubeApiError(403, 'Forbidden', 'secrets "db" is forbidden'),
    reason: 'KubernetesForbidden',
    message: 'secrets "db" is forbidden',
    retry: backoff,
  },
  {
    what: 'TemplateError',
    err: new TemplateError('template: data.tls:1:2: function "nope" not defined'),
    reason: 'Fallback',
    message: 'template: data.tls:1:2: function "nope" not defined',
    retry: never,
  },
  {
    what: 'TemplateSourceMissingError',
    err: new TemplateSourceMissingError('templateFrom[0].configMap: ConfigMap tpl not found'),
    reason: 'Fallback',
    message: 'templateFrom[0].configMap: ConfigMap tpl not found',
    retry: never,
  },
  {
    what: 'RenderLimitError',
    err: new RenderLimitError('target.template: the render took longer than 2000 ms'),
    reason: 'Fallback',
    message: 'target.template: the render took longer than 2000 ms',
    retry: backoff,
  },
  {
    what: 'GoRegexpError',
    err: new GoRegexpError('error parsing regexp: missing closing ): `(a`'),
    reason: 'Fallback',
    message: 'error parsing regexp: missing closing ): `(a`',
    retry: never,
  },
  {
    what: 'plain Error (could quote a value)',
    err: new Error(`bad value ${CANARY}`),
    reason: 'Fallback',
    message: 'unexpected Error',
    retry: backoff,
  },
  {
    what: 'JSON.parse of a value',
    err: (() => {
      try {
        JSON.parse(`{${CANARY}`);
      } catch (e) {
        return e;
      }
    })(),
    reason: 'Fallback',
    message: 'unexpected SyntaxError',
    retry: backoff,
  },
  {
    what: 'an Error spoofing a trusted name',
    err: new SpoofedName(`template: ${CANARY}`),
    reason: 'Fallback',
    message: 'unexpected TemplateError',
    retry: backoff,
  },
  { what: 'not an Error', err: CANARY, reason: 'Fallback', message: 'unexpected error', retry: backoff },
];

for (const row of rows) {
  test(`errorPolicy: ${row.what}`, () => {
    assert.deepEqual(errorPolicy(row.err, 'Fallback'), { reason: row.reason, message: row.message, retry: row.retry });
  });
}

test('canary: no message the policy gives (nor safeMessage) holds a value an unknown error carried', () => {
  for (const row of rows) {
    assert.ok(!errorPolicy(row.err).message.includes(CANARY), row.what);
    assert.ok(!safeMessage(row.err).includes(CANARY), row.what);
  }
});

test('without a fallback, an error of no reason of its own reports ReconcileFailed', () => {
  assert.equal(errorPolicy(new Error('x')).reason, 'ReconcileFailed');
});
