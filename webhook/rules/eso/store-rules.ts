// Admission rules for SecretStore and ClusterSecretStore: ESO's own (apis/externalsecrets/v1/
// secretstore_validator.go, providers/v1/vault/validate.go, with ESO's error strings) plus vaultgate's
// (vault only, supported auth methods, no borrowing the controller's identity, nothing silently ignored).
// Pure: the controller re-runs `validateStore` as defence in depth when no webhook sat in front of it.
import type { Finding } from '../../admission/kinds.ts';
import { type Obj, child, deny, has, isObj, list, obj, str, warn } from './access.ts';
import { compileGoRegexp } from './go-regexp.ts';
import { parseGoDuration } from '../../../schemas/duration.ts';

export type StoreKind = 'SecretStore' | 'ClusterSecretStore';

/** ESO tries auth methods in this order and uses the first one set (providers/v1/vault/auth.go setAuth). */
export const ESO_AUTH_ORDER = ['tokenSecretRef', 'appRole', 'kubernetes', 'ldap', 'userPass', 'jwt', 'cert', 'iam', 'gcp'] as const;
export const SUPPORTED_AUTH_METHODS: readonly string[] = ['tokenSecretRef', 'appRole', 'kubernetes', 'jwt'];

/**
 * ESO store features vaultgate refuses (deny) or ignores (warn), for documentation and the report.
 * Paths are relative to spec.provider.vault unless they start with spec.
 */
export const STORE_FEATURES_NOT_SUPPORTED = {
  refused: ['auth.ldap', 'auth.userPass', 'auth.cert', 'auth.iam', 'auth.gcp', 'auth.kubernetes.secretRef', 'headers', 'providers other than vault'],
  ignoredWithWarning: ['spec.retrySettings', 'readYourWrites', 'forwardInconsistent', 'checkAndSet (PushSecret only)', 'spec.conditions on a SecretStore'],
} as const;

const VAULT = 'spec.provider.vault';

/** Every reference a Vault store makes to a namespaced object, with ESO's name for it in errors. */
const REFERENCES: ReadonlyArray<{ path: string[]; esoName: string }> = [
  { path: ['auth', 'tokenSecretRef'], esoName: 'Auth.TokenSecretRef' },
  { path: ['auth', 'appRole', 'roleRef'], esoName: 'Auth.AppRole.RoleRef' },
  { path: ['auth', 'appRole', 'secretRef'], esoName: 'Auth.AppRole.SecretRef' },
  { path: ['auth', 'kubernetes', 'serviceAccountRef'], esoName: 'Auth.Kubernetes.ServiceAccountRef' },
  { path: ['auth', 'kubernetes', 'secretRef'], esoName: 'Auth.Kubernetes.SecretRef' },
  { path: ['auth', 'jwt', 'secretRef'], esoName: 'Auth.Jwt.SecretRef' },
  { path: ['auth', 'jwt', 'kubernetesServiceAccountToken', 'serviceAccountRef'], esoName: 'Auth.Jwt.KubernetesServiceAccountToken.ServiceAccountRef' },
  { path: ['tls', 'certSecretRef'], esoName: 'ClientTLS.ClientCert' },
  { path: ['tls', 'keySecretRef'], esoName: 'ClientTLS.SecretRef' },
  { path: ['caProvider'], esoName: 'CAProvider' },
];

/**
 * Findings for a SecretStore or ClusterSecretStore. `namespace` is the SecretStore's namespace
 * (metadata.namespace, or the request's); undefined when unknown (offline validation), in which
 * case the same-namespace rule cannot be checked and is skipped.
 */
export function validateStore(kind: StoreKind, store: Obj, namespace: string | undefined): Finding[] {
  const spec = obj(store.spec);
  if (!spec) return [];
  const findings: Finding[] = [
    ...checkConditions(kind, spec),
    ...checkRefreshInterval(spec.refreshInterval),
    ...checkProviders(spec),
  ];
  if (has(spec, 'retrySettings')) {
    findings.push(warn('spec.retrySettings', 'eso.store.ignored-field', 'retrySettings is ignored by vaultgate: its Vault client retries with its own backoff and rate limits.'));
  }
  const vault = obj(obj(spec.provider)?.vault);
  if (vault) findings.push(...checkVault(kind, vault, namespace));
  return findings;
}

