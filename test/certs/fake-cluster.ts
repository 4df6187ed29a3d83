// An in-memory stand-in for the apiserver's Secret and webhook-configuration endpoints the cert keeper
// uses: resourceVersion conflicts, atomic JSON patches, and a hook to observe every write.
import { applyPatch } from 'rfc6902';
import { KubeApiError } from '../../kube/errors.ts';
import type { CertKubeClient } from '../../certs/kube-adapter.ts';
import type { WebhookConfigObject } from '../../certs/ca-injector.ts';
import type { WebhookConfigKind } from '../../certs/rotation.ts';
import type { SecretObject } from '../../certs/secret-store.ts';

type Config = WebhookConfigObject & { kind: WebhookConfigKind };

export class FakeCertCluster implements CertKubeClient {
  secrets = new Map<string, SecretObject>();
  configs: Config[] = [];
  private rv = 1;
  /** Called after every successful write, with what was written. */
  onWrite?: (what: { kind: 'Secret' | WebhookConfigKind; name: string }) => void;
  writes = 0;

  addConfig(
    kind: WebhookConfigKind,
    name: string,
    webhookNames: string[],
    labels: Record<string, string> = { 'vaultgate.io/inject-ca-bundle': 'true' },
    annotations?: Record<string, string>,
  ): Config {
    const cfg: Config = {
      kind,
      apiVersion: 'admissionregistration.k8s.io/v1',
      metadata: { name, labels, annotations, resourceVersion: String(this.rv++) },
      webhooks: webhookNames.map((n) => ({
        name: n,
        clientConfig: { service: { name: 'svc', namespace: 'ns', path: '/validate' } },
      })),
    };
    this.configs.push(cfg);
    return cfg;
  }

  /** Decoded caBundle of every webhook of every configuration. */
  caBundles(): string[] {
    return this.configs.flatMap((c) =>
      (c.webhooks ?? []).map((w) =>
        w.clientConfig?.caBundle ? Buffer.from(w.clientConfig.caBundle, 'base64').toString() : '',
      ),
    );
  }

  async getSecret(namespace: string, name: string): Promise<SecretObject | undefined> {
    await Promise.resolve();
    const s = this.secrets.get(`${namespace}/${name}`);
    return s ? structuredClone(s) : undefined;
  }

  async createSecret(secret: SecretObject): Promise<SecretObject> {
    await Promise.resolve();
    const key = `${secret.metadata.namespace}/${secret.metadata.name}`;
    if (this.secrets.has(key))
      throw new KubeApiError(409, 'AlreadyExists', `secrets "${secret.metadata.name}" already exists`);
    const stored = structuredClone({ ...secret, metadata: { ...secret.metadata, resourceVersion: String(this.rv++) } });
    this.secrets.set(key, stored);
    this.writes++;
    this.onWrite?.({ kind: 'Secret', name: secret.metadata.name });
    return structuredClone(stored);
  }

  async replaceSecret(secret: SecretObject): Promise<SecretObject> {
    await Promise.resolve();
    const key = `${secret.metadata.namespace}/${secret.metadata.name}`;
    const cur = this.secrets.get(key);
    if (!cur) throw new KubeApiError(404, 'NotFound', 'not found');
    if (secret.metadata.resourceVersion !== cur.metadata.resourceVersion)
      throw new KubeApiError(409, 'Conflict', 'the object has been modified');
    const stored = structuredClone({ ...secret, metadata: { ...secret.metadata, resourceVersion: String(this.rv++) } });
    this.secrets.set(key, stored);
    this.writes++;
    this.onWrite?.({ kind: 'Secret', name: secret.metadata.name });
    return structuredClone(stored);
  }

  async listWebhookConfigurations(labelSelector: string): Promise<Config[]> {
    await Promise.resolve();
    const [k, v] = labelSelector.split('=');
    return structuredClone(this.configs.filter((c) => c.metadata.labels?.[k!] === v));
  }

  async patchWebhookConfiguration(kind: WebhookConfigKind, name: string, ops: unknown[]): Promise<void> {
    await Promise.resolve();
    const i = this.configs.findIndex((c) => c.kind === kind && c.metadata.name === name);
    if (i < 0) throw new KubeApiError(404, 'NotFound', 'not found');
    const copy = structuredClone(this.configs[i]!);
    const results = applyPatch(copy, ops as Parameters<typeof applyPatch>[1]);
    if (results.some((r) => r !== null))
      throw new KubeApiError(422, 'Invalid', 'the server rejected our request due to an error in our request');
    copy.metadata.resourceVersion = String(this.rv++);
    this.configs[i] = copy;
    this.writes++;
    this.onWrite?.({ kind, name });
  }
}
