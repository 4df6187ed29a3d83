// SecretStore / ClusterSecretStore → an authenticated Vault session for that store's identity.
// One VaultClient per (server, namespace, CA, client cert, headers) and one token per identity
// (vault/ TokenCache: a login only when there is no usable token, shared by every
// ExternalSecret using the store). Tenants' stores authenticate as the tenant: kubernetes auth with a
// TokenRequest for the referenced ServiceAccount, jwt with a TokenRequest or a JWT from a Secret, a token
// or AppRole credentials from Secrets. vaultgate never falls back to its own service account token for a
// store (ESO does when serviceAccountRef and secretRef are both absent: any namespace then reads what that
// identity can, external-secrets/external-secrets#3827).
//
// A tenant writes both the ServiceAccount and the server of a SecretStore, so before anything is sent or
// minted the connector runs admission's rules for the store (among them: the server is scheme://host[:port]
// and one the cluster admin allowed, rules eso.store.vault-server-syntax and eso.store.vault-server; its
// paths name themselves; no auth method or field admission refuses) and checks that the token's audiences
// are not the apiserver's own (rule eso.store.token-audience; a store naming none gets "vault"). The
// webhook checks all of it too, but it may have been down or bypassed, and this is the last point before
// a token leaves the cluster. Features admission refuses (kubernetes.secretRef, headers) are not
// implemented here at all.
import { createHash } from 'node:crypto';
import type {
  SecretKeySelector,
  SecretStoreSpec,
  ServiceAccountSelector,
  VaultAppRole,
  VaultAuth,
  VaultCertAuth,
  VaultJwtAuth,
  VaultKubernetesAuth,
  VaultLdapAuth,
  VaultProvider,
  VaultUserPassAuth,
} from '../../schemas/types.ts';
import type { KubeClient } from '../../kube/kube-client.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { CONFIGMAPS, SECRETS } from '../../kube/resources.ts';
import { createVaultClient, type VaultClientOptions } from '../../vault/client.ts';
import type { TokenCache, VaultSession } from '../../vault/token-cache.ts';
import type { KvMountRef, VaultClient, VaultCredentials } from '../../vault/types.ts';
import { ApiServerAudiences } from '../../kube/api-audiences.ts';
import { defaultContext, type AdmissionContext } from '../../webhook/admission/context.ts';
import { ESO_API_VERSION } from '../../schemas/eso-kinds.ts';
import {
  storeTokenAudiences,
  TOKEN_AUDIENCE_RULE,
  tokenAudienceProblem,
} from '../../webhook/rules/eso/token-audiences.ts';
import { ESO_AUTH_ORDER } from '../../webhook/rules/eso/store-rules.ts';
import { admissionDenials, describeFindings, safeMessage } from './common.ts';
import { NEVER, ReconcileError } from '../../kube/reconcile-error.ts';

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
  /**
   * What the server and audience checks read: guardrails, namespace labels and the cluster's allowed
   * Vault servers (--allowed-vault-server). Default: no guardrail and no server list (any server).
   */
  admission?: () => AdmissionContext;
  /** The apiserver's own audiences; default: discovered with a TokenRequest (kube/api-audiences.ts). */
  apiServerAudiences?: ApiServerAudiences;
}

/** The namespace a store's reference resolves in (`field` names it in errors); see StoreConnector.connect. */
type NamespaceOf = (ns: string | undefined, field: string) => string;

/**
 * The auth method a store logs in with: the first one it sets in ESO's order, so a manifest logs in as it
 * does with ESO (iam and gcp, last, are refused).
 */
function authMethodInUse(auth: VaultAuth): (typeof ESO_AUTH_ORDER)[number] | undefined {
  return ESO_AUTH_ORDER.find((m) => auth[m]);
}

export class StoreConnector {
  private readonly clients = new Map<string, VaultClient>();
  private readonly apiAudiences: ApiServerAudiences;
  constructor(private readonly opts: StoreConnectorOptions) {
    this.apiAudiences = opts.apiServerAudiences ?? new ApiServerAudiences({ client: opts.client });
  }