function checkConditions(kind: StoreKind, spec: Obj): Finding[] {
  const findings: Finding[] = [];
  const conditions = list(spec.conditions);
  if (kind === 'SecretStore' && conditions.length > 0) {
    findings.push(warn('spec.conditions', 'eso.store.conditions-ignored', 'conditions only restrict which namespaces may use a ClusterSecretStore; a SecretStore serves its own namespace and ignores them.'));
  }
  conditions.forEach((condition, ci) => {
    list(obj(condition)?.namespaceRegexes).forEach((re, ri) => {
      if (typeof re !== 'string') return;
      const compiled = compileGoRegexp(re);
      if (!compiled.ok) {
        // ESO's wording (secretstore_validator.go validateConditions), indexes and all.
        findings.push(deny(`spec.conditions[${ci}].namespaceRegexes[${ri}]`, 'eso.store.namespace-regex',
          `failed to compile ${ri}th namespace regex in ${ci}th condition: ${compiled.error}`));
      }
    });
  });
  return findings;
}

/** Store refreshInterval: whole seconds (ESO's int field) or a Go duration; never negative. */
export function checkRefreshInterval(value: unknown, field = 'spec.refreshInterval', rule = 'eso.store.refresh-interval'): Finding[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) return [deny(field, rule, `refreshInterval ${value} must be a whole number of seconds or a Go duration such as "5m".`)];
    return value < 0 ? [deny(field, rule, `refreshInterval must not be negative (got ${value}).`)] : [];
  }
  if (typeof value !== 'string') return [];
  const parsed = parseGoDuration(value);
  if (!parsed.ok) return [deny(field, rule, `refreshInterval is not a duration: ${parsed.error}.`)];
  return parsed.ms < 0 ? [deny(field, rule, `refreshInterval must not be negative (got ${JSON.stringify(value)}).`)] : [];
}

function checkProviders(spec: Obj): Finding[] {
  const provider = obj(spec.provider);
  if (!provider) return [];
  const names = Object.keys(provider).filter((k) => provider[k] !== null && provider[k] !== undefined);
  const findings: Finding[] = [];
  if (names.length !== 1) {
    findings.push(deny('spec.provider', 'eso.store.provider-count', `secret stores must only have exactly one backend specified, found ${names.length}.`));
  }
  for (const name of names) {
    if (name !== 'vault') {
      findings.push(deny(child('spec.provider', name), 'eso.store.provider-unsupported', `provider ${name} is not supported by vaultgate (only vault).`));
    }
  }
  return findings;
}

function checkVault(kind: StoreKind, vault: Obj, namespace: string | undefined): Finding[] {
  const findings: Finding[] = [
    ...checkAuth(kind, obj(vault.auth)),
    ...checkReferences(kind, vault, namespace),
  ];
  const tls = obj(vault.tls);
  if (has(tls, 'certSecretRef') !== has(tls, 'keySecretRef')) {
    findings.push(deny(`${VAULT}.tls`, 'eso.store.client-tls', 'when provided, both ClientTLS.ClientCert and ClientTLS.SecretRef should be provided (set tls.certSecretRef and tls.keySecretRef together).'));
  }
  const cas = obj(vault.checkAndSet);
  if (cas?.required === true) {
    findings.push(vault.version === 'v1'
      ? deny(`${VAULT}.checkAndSet.required`, 'eso.store.cas-kv1', 'checkAndSet is not supported with Vault KV version v1.')
      : warn(`${VAULT}.checkAndSet`, 'eso.store.ignored-field', 'checkAndSet only applies to PushSecret writes, which vaultgate does not serve; it has no effect.'));
  }
  const headers = obj(vault.headers);
  if (headers && Object.keys(headers).length > 0) {
    findings.push(deny(`${VAULT}.headers`, 'eso.store.unsupported-field', 'custom request headers are not supported by vaultgate; remove headers (vaultgate would otherwise send requests without them).'));
  }
  for (const flag of ['readYourWrites', 'forwardInconsistent'] as const) {
    if (vault[flag] === true) {
      findings.push(warn(child(VAULT, flag), 'eso.store.ignored-field', `${flag} is ignored by vaultgate: it does not track Vault Enterprise replication state.`));
    }
  }
  const ca = obj(vault.caProvider);
  if (kind === 'ClusterSecretStore' && ca && !has(ca, 'namespace') && !has(vault, 'caBundle')) {
    // ESO fails the store at reconcile with this error (runtime/esutils FetchCACertFromSource); refuse it up front.
    findings.push(deny(`${VAULT}.caProvider.namespace`, 'eso.store.ca-provider-namespace', 'missing namespace on caProvider secret: a ClusterSecretStore must say which namespace holds its CA.'));
  }
  return findings;
}

