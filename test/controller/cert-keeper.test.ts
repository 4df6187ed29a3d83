import 'reflect-metadata';
// The webhook certificate keeper inside the controller process: it runs on the elected leader only
// (a standby makes no certificate call), creates the cert Secret and injects the CA bundle into the
// labelled webhook configurations; on hand-over the new leader's keeper takes over.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildControllerApp, type ControllerApp } from '../../controller/main.ts';
import { nullRecorder } from '../../kube/events.ts';
import type { KubeObject } from '../../kube/objects.ts';
import {
  LEASES,
  MUTATING_WEBHOOK_CONFIGURATIONS,
  SECRETS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
  type ResourceRef,
} from '../../kube/resources.ts';
import type { SysApi } from '../../vault/types.ts';
import { bundleFacts, certFacts, isIssuedBy } from '../../certs/pem.ts';
import { readStoredPki } from '../../certs/secret-store.ts';
import { FakeKubeClient, type FakeCall } from '../sim/kube-fake-client.ts';
import { KubeStore } from '../sim/kube-store.ts';

type WebhookConfig = KubeObject & { webhooks: { name: string; clientConfig: { caBundle?: string } }[] };

function clusterWithWebhookConfigs(): KubeStore {
  const store = new KubeStore({ namespaces: ['default', 'vaultgate'] });
  for (const r of [MUTATING_WEBHOOK_CONFIGURATIONS, VALIDATING_WEBHOOK_CONFIGURATIONS]) {
    store.register({ ...r, statusSubresource: false, custom: false, singular: r.kind.toLowerCase(), shortNames: [] });
  }
  return store;
}

function webhookConfig(res: ResourceRef, name: string, labels: Record<string, string>): WebhookConfig {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: res.kind,
    metadata: { name, labels },
    webhooks: [
      {
        name: `${name}.vaultgate.io`,
        clientConfig: { service: { name: 'vg-webhook', namespace: 'vaultgate' } } as { caBundle?: string },
      },
    ],
  };
}

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Certificate work done through a client: the cert Secret and webhook configurations (not the Secret informer). */
const certCalls = (calls: FakeCall[]): FakeCall[] =>
  calls.filter(
    (c) => c.resource.endsWith('webhookconfigurations') || (c.resource === 'secrets' && c.name === 'vg-webhook-tls'),
  );

const LEASE = {
  namespace: 'vaultgate',
  name: 'vaultgate-controller',
  leaseDurationMs: 1200,
  renewDeadlineMs: 800,
  retryPeriodMs: 100,
};

function app(store: KubeStore, identity: string): { app: ControllerApp; kube: FakeKubeClient } {
  const kube = new FakeKubeClient({ store });
  return {
    kube,
    app: buildControllerApp({
      client: kube,
      vault: { address: 'http://127.0.0.1:1', auth: { method: 'token', token: 'unused' } },
      sys: {} as SysApi,
      events: nullRecorder,
      informer: { resyncMs: 0 },
      leaderElection: { ...LEASE, identity },
      webhookCerts: {
        namespace: 'vaultgate',
        secretName: 'vg-webhook-tls',
        service: 'vg-webhook',
        leafValidityDays: 30,
        caValidityDays: 300,
      },
    }),
  };
}

