// Admission rules for SecretStore and ClusterSecretStore: ESO's own (apis/externalsecrets/v1/
// secretstore_validator.go, providers/v1/vault/validate.go, with ESO's error strings) plus vaultgate's
// (vault only, supported auth methods, no borrowing the controller's identity, nothing silently ignored).
// Pure: the controller re-runs `validateStore` as defence in depth when no webhook sat in front of it.
import type { Finding } from '../../admission/kinds.ts';
import { type Obj, child, deny, has, isObj, list, obj, str, warn } from './access.ts';
import { parseGoRegexp } from '../../../golang/index.ts';
import type { AdmissionContext } from '../../admission/context.ts';
import { DEFAULT_TARGET, targetName, type VaultTarget } from '../../../policy/capabilities.ts';
import { vaultServerProblem, vaultServerSyntaxProblem } from './vault-servers.ts';
import { vaultPathFindings } from './vault-path.ts';
import { storeTokenAudiences, TOKEN_AUDIENCE_RULE, tokenAsks, tokenAudienceProblem } from './token-audiences.ts';

export type StoreKind = 'SecretStore' | 'ClusterSecretStore';

/** ESO tries auth methods in this order and uses the first one set (providers/v1/vault/auth.go setAuth). */
export const ESO_AUTH_ORDER = [
  'tokenSecretRef',
  'appRole',
  'kubernetes',
  'ldap',
  'userPass',
  'jwt',
  'cert',
  'iam',
  'gcp',
] as const;
/** ESO's auth methods that vaultgate refuses (listed in STORE_FEATURES_NOT_SUPPORTED). */
const REFUSED_AUTH_METHODS: readonly string[] = ['iam', 'gcp'];
export const SUPPORTED_AUTH_METHODS: readonly string[] = ESO_AUTH_ORDER.filter(
  (m) => !REFUSED_AUTH_METHODS.includes(m),
);

/**
 * ESO store features vaultgate refuses (deny) or ignores (warn), for documentation and the report.
 * Paths are relative to spec.provider.vault unless they start with spec.
 */
export const STORE_FEATURES_NOT_SUPPORTED = {
  refused: ['auth.iam', 'auth.gcp', 'auth.kubernetes.secretRef', 'headers', 'providers other than vault'],
  ignoredWithWarning: [
    'spec.retrySettings',
    'readYourWrites',
    'forwardInconsistent',
    'checkAndSet (PushSecret only)',
    'spec.conditions on a SecretStore',
  ],
} as const;

const VAULT = 'spec.provider.vault';

/** A login method that must say where its credential comes from: ESO's check and error (vault/validate.go). */
interface CredentialSource {
  method: (typeof ESO_AUTH_ORDER)[number];
  given: (m: Obj) => boolean;
  rule: string;
  message: string;
}

const CREDENTIAL_SOURCES: readonly CredentialSource[] = [
  {
    method: 'appRole',
    given: (m) => Boolean(str(m.roleId)) || has(m, 'roleRef'),
    rule: 'eso.store.approle-role-id',
    message: 'invalid Auth.AppRole: neither `roleId` nor `roleRef` was supplied.',
  },
  {
    method: 'jwt',
    given: (m) => has(m, 'secretRef') || has(m, 'kubernetesServiceAccountToken'),
    rule: 'eso.store.jwt-token-source',
    message:
      'neither `secretRef` nor `kubernetesServiceAccountToken` was supplied as token source for jwt authentication.',
  },
];

/** Every reference a Vault store makes to a namespaced object, with ESO's name for it in errors. */
const REFERENCES: ReadonlyArray<{ path: string[]; esoName: string }> = [
  { path: ['auth', 'tokenSecretRef'], esoName: 'Auth.TokenSecretRef' },
  { path: ['auth', 'appRole', 'roleRef'], esoName: 'Auth.AppRole.RoleRef' },
  { path: ['auth', 'appRole', 'secretRef'], esoName: 'Auth.AppRole.SecretRef' },
  { path: ['auth', 'kubernetes', 'serviceAccountRef'], esoName: 'Auth.Kubernetes.ServiceAccountRef' },
  { path: ['auth', 'kubernetes', 'secretRef'], esoName: 'Auth.Kubernetes.SecretRef' },
  { path: ['auth', 'jwt', 'secretRef'], esoName: 'Auth.Jwt.SecretRef' },
  {
    path: ['auth', 'jwt', 'kubernetesServiceAccountToken', 'serviceAccountRef'],
    esoName: 'Auth.Jwt.KubernetesServiceAccountToken.ServiceAccountRef',
  },
  { path: ['auth', 'ldap', 'secretRef'], esoName: 'Auth.Ldap.SecretRef' },
  { path: ['auth', 'userPass', 'secretRef'], esoName: 'Auth.UserPass.SecretRef' },
  { path: ['auth', 'cert', 'clientCert'], esoName: 'Auth.Cert.ClientCert' },
  { path: ['auth', 'cert', 'secretRef'], esoName: 'Auth.Cert.SecretRef' },
  { path: ['tls', 'certSecretRef'], esoName: 'ClientTLS.ClientCert' },
  { path: ['tls', 'keySecretRef'], esoName: 'ClientTLS.SecretRef' },
  { path: ['caProvider'], esoName: 'CAProvider' },
];