function checkAuth(kind: StoreKind, auth: Obj | undefined): Finding[] {
  const field = `${VAULT}.auth`;
  const set = ESO_AUTH_ORDER.filter((m) => has(auth, m));
  if (!auth || set.length === 0) {
    return [deny(field, 'eso.store.auth-required', `an auth method is required by vaultgate (one of ${SUPPORTED_AUTH_METHODS.join(', ')}): it never reads Vault on a store's behalf with a token of its own.`)];
  }
  const findings: Finding[] = [];
  for (const method of set) {
    if (!SUPPORTED_AUTH_METHODS.includes(method)) {
      findings.push(deny(child(field, method), 'eso.store.auth-unsupported', `auth method ${method} is not supported by vaultgate (supported: ${SUPPORTED_AUTH_METHODS.join(', ')}).`));
    }
  }
  if (set.length > 1) {
    // ESO's Go comment says "only one of", but neither its schema nor its webhook enforces it.
    findings.push(warn(field, 'eso.store.multiple-auth', `several auth methods are set (${set.join(', ')}); like ESO, vaultgate logs in with the first of ${ESO_AUTH_ORDER.join(', ')} that is set, here ${set[0] ?? ''}, and ignores the rest.`));
  }

  const appRole = obj(auth.appRole);
  if (appRole && !str(appRole.roleId) && !has(appRole, 'roleRef')) {
    findings.push(deny(`${field}.appRole`, 'eso.store.approle-role-id', 'invalid Auth.AppRole: neither `roleId` nor `roleRef` was supplied.'));
  }
  const jwt = obj(auth.jwt);
  if (jwt && !has(jwt, 'secretRef') && !has(jwt, 'kubernetesServiceAccountToken')) {
    findings.push(deny(`${field}.jwt`, 'eso.store.jwt-token-source', 'neither `secretRef` nor `kubernetesServiceAccountToken` was supplied as token source for jwt authentication.'));
  }
  const kube = obj(auth.kubernetes);
  if (kube) {
    if (has(kube, 'secretRef')) {
      findings.push(deny(`${field}.kubernetes.secretRef`, 'eso.store.auth-unsupported', 'a long-lived ServiceAccount token Secret is not supported by vaultgate; use serviceAccountRef, which vaultgate turns into a short-lived TokenRequest token.'));
    } else if (!has(kube, 'serviceAccountRef')) {
      // ESO would log in with its own pod's token. A tenant's store must not borrow the controller's identity.
      findings.push(kind === 'SecretStore'
        ? deny(`${field}.kubernetes.serviceAccountRef`, 'eso.store.kubernetes-identity', 'a SecretStore must name a ServiceAccount of its namespace in serviceAccountRef; vaultgate never logs in to Vault with its own identity on a namespace\'s behalf.')
        : warn(`${field}.kubernetes.serviceAccountRef`, 'eso.store.kubernetes-identity', 'no serviceAccountRef: this ClusterSecretStore logs in with vaultgate\'s own ServiceAccount token (as ESO does with its own); prefer a dedicated ServiceAccount.'));
    }
  }
  return findings;
}

/** "References in a namespaced store may not leave its namespace" (ESO: ValidateReferent*Selector). */
function checkReferences(kind: StoreKind, vault: Obj, namespace: string | undefined): Finding[] {
  if (kind !== 'SecretStore' || namespace === undefined) return [];
  const findings: Finding[] = [];
  for (const ref of REFERENCES) {
    let node: unknown = vault;
    for (const key of ref.path) node = isObj(node) ? node[key] : undefined;
    const target = str(obj(node)?.namespace);
    if (target !== undefined && target !== namespace) {
      findings.push(deny(`${VAULT}.${ref.path.join('.')}.namespace`, 'eso.store.cross-namespace',
        `invalid ${ref.esoName}: namespace should either be empty or match the namespace of the SecretStore for a namespaced SecretStore (references in a namespaced store may not leave its namespace "${namespace}").`));
    }
  }
  return findings;
}
