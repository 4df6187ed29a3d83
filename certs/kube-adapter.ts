// The keeper's Kubernetes calls over kube/'s KubeClient (writes use field manager vaultgate).
import type { KubeClient } from '../kube/kube-client.ts';
import type { KubeObject } from '../kube/objects.ts';
import {
  MUTATING_WEBHOOK_CONFIGURATIONS,
  SECRETS,
  VALIDATING_WEBHOOK_CONFIGURATIONS,
  type ResourceRef,
} from '../kube/resources.ts';
import type { WebhookConfigClient, WebhookConfigObject } from './ca-injector.ts';
import type { WebhookConfigKind } from './rotation.ts';
import type { SecretClient, SecretObject } from './secret-store.ts';

const RESOURCES: Record<WebhookConfigKind, ResourceRef> = {
  MutatingWebhookConfiguration: MUTATING_WEBHOOK_CONFIGURATIONS,
  ValidatingWebhookConfiguration: VALIDATING_WEBHOOK_CONFIGURATIONS,
};

export type CertKubeClient = SecretClient & WebhookConfigClient;

export function certKubeClient(
  kube: Pick<KubeClient, 'get' | 'create' | 'replace' | 'list' | 'patch'>,
): CertKubeClient {
  return {
    getSecret: (namespace, name) => kube.get<SecretObject & KubeObject>(SECRETS, name, namespace),
    createSecret: (secret) => kube.create<SecretObject & KubeObject>(SECRETS, secret),
    replaceSecret: (secret) => kube.replace<SecretObject & KubeObject>(SECRETS, secret),
    async listWebhookConfigurations(labelSelector) {
      const out: (WebhookConfigObject & { kind: WebhookConfigKind })[] = [];
      for (const kind of Object.keys(RESOURCES) as WebhookConfigKind[]) {
        const page = await kube.list<WebhookConfigObject & KubeObject>(RESOURCES[kind], { labelSelector });
        for (const item of page.items) out.push({ ...item, kind });
      }
      return out;
    },
    async patchWebhookConfiguration(kind, name, ops) {
      await kube.patch(RESOURCES[kind], name, undefined, ops, 'json');
    },
  };
}
