// Admission webhook configurations pointing at a webhook server the test runs on 127.0.0.1, as envtest's
// WebhookInstallOptions.ModifyWebhookDefinitions does: `clientConfig.service{path}` becomes
// `url: <base><path>` and `caBundle` is set.
import { parseAllDocuments } from 'yaml';

type Obj = Record<string, unknown>;
export type WebhookConfigKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

/** The kinds vaultgate admits (group, version, plural). */
export const VAULTGATE_RESOURCES: ReadonlyArray<{ group: string; version: string; resources: string[] }> = [
  {
    group: 'vaultgate.io',
    version: 'v1alpha1',
    resources: ['vaultpolicies', 'vaultrolebindings', 'vaultguardrails', 'vaultdynamicsecrets'],
  },
  {
    group: 'external-secrets.io',
    version: 'v1',
    resources: ['secretstores', 'clustersecretstores', 'externalsecrets', 'clusterexternalsecrets'],
  },
  { group: 'external-secrets.io', version: 'v1alpha1', resources: ['pushsecrets'] },
  {
    group: 'generators.external-secrets.io',
    version: 'v1alpha1',
    resources: ['passwords', 'vaultdynamicsecrets', 'clustergenerators'],
  },
];

export function defaultWebhookConfig(kind: WebhookConfigKind, name: string, url: string, caBundlePem: string): Obj {
  const mutating = kind === 'MutatingWebhookConfiguration';
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name },
    webhooks: [
      {
        name: mutating ? 'mutate.vaultgate.io' : 'validate.vaultgate.io',
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
        ...(mutating ? { reinvocationPolicy: 'Never' } : {}),
        clientConfig: { url, caBundle: Buffer.from(caBundlePem).toString('base64') },
        rules: VAULTGATE_RESOURCES.map((r) => ({
          apiGroups: [r.group],
          apiVersions: [r.version],
          resources: r.resources,
          operations: ['CREATE', 'UPDATE'],
          scope: '*',
        })),
      },
    ],
  };
}

/** Parses configuration YAML (e.g. `helm template` output) and points every webhook at `baseUrl`. */
export function pointWebhooksAt(yamlText: string, baseUrl: string, caBundlePem: string): Obj[] {
  const out: Obj[] = [];
  for (const doc of parseAllDocuments(yamlText)) {
    const obj = doc.toJS() as Obj | null;
    if (!obj || (obj.kind !== 'MutatingWebhookConfiguration' && obj.kind !== 'ValidatingWebhookConfiguration'))
      continue;
    for (const hook of (obj.webhooks as Obj[] | undefined) ?? []) {
      const cc = (hook.clientConfig ?? {}) as { service?: { path?: string }; url?: string };
      const path = cc.service?.path ?? (cc.url ? new URL(cc.url).pathname : '');
      hook.clientConfig = {
        url: new URL(path, baseUrl).toString(),
        caBundle: Buffer.from(caBundlePem).toString('base64'),
      };
    }
    out.push(obj);
  }
  return out;
}

export const PROBE_LABEL = 'vaultgate.io/harness-probe';

/**
 * A configuration whose only webhook matches dry-run ConfigMap creations carrying a unique label and
 * points at a closed port. Once creating such a ConfigMap fails naming this webhook, the apiserver's
 * admission plugin has seen this configuration, and (informers deliver in resourceVersion order) every
 * configuration created before it.
 */
export function probeConfig(kind: WebhookConfigKind, name: string, token: string, caBundlePem: string): Obj {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name },
    webhooks: [
      {
        name: `${kind === 'MutatingWebhookConfiguration' ? 'm' : 'v'}.probe.harness.vaultgate.io`,
        admissionReviewVersions: ['v1'],
        sideEffects: 'None',
        failurePolicy: 'Fail',
        timeoutSeconds: 2,
        clientConfig: { url: 'https://127.0.0.1:1/probe', caBundle: Buffer.from(caBundlePem).toString('base64') },
        objectSelector: { matchLabels: { [PROBE_LABEL]: token } },
        rules: [
          {
            apiGroups: [''],
            apiVersions: ['v1'],
            resources: ['configmaps'],
            operations: ['CREATE'],
            scope: 'Namespaced',
          },
        ],
      },
    ],
  };
}