void describe('webhook certificate keeper in the controller', () => {
  void test('the leader creates the Secret and injects the CA into labelled configurations; the standby makes no certificate call', async () => {
    const store = clusterWithWebhookConfigs();
    const admin = new FakeKubeClient({ store });
    const labelled = { 'vaultgate.io/inject-ca-bundle': 'true' };
    await admin.create(
      VALIDATING_WEBHOOK_CONFIGURATIONS,
      webhookConfig(VALIDATING_WEBHOOK_CONFIGURATIONS, 'vg-validate', labelled),
    );
    await admin.create(
      MUTATING_WEBHOOK_CONFIGURATIONS,
      webhookConfig(MUTATING_WEBHOOK_CONFIGURATIONS, 'vg-mutate', labelled),
    );
    await admin.create(
      VALIDATING_WEBHOOK_CONFIGURATIONS,
      webhookConfig(VALIDATING_WEBHOOK_CONFIGURATIONS, 'someone-else', {}),
    );
    const caBundle = async (res: ResourceRef, name: string): Promise<string> =>
      Buffer.from(
        (await admin.get<WebhookConfig>(res, name))?.webhooks[0]?.clientConfig.caBundle ?? '',
        'base64',
      ).toString();

    const a = app(store, 'a');
    const b = app(store, 'b');
    try {
      await a.app.start();
      await until(() => a.app.manager.status().leader === 'leader', 'a leads');
      await b.app.start();
      assert.equal(b.app.manager.status().leader, 'standby');

      await until(
        async () => (await caBundle(MUTATING_WEBHOOK_CONFIGURATIONS, 'vg-mutate')) !== '',
        'the mutating caBundle',
      );
      await until(
        async () => (await caBundle(VALIDATING_WEBHOOK_CONFIGURATIONS, 'vg-validate')) !== '',
        'the validating caBundle',
      );
      const pki = readStoredPki(await admin.get(SECRETS, 'vg-webhook-tls', 'vaultgate'));
      assert.ok(pki?.cert && pki.caBundle, 'the Secret holds a certificate and its CA');
      const leaf = certFacts(pki.cert);
      assert.ok(leaf.dnsNames.includes('vg-webhook.vaultgate.svc'), 'the Service DNS name is in the certificate');
      assert.ok(bundleFacts(pki.caBundle).some((ca) => isIssuedBy(leaf, ca)));
      assert.equal(await caBundle(MUTATING_WEBHOOK_CONFIGURATIONS, 'vg-mutate'), pki.caBundle);
      assert.equal(
        await caBundle(VALIDATING_WEBHOOK_CONFIGURATIONS, 'someone-else'),
        '',
        'an unlabelled configuration is left alone',
      );
      assert.ok(
        certCalls(a.kube.calls).some((c) => c.verb === 'create' && c.resource === 'secrets'),
        'the leader created the Secret',
      );
      assert.deepEqual(certCalls(b.kube.calls), [], 'the standby never touched certificates');

      // Hand-over: the leader leaves (lease released), the standby's keeper starts and finds nothing to redo.
      const lease = (): Promise<string | undefined> =>
        admin
          .get(LEASES, LEASE.name, LEASE.namespace)
          .then((l) => (l?.spec as { holderIdentity?: string } | undefined)?.holderIdentity);
      await a.app.stop();
      await until(
        async () => (await lease()) === 'b' && certCalls(b.kube.calls).some((c) => c.verb === 'get'),
        'b leads and its keeper reads the Secret',
      );
      await until(() => certCalls(b.kube.calls).some((c) => c.verb === 'list'), 'b lists the webhook configurations');
      assert.equal(
        readStoredPki(await admin.get(SECRETS, 'vg-webhook-tls', 'vaultgate'))?.cert,
        pki.cert,
        'the new leader keeps the certificate',
      );
      assert.ok(!certCalls(b.kube.calls).some((c) => c.verb === 'create'), 'no second Secret');
    } finally {
      await a.app.stop();
      await b.app.stop();
    }
  });

  void test('without webhookCerts the controller makes no certificate call', async () => {
    const store = clusterWithWebhookConfigs();
    const kube = new FakeKubeClient({ store });
    const plain = buildControllerApp({
      client: kube,
      vault: { address: 'http://127.0.0.1:1', auth: { method: 'token', token: 'unused' } },
      sys: {} as SysApi,
      events: nullRecorder,
      informer: { resyncMs: 0 },
    });
    await plain.start();
    await plain.stop();
    assert.deepEqual(certCalls(kube.calls), []);
    assert.equal(await kube.get(SECRETS, 'vg-webhook-tls', 'vaultgate'), undefined);
  });
});
