// Which audiences a store's ServiceAccount token may carry (rule eso.store.token-audience). The
// controller mints a TokenRequest for the store's ServiceAccount and sends it to the store's Vault
// server. A token whose audience is one of the apiserver's own (its --api-audiences; by default the
// service-account issuer) authenticates *to Kubernetes* as that ServiceAccount: whoever receives it can
// act on the cluster with the account's rights. So a store's token defaults to the audience "vault" (ESO
// defaults to the apiserver's), and naming an apiserver audience needs a cluster admin's consent: an
// enforce VaultGuardrail selecting the ServiceAccount's namespace with spec.allowApiServerAudiences.
// The apiserver's audiences are discovered from the cluster (kube/api-audiences.ts); where they are
// not known (offline validation, a webhook outside a pod) the rule cannot be checked and is skipped,
// and the controller checks it again before it mints any token (controller/reconcilers/store-connector.ts).
import type { AdmissionContext } from '../../admission/context.ts';
import { matchingGuardrails } from '../guardrails.ts';
import { type Obj, obj, str } from './access.ts';

/** The audience of a store's token when the store names none (ESO's default for jwt auth, too). */
export const DEFAULT_STORE_AUDIENCE = 'vault';

export const TOKEN_AUDIENCE_RULE = 'eso.store.token-audience';

/** The audiences a token is minted with: the store's, or ["vault"] when it names none. */
export function storeTokenAudiences(requested: readonly string[] | undefined): string[] {
  const given = (requested ?? []).filter((a) => a !== '');
  return given.length > 0 ? [...given] : [DEFAULT_STORE_AUDIENCE];
}

/** A ServiceAccount token a store asks for: where in the spec, for which account, with which audiences. */
export interface TokenAsk {
  field: string;
  /** The account's namespace when the spec names one. */
  namespace: string | undefined;
  name: string | undefined;
  audiences: string[] | undefined;
}

/** The ServiceAccount tokens a store's spec.provider.vault asks the controller to mint (0 or 1). */
export function tokenAsks(vault: Obj | undefined): TokenAsk[] {
  const auth = obj(vault?.auth);
  const strings = (v: unknown): string[] | undefined =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
  const kube = obj(obj(auth?.kubernetes)?.serviceAccountRef);
  if (kube) {
    return [
      {
        field: 'spec.provider.vault.auth.kubernetes.serviceAccountRef.audiences',
        namespace: str(kube.namespace),
        name: str(kube.name),
        audiences: strings(kube.audiences),
      },
    ];
  }
  const sat = obj(obj(auth?.jwt)?.kubernetesServiceAccountToken);
  const ref = obj(sat?.serviceAccountRef);
  if (sat && ref) {
    // ESO: the ServiceAccountRef's audiences win over the token's own list.
    const own = strings(ref.audiences);
    return [
      {
        field: own?.length
          ? 'spec.provider.vault.auth.jwt.kubernetesServiceAccountToken.serviceAccountRef.audiences'
          : 'spec.provider.vault.auth.jwt.kubernetesServiceAccountToken.audiences',
        namespace: str(ref.namespace),
        name: str(ref.name),
        audiences: own?.length ? own : strings(sat.audiences),
      },
    ];
  }
  return [];
}

/** Whether an enforce guardrail selecting `namespace` lets its ServiceAccounts' tokens carry apiserver audiences. */
export function apiServerAudiencesAllowed(namespace: string, ctx: AdmissionContext): string | undefined {
  return matchingGuardrails(namespace, ctx).find((g) => g.mode === 'enforce' && g.allowApiServerAudiences)?.name;
}

/**
 * Why a token for a ServiceAccount of `namespace` may not carry `audiences` (after defaulting), or
 * undefined when it may. `apiServer` are the apiserver's own audiences; undefined = unknown (unchecked).
 */
export function tokenAudienceProblem(
  audiences: readonly string[],
  namespace: string,
  apiServer: readonly string[] | undefined,
  ctx: AdmissionContext,
): string | undefined {
  if (!apiServer?.length) return undefined;
  const hits = audiences.filter((a) => apiServer.includes(a));
  if (hits.length === 0 || apiServerAudiencesAllowed(namespace, ctx)) return undefined;
  return `audience ${hits.map((a) => JSON.stringify(a)).join(', ')} is the Kubernetes apiserver's own: a token with it works against the cluster as the ServiceAccount, and the controller would hand it to the store's Vault server. Use an audience naming Vault (the default when none is given: "${DEFAULT_STORE_AUDIENCE}", which the Vault role's audience must match); a cluster admin allows apiserver audiences in namespace "${namespace}" with an enforce VaultGuardrail's spec.allowApiServerAudiences`;
}
