// SecretStore / ClusterSecretStore → an authenticated Vault session for that store's identity.
// One VaultClient per (server, namespace, CA, client cert, headers) and one token per identity
// (controller/vault TokenCache: a login only when there is no usable token, shared by every
// ExternalSecret using the store). Tenants' stores authenticate as the tenant: kubernetes auth with a
// TokenRequest for the referenced ServiceAccount, jwt with a TokenRequest or a JWT from a Secret, a token
// or AppRole credentials from Secrets. vaultgate never falls back to its own service account token for a
// store (ESO does when serviceAccountRef and secretRef are both absent; anchors §5 #9: escalation).
import { createHash } from 'node:crypto';
import type { SecretStoreSpec, SecretKeySelector, ServiceAccountSelector, VaultProvider } from '../../schemas/types.ts';
import type { KubeClient } from '../runtime/kube-client.ts';
import type { KubeObject } from '../runtime/objects.ts';
import { CONFIGMAPS, SECRETS } from '../runtime/resources.ts';
import { createVaultClient, type VaultClientOptions } from '../vault/client.ts';
import type { TokenCache, VaultSession } from '../vault/token-cache.ts';
import type { KvMountRef, VaultClient, VaultCredentials } from '../vault/types.ts';
import { SafeError } from './common.ts';

export interface StoreObject extends KubeObject {
  spec: SecretStoreSpec;
}

export type StoreKind = 'SecretStore' | 'ClusterSecretStore';

export interface StoreConnection {
  session: VaultSession;
  kv: { storePath: string | undefined; version: KvMountRef['version'] };
}

export interface StoreConnectorOptions {
  client: Pick<KubeClient, 'get' | 'createToken'>;
  tokens: TokenCache;
  /** Per-request Vault timeout. Default 10 s. */
  timeoutMs?: number;
  /** Injected for tests; default createVaultClient. */
  makeClient?: (opts: VaultClientOptions) => VaultClient;
  /** Extra client options (limiter, metrics, logger, listMethod). */
  clientDefaults?: Partial<VaultClientOptions>;
  /** TokenRequest lifetime. Default 600 s (ESO and VCO use 600). */
  tokenExpirationSeconds?: number;
}

export class StoreConnector {
  private readonly clients = new Map<string, VaultClient>();
  constructor(private readonly opts: StoreConnectorOptions) {}

  /**
   * A session for `store`. `referentNamespace` is the namespace of the ExternalSecret using a
   * ClusterSecretStore: ESO's referent auth resolves references without a namespace there.
   */
  async connect(kind: StoreKind, store: StoreObject, referentNamespace?: string): Promise<StoreConnection> {
    const vault = store.spec.provider?.vault;
    if (!vault) throw new SafeError('InvalidProviderConfig', 'spec.provider.vault is required: vaultgate supports only the Vault provider');
    const storeNs = kind === 'SecretStore' ? store.metadata.namespace ?? '' : undefined;
    const nsOf = (explicit: string | undefined, field: string): string => {
      if (storeNs !== undefined) {
        if (explicit && explicit !== storeNs) throw new SafeError('InvalidProviderConfig', `${field}.namespace: a SecretStore may only reference its own namespace`);
        return storeNs;
      }
      const ns = explicit ?? referentNamespace;
      if (!ns) throw new SafeError('InvalidProviderConfig', `${field}.namespace is required for a ClusterSecretStore used without an ExternalSecret namespace`);
      return ns;
    };
    const client = await this.vaultClient(vault, nsOf);
    const creds = await this.credentials(vault, nsOf);
    return {
      session: this.opts.tokens.session(client, creds),
      kv: { storePath: vault.path, version: vault.version === 'v1' ? 1 : 2 },
    };
  }

