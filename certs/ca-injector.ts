// caBundle injection into vaultgate's Mutating/ValidatingWebhookConfigurations (found by label), as
// cert-manager's cainjector and ESO's webhookconfig controller do. Configurations that cert-manager
// injects (cert-manager.io/inject-ca-from*) are left alone: two injectors would fight forever.
import type { WebhookConfigKind, WebhookTarget } from './rotation.ts';

/** Label the chart puts on configurations whose caBundle vaultgate's keeper owns. */
export const INJECT_LABEL = 'vaultgate.io/inject-ca-bundle';
export const INJECT_SELECTOR = `${INJECT_LABEL}=true`;
const CERT_MANAGER_ANNOTATIONS = [
  'cert-manager.io/inject-ca-from',
  'cert-manager.io/inject-ca-from-secret',
  'cert-manager.io/inject-apiserver-ca',
];

export interface WebhookConfigObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  webhooks?: { name: string; clientConfig?: { caBundle?: string; url?: string; service?: unknown } }[];
}

export type JsonPatchOp =
  { op: 'test'; path: string; value: unknown } | { op: 'add' | 'replace'; path: string; value: unknown };

export interface WebhookConfigClient {
  /** Both kinds, selected by label; each item carries its `kind`. */
  listWebhookConfigurations(labelSelector: string): Promise<(WebhookConfigObject & { kind: WebhookConfigKind })[]>;
  /** RFC 6902 JSON patch (a failed `test` op rejects: the configuration changed meanwhile). */
  patchWebhookConfiguration(kind: WebhookConfigKind, name: string, ops: JsonPatchOp[]): Promise<void>;
}

export function managedByCertManager(cfg: WebhookConfigObject): boolean {
  return CERT_MANAGER_ANNOTATIONS.some((a) => cfg.metadata.annotations?.[a] !== undefined);
}

/** The planner's view of configurations vaultgate injects into. */
export function webhookTargets(configs: (WebhookConfigObject & { kind: WebhookConfigKind })[]): WebhookTarget[] {
  return configs
    .filter((c) => !managedByCertManager(c))
    .map((c) => ({
      kind: c.kind,
      name: c.metadata.name,
      caBundles: (c.webhooks ?? []).map((w) =>
        w.clientConfig?.caBundle ? Buffer.from(w.clientConfig.caBundle, 'base64').toString('utf8') : '',
      ),
    }));
}

/**
 * JSON patch setting every webhook's caBundle. Each webhook's name is tested at its index, so a
 * configuration edited meanwhile (webhooks added, reordered) is rejected instead of patched blindly;
 * `add` sets the field whether or not it exists.
 */
export function caBundlePatch(cfg: WebhookConfigObject, bundlePem: string): JsonPatchOp[] {
  const value = Buffer.from(bundlePem, 'utf8').toString('base64');
  return (cfg.webhooks ?? []).flatMap((w, i): JsonPatchOp[] => [
    { op: 'test', path: `/webhooks/${i}/name`, value: w.name },
    ...(w.clientConfig ? [] : [{ op: 'add' as const, path: `/webhooks/${i}/clientConfig`, value: {} }]),
    { op: 'add', path: `/webhooks/${i}/clientConfig/caBundle`, value },
  ]);
}

export async function injectCaBundle(
  client: WebhookConfigClient,
  cfg: WebhookConfigObject & { kind: WebhookConfigKind },
  bundlePem: string,
): Promise<void> {
  const ops = caBundlePatch(cfg, bundlePem);
  if (ops.length) await client.patchWebhookConfiguration(cfg.kind, cfg.metadata.name, ops);
}
