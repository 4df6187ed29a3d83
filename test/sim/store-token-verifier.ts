// Vault's kubernetes auth against the in-process apiserver (KubeStore): the Vault simulator accepts exactly
// the ServiceAccount tokens the store issued, for the audiences Vault asks for (a TokenReview of the store).
import type { KubeStore } from './kube-store.ts';
import type { SaTokenVerifier } from './vault-jwt.ts';

/** The verifier to pass as `VaultSim.start({ verifier })`. */
export function storeTokenVerifier(store: KubeStore): SaTokenVerifier {
  return (jwt, audiences) => {
    const r = store.reviewToken(jwt, audiences.length ? [...audiences] : undefined);
    const ref = r.claims?.['kubernetes.io'];
    return Promise.resolve(
      r.authenticated && ref
        ? { namespace: ref.namespace, name: ref.serviceaccount.name, uid: ref.serviceaccount.uid }
        : undefined,
    );
  };
}