/**
 * Findings for a SecretStore or ClusterSecretStore. `namespace` is the SecretStore's namespace
 * (metadata.namespace, or the request's); undefined when unknown (offline validation), in which
 * case the same-namespace rule cannot be checked and is skipped.
 */
export function validateStore(
  kind: StoreKind,
  store: Obj,
  namespace: string | undefined,
  ctx?: AdmissionContext,
): Finding[] {
  const spec = obj(store.spec);
  if (!spec) return [];
  const findings: Finding[] = [
    ...checkConditions(kind, spec),
    ...checkRefreshInterval(spec.refreshInterval),
    ...checkProviders(spec),
  ];
  if (has(spec, 'retrySettings')) {
    findings.push(
      warn(
        'spec.retrySettings',
        'eso.store.ignored-field',
        'retrySettings is ignored by vaultgate: its Vault client retries with its own backoff and rate limits.',
      ),
    );
  }
  const vault = obj(obj(spec.provider)?.vault);
  if (vault) findings.push(...checkVault(kind, vault, namespace));
  const server = str(vault?.server);
  const syntax = server !== undefined ? vaultServerSyntaxProblem(server) : undefined;
  if (syntax)
    findings.push(
      deny('spec.provider.vault.server', 'eso.store.vault-server-syntax', `spec.provider.vault.server ${syntax}`),
    );
  const problem =
    server !== undefined && !syntax && ctx
      ? vaultServerProblem(server, kind === 'SecretStore' ? namespace : undefined, ctx)
      : undefined;
  if (problem) findings.push(deny('spec.provider.vault.server', 'eso.store.vault-server', problem));
  if (ctx) findings.push(...checkTokenAudiences(kind, vault, namespace, ctx));
  findings.push(...checkLdapPlugin(vault, ctx?.vaultTarget ?? DEFAULT_TARGET));
  return findings;
}

/**
 * Rule eso.store.ldap-plugin (a warning): OpenBao 2.7 no longer builds in the ldap auth method (openbao
 * PR #3882 moved it to openbao-plugins; `sys/auth/ldap` answers "plugin not found in the catalog: ldap"),
 * so such a store logs in only where the server's admin registered that plugin.
 */
function checkLdapPlugin(vault: Obj | undefined, target: VaultTarget): Finding[] {
  if (!has(obj(vault?.auth) ?? {}, 'ldap') || target.flavor !== 'openbao') return [];
  const [major = 0, minor = 0] = target.version.split('.').map(Number);
  if (major < 2 || (major === 2 && minor < 7)) return [];
  return [
    warn(
      `${VAULT}.auth.ldap`,
      'eso.store.ldap-plugin',
      `${targetName(target)} has no built-in ldap auth method (it moved to the external openbao-plugins): this store logs in only if the server's admin registered that plugin and enabled it at its path; HashiCorp Vault has it built in.`,
    ),
  ];
}

/** Rule eso.store.token-audience, where the ServiceAccount's namespace is known (a ClusterSecretStore's referent auth: at sync). */
function checkTokenAudiences(
  kind: StoreKind,
  vault: Obj | undefined,
  namespace: string | undefined,
  ctx: AdmissionContext,
): Finding[] {
  return tokenAsks(vault).flatMap((ask) => {
    const ns = kind === 'SecretStore' ? namespace : ask.namespace;
    const problem =
      ns === undefined
        ? undefined
        : tokenAudienceProblem(storeTokenAudiences(ask.audiences), ns, ctx.apiServerAudiences, ctx);
    return problem ? [deny(ask.field, TOKEN_AUDIENCE_RULE, problem)] : [];
  });
}

function checkConditions(kind: StoreKind, spec: Obj): Finding[] {
  const findings: Finding[] = [];
  const conditions = list(spec.conditions);
  if (kind === 'SecretStore' && conditions.length > 0) {
    findings.push(
      warn(
        'spec.conditions',
        'eso.store.conditions-ignored',
        'conditions only restrict which namespaces may use a ClusterSecretStore; a SecretStore serves its own namespace and ignores them.',
      ),
    );
  }
  conditions.forEach((condition, ci) => {
    list(obj(condition)?.namespaceRegexes).forEach((re, ri) => {
      if (typeof re !== 'string') return;
      const compiled = parseGoRegexp(re);
      if (!compiled.ok) {
        // ESO's wording (secretstore_validator.go validateConditions), indexes and all.
        findings.push(
          deny(
            `spec.conditions[${ci}].namespaceRegexes[${ri}]`,
            'eso.store.namespace-regex',
            `failed to compile ${ri}th namespace regex in ${ci}th condition: ${compiled.error}`,
          ),
        );
      }
    });
  });
  return findings;
}

