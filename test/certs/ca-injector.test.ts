import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyPatch, type Operation } from 'rfc6902';
import { caBundlePatch, managedByCertManager, webhookTargets } from '../../certs/ca-injector.ts';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const cfg = (annotations?: Record<string, string>) => ({
  kind: 'ValidatingWebhookConfiguration' as const,
  metadata: { name: 'vaultgate', ...(annotations ? { annotations } : {}) },
  webhooks: [
    { name: 'a.vaultgate.io', clientConfig: { caBundle: Buffer.from('old').toString('base64') } },
    { name: 'b.vaultgate.io' },
  ],
});

test('configurations cert-manager injects into are left to cert-manager', () => {
  assert.ok(managedByCertManager(cfg({ 'cert-manager.io/inject-ca-from': 'ns/cert' })));
  assert.ok(!managedByCertManager(cfg({ other: 'x' })));
  assert.deepEqual(
    webhookTargets([
      cfg(),
      {
        ...cfg({ 'cert-manager.io/inject-apiserver-ca': 'true' }),
        metadata: { name: 'cm', annotations: { 'cert-manager.io/inject-apiserver-ca': 'true' } },
      },
    ]),
    [{ kind: 'ValidatingWebhookConfiguration', name: 'vaultgate', caBundles: ['old', ''] }],
  );
});

test('the patch sets every caBundle, and fails as a whole when the webhooks changed meanwhile', () => {
  const c = cfg();
  const ops = caBundlePatch(c, PEM) as Operation[];
  const patched = structuredClone(c);
  assert.ok(applyPatch(patched, ops).every((r) => r === null));
  for (const w of patched.webhooks)
    assert.equal(
      Buffer.from((w as { clientConfig: { caBundle: string } }).clientConfig.caBundle, 'base64').toString(),
      PEM,
    );
  const reordered = { ...structuredClone(c), webhooks: [c.webhooks[1], c.webhooks[0]] };
  assert.ok(
    applyPatch(reordered, ops).some((r) => r !== null),
    'the name test at each index fails',
  );
});