  /** Close every Vault client (keep-alive sockets). */
  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }

  private async vaultClient(vault: VaultProvider, nsOf: (ns: string | undefined, field: string) => string): Promise<VaultClient> {
    let ca: string | undefined;
    if (vault.caBundle) ca = Buffer.from(vault.caBundle, 'base64').toString('utf8');
    else if (vault.caProvider) {
      const p = vault.caProvider;
      const ns = nsOf(p.namespace, 'spec.provider.vault.caProvider');
      const obj = await this.opts.client.get(p.type === 'ConfigMap' ? CONFIGMAPS : SECRETS, p.name, ns);
      if (!obj) throw new SafeError('InvalidProviderConfig', `spec.provider.vault.caProvider: ${p.type} ${ns}/${p.name} not found`);
      const key = p.key ?? 'ca.crt';
      const raw = p.type === 'ConfigMap' ? (obj.data as Record<string, string> | undefined)?.[key] : decodeSecretValue(obj, key);
      if (!raw) throw new SafeError('InvalidProviderConfig', `spec.provider.vault.caProvider: key "${key}" not found in ${p.type} ${ns}/${p.name}`);
      ca = raw;
    }
    let cert: string | undefined;
    let key: string | undefined;
    if (vault.tls?.certSecretRef || vault.tls?.keySecretRef) {
      if (!vault.tls.certSecretRef || !vault.tls.keySecretRef) throw new SafeError('InvalidProviderConfig', 'when provided, both ClientTLS.ClientCert and ClientTLS.SecretRef should be provided');
      cert = await this.secretValue(vault.tls.certSecretRef, 'spec.provider.vault.tls.certSecretRef', nsOf, 'tls.crt');
      key = await this.secretValue(vault.tls.keySecretRef, 'spec.provider.vault.tls.keySecretRef', nsOf, 'tls.key');
    }
    const headers = Object.fromEntries(Object.entries(vault.headers ?? {}).filter((e): e is [string, string] => e[1] !== undefined));
    const id = createHash('sha256').update(JSON.stringify([vault.server, vault.namespace ?? '', ca ?? '', cert ?? '', key ?? '', headers])).digest('hex');
    let c = this.clients.get(id);
    if (!c) {
      const make = this.opts.makeClient ?? createVaultClient;
      c = make({
        ...this.opts.clientDefaults,
        address: vault.server,
        timeoutMs: this.opts.timeoutMs ?? 10_000,
        ...(vault.namespace ? { namespace: vault.namespace } : {}),
        ...(ca || cert ? { tls: { ...(ca ? { ca } : {}), ...(cert ? { cert, key } : {}) } } : {}),
        ...(Object.keys(headers).length ? { headers } : {}),
      });
      this.clients.set(id, c);
    }
    return c;
  }

  private async credentials(vault: VaultProvider, nsOf: (ns: string | undefined, field: string) => string): Promise<VaultCredentials> {
    const auth = vault.auth;
    if (!auth) throw new SafeError('InvalidProviderConfig', 'spec.provider.vault.auth is required');
    const exp = this.opts.tokenExpirationSeconds ?? 600;
    if (auth.kubernetes) {
      const k = auth.kubernetes;
      const mount = k.mountPath ?? 'kubernetes';
      if (k.serviceAccountRef) {
        const sa = k.serviceAccountRef;
        const ns = nsOf(sa.namespace, 'spec.provider.vault.auth.kubernetes.serviceAccountRef');
        return { method: 'kubernetes', mount, role: k.role, subject: `serviceaccount ${ns}/${sa.name}`, jwt: () => this.tokenFor(ns, sa, sa.audiences, exp) };
      }
      if (k.secretRef) {
        const ref = k.secretRef;
        return { method: 'kubernetes', mount, role: k.role, subject: this.refSubject(ref, nsOf, 'spec.provider.vault.auth.kubernetes.secretRef'), jwt: () => this.secretValue(ref, 'spec.provider.vault.auth.kubernetes.secretRef', nsOf, 'token') };
      }
      throw new SafeError('InvalidProviderConfig', 'spec.provider.vault.auth.kubernetes needs serviceAccountRef (or secretRef): vaultgate never logs in to Vault with its own service account on behalf of a store');
    }
    if (auth.tokenSecretRef) {
      const ref = auth.tokenSecretRef;
      return { method: 'token', subject: this.refSubject(ref, nsOf, 'spec.provider.vault.auth.tokenSecretRef'), token: () => this.secretValue(ref, 'spec.provider.vault.auth.tokenSecretRef', nsOf) };
    }
    if (auth.appRole) {
      const a = auth.appRole;
      const roleRef = a.roleRef;
      if (!a.roleId && !roleRef) throw new SafeError('InvalidProviderConfig', 'spec.provider.vault.auth.appRole needs roleId or roleRef');
      const subject = this.refSubject(a.secretRef, nsOf, 'spec.provider.vault.auth.appRole.secretRef');
      // A role id is an identifier, not a secret: resolve a roleRef now so the identity key is stable.
      const roleId = roleRef ? (await this.secretValue(roleRef, 'spec.provider.vault.auth.appRole.roleRef', nsOf)).trim() : a.roleId ?? '';
      return {
        method: 'appRole', mount: a.path ?? 'approle', roleId, subject,
        secretId: () => this.secretValue(a.secretRef, 'spec.provider.vault.auth.appRole.secretRef', nsOf),
      };
    }
    if (auth.jwt) {
      const j = auth.jwt;
      const mount = j.path ?? 'jwt';
      if (j.kubernetesServiceAccountToken) {
        const t = j.kubernetesServiceAccountToken;
        const ns = nsOf(t.serviceAccountRef.namespace, 'spec.provider.vault.auth.jwt.kubernetesServiceAccountToken.serviceAccountRef');
        const audiences = t.serviceAccountRef.audiences ?? t.audiences ?? ['vault'];
        return { method: 'jwt', mount, ...(j.role ? { role: j.role } : {}), subject: `serviceaccount ${ns}/${t.serviceAccountRef.name}`, jwt: () => this.tokenFor(ns, t.serviceAccountRef, audiences, t.expirationSeconds ?? exp) };
      }
      if (j.secretRef) {
        const ref = j.secretRef;
        return { method: 'jwt', mount, ...(j.role ? { role: j.role } : {}), subject: this.refSubject(ref, nsOf, 'spec.provider.vault.auth.jwt.secretRef'), jwt: () => this.secretValue(ref, 'spec.provider.vault.auth.jwt.secretRef', nsOf) };
      }
      throw new SafeError('InvalidProviderConfig', 'spec.provider.vault.auth.jwt needs secretRef or kubernetesServiceAccountToken');
    }
    const unsupported = (['ldap', 'userPass', 'cert', 'iam', 'gcp'] as const).find((m) => auth[m]);
    if (unsupported) throw new SafeError('InvalidProviderConfig', `spec.provider.vault.auth.${unsupported} is not supported by vaultgate (supported: kubernetes, tokenSecretRef, appRole, jwt)`);
    throw new SafeError('InvalidProviderConfig', 'spec.provider.vault.auth sets no authentication method');
  }

  private async tokenFor(ns: string, sa: ServiceAccountSelector, audiences: string[] | undefined, expirationSeconds: number): Promise<string> {
    const issued = await this.opts.client.createToken(ns, sa.name, { ...(audiences?.length ? { audiences } : {}), expirationSeconds });
    return issued.token;
  }

  private refSubject(ref: SecretKeySelector, nsOf: (ns: string | undefined, field: string) => string, field: string): string {
    return `secret ${nsOf(ref.namespace, field)}/${ref.name ?? ''}#${ref.key ?? ''}`;
  }

  private async secretValue(ref: SecretKeySelector, field: string, nsOf: (ns: string | undefined, field: string) => string, defaultKey?: string): Promise<string> {
    const ns = nsOf(ref.namespace, field);
    if (!ref.name) throw new SafeError('InvalidProviderConfig', `${field}.name is required`);
    const key = ref.key ?? defaultKey;
    if (!key) throw new SafeError('InvalidProviderConfig', `${field}.key is required`);
    const secret = await this.opts.client.get(SECRETS, ref.name, ns);
    if (!secret) throw new SafeError('MissingProviderSecret', `${field}: Secret ${ns}/${ref.name} not found`);
    const value = decodeSecretValue(secret, key);
    if (value === undefined) throw new SafeError('MissingProviderSecret', `${field}: key "${key}" not found in Secret ${ns}/${ref.name}`);
    return value;
  }
}

function decodeSecretValue(secret: KubeObject, key: string): string | undefined {
  const data = secret.data as Record<string, string> | undefined;
  const b64 = data?.[key];
  if (b64 !== undefined) return Buffer.from(b64, 'base64').toString('utf8');
  return (secret.stringData as Record<string, string> | undefined)?.[key];
}