/** Store refreshInterval: whole seconds, as ESO's int field (its CRD refuses "5m"); never negative. */
export function checkRefreshInterval(
  value: unknown,
  field = 'spec.refreshInterval',
  rule = 'eso.store.refresh-interval',
): Finding[] {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string')
    return [
      deny(
        field,
        rule,
        `refreshInterval is a whole number of seconds in a secret store (ESO's CRD refuses a string): write ${JSON.stringify(value)} as seconds, e.g. 300 for "5m".`,
      ),
    ];
  if (typeof value !== 'number') return [];
  if (!Number.isInteger(value))
    return [deny(field, rule, `refreshInterval ${value} must be a whole number of seconds.`)];
  return value < 0 ? [deny(field, rule, `refreshInterval must not be negative (got ${value}).`)] : [];
}

function checkProviders(spec: Obj): Finding[] {
  const provider = obj(spec.provider);
  if (!provider) return [];
  const names = Object.keys(provider).filter((k) => provider[k] !== null && provider[k] !== undefined);
  const findings: Finding[] = [];
  if (names.length !== 1) {
    findings.push(
      deny(
        'spec.provider',
        'eso.store.provider-count',
        `secret stores must only have exactly one backend specified, found ${names.length}.`,
      ),
    );
  }
  for (const name of names) {
    if (name !== 'vault') {
      findings.push(
        deny(
          child('spec.provider', name),
          'eso.store.provider-unsupported',
          `provider ${name} is not supported by vaultgate (only vault).`,
        ),
      );
    }
  }
  return findings;
}

function checkVault(kind: StoreKind, vault: Obj, namespace: string | undefined): Finding[] {
  const findings: Finding[] = [...checkAuth(kind, obj(vault.auth)), ...checkReferences(kind, vault, namespace)];
  findings.push(...vaultPathFindings(vault.path, `${VAULT}.path`, 'eso.store.vault-path'));
  const auth = obj(vault.auth);
  for (const method of ESO_AUTH_ORDER) {
    const m = obj(auth?.[method]);
    for (const key of ['path', 'mountPath'] as const)
      findings.push(...vaultPathFindings(m?.[key], `${VAULT}.auth.${method}.${key}`, 'eso.store.vault-path'));
  }
  const tls = obj(vault.tls);
  if (has(tls, 'certSecretRef') !== has(tls, 'keySecretRef')) {
    findings.push(
      deny(
        `${VAULT}.tls`,
        'eso.store.client-tls',
        'when provided, both ClientTLS.ClientCert and ClientTLS.SecretRef should be provided (set tls.certSecretRef and tls.keySecretRef together).',
      ),
    );
  }
  const cas = obj(vault.checkAndSet);
  if (cas?.required === true) {
    findings.push(
      vault.version === 'v1'
        ? deny(
            `${VAULT}.checkAndSet.required`,
            'eso.store.cas-kv1',
            'checkAndSet is not supported with Vault KV version v1.',
          )
        : warn(
            `${VAULT}.checkAndSet`,
            'eso.store.ignored-field',
            'checkAndSet only applies to PushSecret writes, which vaultgate does not serve; it has no effect.',
          ),
    );
  }
  const headers = obj(vault.headers);
  if (headers && Object.keys(headers).length > 0) {
    findings.push(
      deny(
        `${VAULT}.headers`,
        'eso.store.unsupported-field',
        'custom request headers are not supported by vaultgate; remove headers (vaultgate would otherwise send requests without them).',
      ),
    );
  }
  for (const flag of ['readYourWrites', 'forwardInconsistent'] as const) {
    if (vault[flag] === true) {
      findings.push(
        warn(
          child(VAULT, flag),
          'eso.store.ignored-field',
          `${flag} is ignored by vaultgate: it does not track Vault Enterprise replication state.`,
        ),
      );
    }
  }
  const ca = obj(vault.caProvider);
  if (kind === 'ClusterSecretStore' && ca && !has(ca, 'namespace') && !has(vault, 'caBundle')) {
    // ESO fails the store at reconcile with this error (runtime/esutils FetchCACertFromSource); refuse it up front.
    findings.push(
      deny(
        `${VAULT}.caProvider.namespace`,
        'eso.store.ca-provider-namespace',
        'missing namespace on caProvider secret: a ClusterSecretStore must say which namespace holds its CA.',
      ),
    );
  }
  return findings;
}

