// The Kubernetes apiserver's own token audiences (its --api-audiences; the service-account issuer when
// that flag is unset). A ServiceAccount token carrying one of them authenticates to the apiserver, so
// vaultgate refuses to mint one for a store and hand it to a Vault server (webhook/rules/eso/token-audiences.ts).
// The apiserver says which they are: a TokenRequest that names no audience gets exactly these, in the
// token's `aud` claim. The token minted for that purpose is read for its claims and dropped at once:
// never sent anywhere, never logged.
import type { KubeClient } from './kube-client.ts';
import { ReconcileError } from './reconcile-error.ts';

/** The `aud` claim of a JWT (a string or a list), without verifying it; [] when unreadable. */
export function audiencesOf(jwt: string): string[] {
  const payload = jwt.split('.')[1];
  if (!payload) return [];
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { aud?: unknown };
    const aud = claims.aud;
    if (typeof aud === 'string') return [aud];
    return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
  } catch {
    return [];
  }
}

/** A ServiceAccount the discovery may mint a short-lived token for (the one a store is about to use). */
export interface AudienceProbe {
  namespace: string;
  name: string;
}

/**
 * The apiserver's audiences, discovered once with a TokenRequest for the first ServiceAccount asked
 * about and kept for `ttlMs` (default 1 h: an apiserver reconfiguration is picked up within that). A
 * failed discovery is not cached, and its error goes to the caller: no token is minted for a store
 * while the audiences it must avoid are unknown.
 */
export class ApiServerAudiences {
  private known?: { audiences: string[]; at: number };
  private pending?: Promise<string[]>;

  constructor(private readonly opts: { client: Pick<KubeClient, 'createToken'>; ttlMs?: number; now?: () => number }) {}

  async get(probe: AudienceProbe): Promise<string[]> {
    const now = this.opts.now ?? Date.now;
    if (this.known && now() - this.known.at < (this.opts.ttlMs ?? 3_600_000)) return this.known.audiences;
    this.pending ??= (async () => {
      try {
        // 600 s: the shortest lifetime every apiserver accepts (its minimum for TokenRequest).
        const issued = await this.opts.client.createToken(probe.namespace, probe.name, { expirationSeconds: 600 });
        const audiences = audiencesOf(issued.token);
        if (audiences.length === 0)
          throw new ReconcileError(
            'ValidationFailed',
            'the apiserver issued a ServiceAccount token without an audience; cannot tell its own audiences',
          );
        this.known = { audiences, at: now() };
        return audiences;
      } finally {
        this.pending = undefined;
      }
    })();
    return this.pending;
  }
}