  /**
   * A session for `store`. `referentNamespace` is the namespace of the ExternalSecret using a
   * ClusterSecretStore: ESO's referent auth resolves references without a namespace there.
   */
  async connect(kind: StoreKind, store: StoreObject, referentNamespace?: string): Promise<StoreConnection> {
    const vault = store.spec.provider?.vault;
    if (!vault)
      throw new ReconcileError(
        'InvalidProviderConfig',
        'spec.provider.vault is required: vaultgate supports only the Vault provider',
        NEVER,
      );
    const storeNs = kind === 'SecretStore' ? (store.metadata.namespace ?? '') : undefined;
    const nsOf = (explicit: string | undefined, field: string): string => {
      if (storeNs !== undefined) {
        if (explicit && explicit !== storeNs)
          throw new ReconcileError(
            'InvalidProviderConfig',
            `${field}.namespace: a SecretStore may only reference its own namespace`,
            NEVER,
          );
        return storeNs;
      }
      const ns = explicit ?? referentNamespace;
      if (!ns)
        throw new ReconcileError(
          'InvalidProviderConfig',
          `${field}.namespace is required for a ClusterSecretStore used without an ExternalSecret namespace`,
          NEVER,
        );
      return ns;
    };
    const ctx = this.opts.admission?.() ?? defaultContext();
    // Before any Secret is read, token minted or request sent: the store must pass admission's rules
    // (server syntax and allow-list, paths, auth methods, references), whatever its Ready condition says:
    // an ExternalSecret may be reconciled before the store is, and the webhook may have been bypassed.
    const denials = admissionDenials({ ...store, apiVersion: ESO_API_VERSION, kind }, ctx);
    if (denials.length > 0) throw new ReconcileError('InvalidProviderConfig', describeFindings(denials), NEVER);
    const client = await this.vaultClient(vault, nsOf, await this.certAuthTls(vault, nsOf));
    const creds = await this.credentials(vault, nsOf, ctx);
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

  /** One VaultClient per server, namespace, CA and client certificate, kept for the connector's life. */
  private async vaultClient(
    vault: VaultProvider,
    nsOf: NamespaceOf,
    certAuth?: { cert: string; key: string },
  ): Promise<VaultClient> {
    const ca = await this.caPem(vault, nsOf);
    const tls = await this.clientTls(vault, nsOf);
    // Cert auth's certificate is the connection's, in place of tls.certSecretRef (as ESO's transport).
    const { cert, key } = certAuth ?? tls;
    // Custom headers are refused by admission (rule eso.store.unsupported-field): none are ever sent.
    const id = createHash('sha256')
      .update(JSON.stringify([vault.server, vault.namespace ?? '', ca ?? '', cert ?? '', key ?? '']))
      .digest('hex');
    let c = this.clients.get(id);
    if (!c) {
      const make = this.opts.makeClient ?? createVaultClient;
      c = make({
        ...this.opts.clientDefaults,
        address: vault.server,
        timeoutMs: this.opts.timeoutMs ?? 10_000,
        ...(vault.namespace ? { namespace: vault.namespace } : {}),
        ...(ca || cert ? { tls: { ...(ca ? { ca } : {}), ...(cert ? { cert, key } : {}) } } : {}),
      });
      this.clients.set(id, c);
    }
    return c;
  }

  /** The CA the store trusts: caBundle, or the key of the ConfigMap or Secret caProvider names. */
  private async caPem(vault: VaultProvider, nsOf: NamespaceOf): Promise<string | undefined> {
    if (vault.caBundle) return Buffer.from(vault.caBundle, 'base64').toString('utf8');
    const p = vault.caProvider;
    if (!p) return undefined;
    const ns = nsOf(p.namespace, 'spec.provider.vault.caProvider');
    const obj = await this.opts.client.get(p.type === 'ConfigMap' ? CONFIGMAPS : SECRETS, p.name, ns);
    if (!obj)
      throw new ReconcileError(
        'InvalidProviderConfig',
        `spec.provider.vault.caProvider: ${p.type} ${ns}/${p.name} not found`,
        NEVER,
      );
    const key = p.key ?? 'ca.crt';
    const raw =
      p.type === 'ConfigMap' ? (obj.data as Record<string, string> | undefined)?.[key] : decodeSecretValue(obj, key);
    if (!raw)
      throw new ReconcileError(
        'InvalidProviderConfig',
        `spec.provider.vault.caProvider: key "${key}" not found in ${p.type} ${ns}/${p.name}`,
        NEVER,
      );
    return raw;
  }

  /** The client certificate of tls.certSecretRef and tls.keySecretRef (both or neither). */
  private async clientTls(vault: VaultProvider, nsOf: NamespaceOf): Promise<{ cert?: string; key?: string }> {
    const tls = vault.tls;
    if (!tls?.certSecretRef && !tls?.keySecretRef) return {};
    if (!tls.certSecretRef || !tls.keySecretRef)
      throw new ReconcileError(
        'InvalidProviderConfig',
        'when provided, both ClientTLS.ClientCert and ClientTLS.SecretRef should be provided',
        NEVER,
      );
    return {
      cert: await this.secretValue(tls.certSecretRef, 'spec.provider.vault.tls.certSecretRef', nsOf, 'tls.crt'),
      key: await this.secretValue(tls.keySecretRef, 'spec.provider.vault.tls.keySecretRef', nsOf, 'tls.key'),
    };
  }

  /** The store's login, by the method it uses (authMethodInUse): one function for each. */
  private async credentials(vault: VaultProvider, nsOf: NamespaceOf, ctx: AdmissionContext): Promise<VaultCredentials> {
    const auth = vault.auth;
    if (!auth) throw new ReconcileError('InvalidProviderConfig', 'spec.provider.vault.auth is required', NEVER);
    const method = authMethodInUse(auth);
    switch (method) {
      case 'tokenSecretRef':
        return this.tokenLogin(auth.tokenSecretRef!, nsOf);
      case 'appRole':
        return this.appRoleLogin(auth.appRole!, nsOf);
      case 'kubernetes':
        return this.kubernetesLogin(auth.kubernetes!, nsOf, ctx);
      case 'ldap':
      case 'userPass':
        return this.passwordLogin(method, auth[method]!, nsOf);
      case 'jwt':
        return this.jwtLogin(auth.jwt!, nsOf, ctx);
      case 'cert':
        return this.certLogin(auth.cert!, nsOf);
      case 'iam':
      case 'gcp':
        throw new ReconcileError(
          'InvalidProviderConfig',
          `spec.provider.vault.auth.${method} is not supported by vaultgate (supported: kubernetes, tokenSecretRef, appRole, jwt, ldap, userPass, cert)`,
          NEVER,
        );
      case undefined:
        throw new ReconcileError(
          'InvalidProviderConfig',
          'spec.provider.vault.auth sets no authentication method',
          NEVER,
        );
    }
  }

  private tokenLogin(ref: SecretKeySelector, nsOf: NamespaceOf): VaultCredentials {
    return {
      method: 'token',
      subject: this.refSubject(ref, nsOf, 'spec.provider.vault.auth.tokenSecretRef'),
      token: () => this.secretValue(ref, 'spec.provider.vault.auth.tokenSecretRef', nsOf),
    };
  }

  private async appRoleLogin(a: VaultAppRole, nsOf: NamespaceOf): Promise<VaultCredentials> {
    const roleRef = a.roleRef;
    if (!a.roleId && !roleRef)
      throw new ReconcileError(
        'InvalidProviderConfig',
        'spec.provider.vault.auth.appRole needs roleId or roleRef',
        NEVER,
      );
    const subject = this.refSubject(a.secretRef, nsOf, 'spec.provider.vault.auth.appRole.secretRef');
    // A role id is an identifier, not a secret: resolve a roleRef now so the identity key is stable.
    const roleId = roleRef
      ? (await this.secretValue(roleRef, 'spec.provider.vault.auth.appRole.roleRef', nsOf)).trim()
      : (a.roleId ?? '');
    return {
      method: 'appRole',
      mount: a.path ?? 'approle',
      roleId,
      subject,
      secretId: () => this.secretValue(a.secretRef, 'spec.provider.vault.auth.appRole.secretRef', nsOf),
    };
  }

  private async kubernetesLogin(
    k: VaultKubernetesAuth,
    nsOf: NamespaceOf,
    ctx: AdmissionContext,
  ): Promise<VaultCredentials> {
    const sa = k.serviceAccountRef;
    // secretRef (a long-lived token Secret) is refused by admission (rule eso.store.auth-unsupported).
    if (!sa)
      throw new ReconcileError(
        'InvalidProviderConfig',
        'spec.provider.vault.auth.kubernetes needs serviceAccountRef: vaultgate never logs in to Vault with its own service account on behalf of a store',
        NEVER,
      );
    const ns = nsOf(sa.namespace, 'spec.provider.vault.auth.kubernetes.serviceAccountRef');
    const field = 'spec.provider.vault.auth.kubernetes.serviceAccountRef.audiences';
    const audiences = await this.checkedAudiences(ns, sa, sa.audiences, field, ctx);
    const exp = this.tokenExpirationSeconds();
    return {
      method: 'kubernetes',
      mount: k.mountPath ?? 'kubernetes',
      role: k.role,
      subject: `serviceaccount ${ns}/${sa.name}`,
      jwt: () => this.tokenFor(ns, sa, audiences, exp),
    };
  }

  /**
   * ESO's ldap and userPass logins, their Secret read in the store's own namespace (a ClusterSecretStore:
   * the one named, or the ExternalSecret's). The password is fetched at each login only.
   */
  private passwordLogin(
    method: 'ldap' | 'userPass',
    m: VaultLdapAuth | VaultUserPassAuth,
    nsOf: NamespaceOf,
  ): VaultCredentials {
    const field = `spec.provider.vault.auth.${method}.secretRef`;
    const ref = m.secretRef ?? {};
    return {
      method,
      mount: m.path ?? (method === 'ldap' ? 'ldap' : 'userpass'),
      username: m.username.trim(),
      subject: this.refSubject(ref, nsOf, field),
      password: () => this.secretValue(ref, field, nsOf),
    };
  }

  private async jwtLogin(j: VaultJwtAuth, nsOf: NamespaceOf, ctx: AdmissionContext): Promise<VaultCredentials> {
    const mount = j.path ?? 'jwt';
    const role = j.role ? { role: j.role } : {};
    const t = j.kubernetesServiceAccountToken;
    if (t) {
      const sa = t.serviceAccountRef;
      const ns = nsOf(sa.namespace, 'spec.provider.vault.auth.jwt.kubernetesServiceAccountToken.serviceAccountRef');
      const own = sa.audiences?.length ? sa.audiences : undefined;
      const field = own
        ? 'spec.provider.vault.auth.jwt.kubernetesServiceAccountToken.serviceAccountRef.audiences'
        : 'spec.provider.vault.auth.jwt.kubernetesServiceAccountToken.audiences';
      const audiences = await this.checkedAudiences(ns, sa, own ?? t.audiences, field, ctx);
      const exp = t.expirationSeconds ?? this.tokenExpirationSeconds();
      const jwt = () => this.tokenFor(ns, sa, audiences, exp);
      return { method: 'jwt', mount, ...role, subject: `serviceaccount ${ns}/${sa.name}`, jwt };
    }
    const ref = j.secretRef;
    if (!ref)
      throw new ReconcileError(
        'InvalidProviderConfig',
        'spec.provider.vault.auth.jwt needs secretRef or kubernetesServiceAccountToken',
        NEVER,
      );
    const subject = this.refSubject(ref, nsOf, 'spec.provider.vault.auth.jwt.secretRef');
    const jwt = () => this.secretValue(ref, 'spec.provider.vault.auth.jwt.secretRef', nsOf);
    return { method: 'jwt', mount, ...role, subject, jwt };
  }

  /** Cert auth's certificate is the connection's (certAuthTls), so its credentials carry no secret. */
  private certLogin(c: VaultCertAuth, nsOf: NamespaceOf): VaultCredentials {
    return {
      method: 'cert',
      mount: c.path ?? 'cert',
      ...(c.vaultRole ? { role: c.vaultRole } : {}),
      subject: this.refSubject(c.clientCert ?? {}, nsOf, 'spec.provider.vault.auth.cert.clientCert'),
    };
  }

  /** TokenRequest lifetime (default 600 s). */
  private tokenExpirationSeconds(): number {
    return this.opts.tokenExpirationSeconds ?? 600;
  }

  /** The TLS client certificate of a store that logs in with cert auth (and no method ESO tries before it). */
  private async certAuthTls(
    vault: VaultProvider,
    nsOf: NamespaceOf,
  ): Promise<{ cert: string; key: string } | undefined> {
    const a = vault.auth;
    if (!a?.cert || authMethodInUse(a) !== 'cert') return undefined;
    return {
      cert: await this.secretValue(a.cert.clientCert ?? {}, 'spec.provider.vault.auth.cert.clientCert', nsOf),
      key: await this.secretValue(a.cert.secretRef ?? {}, 'spec.provider.vault.auth.cert.secretRef', nsOf),
    };
  }

  /**
   * The audiences a store's token is minted with (["vault"] when it names none), refused when one is the
   * apiserver's own and no enforce guardrail selecting `ns` allows that.
   */
  private async checkedAudiences(
    ns: string,
    sa: ServiceAccountSelector,
    requested: string[] | undefined,
    field: string,
    ctx: AdmissionContext,
  ): Promise<string[]> {
    const audiences = storeTokenAudiences(requested);
    let apiServer: string[];
    try {
      apiServer = await this.apiAudiences.get({ namespace: ns, name: sa.name });
    } catch (err) {
      // Unknown audiences: mint nothing rather than risk handing out a token the apiserver accepts.
      throw new ReconcileError(
        'ValidationFailed',
        `${field}: cannot tell the apiserver's own audiences (a TokenRequest for ServiceAccount ${ns}/${sa.name} failed: ${safeMessage(err)}), so no token is minted for this store`,
        NEVER,
      );
    }
    const problem = tokenAudienceProblem(audiences, ns, apiServer, ctx);
    if (problem)
      throw new ReconcileError('InvalidProviderConfig', `${field}: ${problem} (rule ${TOKEN_AUDIENCE_RULE})`, NEVER);
    return audiences;
  }

  private async tokenFor(
    ns: string,
    sa: ServiceAccountSelector,
    audiences: string[],
    expirationSeconds: number,
  ): Promise<string> {
    const issued = await this.opts.client.createToken(ns, sa.name, { audiences, expirationSeconds });
    return issued.token;
  }

  private refSubject(ref: SecretKeySelector, nsOf: NamespaceOf, field: string): string {
    return `secret ${nsOf(ref.namespace, field)}/${ref.name ?? ''}#${ref.key ?? ''}`;
  }

  private async secretValue(
    ref: SecretKeySelector,
    field: string,
    nsOf: NamespaceOf,
    defaultKey?: string,
  ): Promise<string> {
    const ns = nsOf(ref.namespace, field);
    if (!ref.name) throw new ReconcileError('InvalidProviderConfig', `${field}.name is required`, NEVER);
    const key = ref.key ?? defaultKey;
    if (!key) throw new ReconcileError('InvalidProviderConfig', `${field}.key is required`, NEVER);
    const secret = await this.opts.client.get(SECRETS, ref.name, ns);
    if (!secret)
      throw new ReconcileError('MissingProviderSecret', `${field}: Secret ${ns}/${ref.name} not found`, NEVER);
    const value = decodeSecretValue(secret, key);
    if (value === undefined)
      throw new ReconcileError(
        'MissingProviderSecret',
        `${field}: key "${key}" not found in Secret ${ns}/${ref.name}`,
        NEVER,
      );
    return value;
  }
}

function decodeSecretValue(secret: KubeObject, key: string): string | undefined {
  const data = secret.data as Record<string, string> | undefined;
  const b64 = data?.[key];
  if (b64 !== undefined) return Buffer.from(b64, 'base64').toString('utf8');
  return (secret.stringData as Record<string, string> | undefined)?.[key];
}