function checkAuth(kind: StoreKind, auth: Obj | undefined): Finding[] {
  const field = `${VAULT}.auth`;
  const set = ESO_AUTH_ORDER.filter((m) => has(auth, m));
  if (!auth || set.length === 0) {
    return [
      deny(
        field,
        'eso.store.auth-required',
        `an auth method is required by vaultgate (one of ${SUPPORTED_AUTH_METHODS.join(', ')}): it never reads Vault on a store's behalf with a token of its own.`,
      ),
    ];
  }
  const findings: Finding[] = [];
  for (const method of set) {
    if (!SUPPORTED_AUTH_METHODS.includes(method)) {
      findings.push(
        deny(
          child(field, method),
          'eso.store.auth-unsupported',
          `auth method ${method} is not supported by vaultgate (supported: ${SUPPORTED_AUTH_METHODS.join(', ')}).`,
        ),
      );
    }
  }
  if (set.length > 1) {
    // ESO's Go comment says "only one of", but neither its schema nor its webhook enforces it.
    findings.push(
      warn(
        field,
        'eso.store.multiple-auth',
        `several auth methods are set (${set.join(', ')}); like ESO, vaultgate logs in with the first of ${ESO_AUTH_ORDER.join(', ')} that is set, here ${set[0] ?? ''}, and ignores the rest.`,
      ),
    );
  }

  for (const check of CREDENTIAL_SOURCES) {
    const m = obj(auth[check.method]);
    if (m && !check.given(m)) findings.push(deny(`${field}.${check.method}`, check.rule, check.message));
  }
  findings.push(...checkSecretLogins(auth, field));
  const kube = obj(auth.kubernetes);
  if (kube) {
    if (has(kube, 'secretRef')) {
      findings.push(
        deny(
          `${field}.kubernetes.secretRef`,
          'eso.store.auth-unsupported',
          'a long-lived ServiceAccount token Secret is not supported by vaultgate; use serviceAccountRef, which vaultgate turns into a short-lived TokenRequest token.',
        ),
      );
    } else if (!has(kube, 'serviceAccountRef')) {
      // ESO would log in with its own pod's token. A tenant's store must not borrow the controller's identity.
      findings.push(
        kind === 'SecretStore'
          ? deny(
              `${field}.kubernetes.serviceAccountRef`,
              'eso.store.kubernetes-identity',
              "a SecretStore must name a ServiceAccount of its namespace in serviceAccountRef; vaultgate never logs in to Vault with its own identity on a namespace's behalf.",
            )
          : // Warned, not denied, as ESO admits it; but say what the controller then does
            // (controller/reconcilers/store-connector.ts refuses it), not what ESO would do.
            warn(
              `${field}.kubernetes.serviceAccountRef`,
              'eso.store.kubernetes-identity',
              "no serviceAccountRef: vaultgate never logs in to Vault with its own ServiceAccount on a store's behalf (ESO would use its own), so the controller refuses to connect this ClusterSecretStore (InvalidProviderConfig) and no ExternalSecret or PushSecret that uses it is synced until serviceAccountRef names a ServiceAccount.",
            ),
      );
    }
  }
  return findings;
}

/**
 * userPass, ldap and cert read their credentials from Secrets: each reference needs a name and a key
 * (ESO accepts neither missing and fails at every login), and cert needs both the certificate and its key.
 */
function checkSecretLogins(auth: Obj, field: string): Finding[] {
  const out: Finding[] = [];
  const needRef = (ref: Obj | undefined, refField: string, what: string): void => {
    if (!str(ref?.name) || !str(ref?.key))
      out.push(
        deny(
          refField,
          'eso.store.auth-secret',
          `${what}: name and key of the Secret holding it are required (ESO fails every login without them).`,
        ),
      );
  };
  for (const method of ['userPass', 'ldap'] as const) {
    const m = obj(auth[method]);
    if (!m) continue;
    if (!str(m.username)?.trim())
      out.push(deny(`${field}.${method}.username`, 'eso.store.auth-secret', 'username is required.'));
    needRef(obj(m.secretRef), `${field}.${method}.secretRef`, 'the password');
  }
  const cert = obj(auth.cert);
  if (cert) {
    needRef(obj(cert.clientCert), `${field}.cert.clientCert`, 'the client certificate');
    needRef(obj(cert.secretRef), `${field}.cert.secretRef`, "the client certificate's private key");
  }
  return out;
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
      findings.push(
        deny(
          `${VAULT}.${ref.path.join('.')}.namespace`,
          'eso.store.cross-namespace',
          `invalid ${ref.esoName}: namespace should either be empty or match the namespace of the SecretStore for a namespaced SecretStore (references in a namespaced store may not leave its namespace "${namespace}").`,
        ),
      );
    }
  }
  return findings;
}
