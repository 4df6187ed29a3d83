// Fake Kubernetes service-account JWTs for the Vault simulator: ES256 (asymmetric, as the apiserver's
// RS256/ES256 tokens; OpenBao's kubernetes auth refuses HS256) with a per-simulator key pair, claims
// shaped like the apiserver's bound tokens (`kubernetes.io.namespace`, `kubernetes.io.serviceaccount`).
// The verifier behaves like a TokenReview with `audiences`: the token must be signed by us, unexpired,
// and carry one of the requested audiences; with no audiences requested, the apiserver's default
// audience (real Vault sends none when the role has no `audience`).
import { generateKeyPairSync, randomUUID, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';

export interface ServiceAccountIdentity {
  namespace: string;
  name: string;
  uid: string;
}

/** TokenReview stand-in: the identity when `jwt` is valid for one of `audiences`, else undefined. */
export type SaTokenVerifier = (
  jwt: string,
  audiences: readonly string[],
) => Promise<ServiceAccountIdentity | undefined>;

/** Claims for jwt-auth roles (bound_audiences, bound_subject, bound_claims). */
export type JwtClaims = Record<string, unknown> & { aud?: string | string[]; sub?: string; exp?: number };
export type JwtVerifier = (jwt: string) => Promise<JwtClaims | undefined>;

/** The kube-apiserver's default API audience (its --api-audiences default, the issuer URL). */
export const DEFAULT_K8S_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

export class FakeJwtIssuer {
  private readonly keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  private readonly uids = new Map<string, string>();
  constructor(private readonly now: () => number = Date.now) {}

  /** Mint a service-account token for `namespace/name`. */
  serviceAccountToken(
    namespace: string,
    name: string,
    opts: { audiences?: string[]; expiresInSeconds?: number } = {},
  ): string {
    const key = `${namespace}/${name}`;
    let uid = this.uids.get(key);
    if (!uid) this.uids.set(key, (uid = randomUUID()));
    const iat = Math.floor(this.now() / 1000);
    return this.sign({
      iss: 'https://kubernetes.default.svc.cluster.local',
      aud: opts.audiences ?? [DEFAULT_K8S_AUDIENCE],
      sub: `system:serviceaccount:${namespace}:${name}`,
      iat,
      nbf: iat,
      exp: iat + (opts.expiresInSeconds ?? 3600),
      'kubernetes.io': { namespace, serviceaccount: { name, uid } },
    });
  }

  /** Mint an arbitrary JWT (for jwt-auth roles). */
  sign(claims: JwtClaims): string {
    const head = `${b64({ alg: 'ES256', typ: 'JWT' })}.${b64(claims)}`;
    return `${head}.${cryptoSign('sha256', Buffer.from(head), { key: this.keys.privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
  }

  /** Signature + expiry check; the claims, or undefined. */
  verify: JwtVerifier = (jwt) => {
    const [h, p, s] = jwt.split('.');
    if (!h || !p || !s) return Promise.resolve(undefined);
    let claims: JwtClaims;
    try {
      // Only ES256 (what we sign with); an HS256 token is refused outright, as OpenBao does.
      if ((JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as { alg?: unknown }).alg !== 'ES256')
        return Promise.resolve(undefined);
    } catch {
      return Promise.resolve(undefined);
    }
    if (
      !cryptoVerify(
        'sha256',
        Buffer.from(`${h}.${p}`),
        { key: this.keys.publicKey, dsaEncoding: 'ieee-p1363' },
        Buffer.from(s, 'base64url'),
      )
    )
      return Promise.resolve(undefined);
    try {
      claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as JwtClaims;
    } catch {
      return Promise.resolve(undefined);
    }
    if (typeof claims.exp === 'number' && claims.exp * 1000 <= this.now()) return Promise.resolve(undefined);
    return Promise.resolve(claims);
  };

  /** TokenReview-like verification of a service-account token. */
  verifyServiceAccount: SaTokenVerifier = async (jwt, audiences) => {
    const claims = await this.verify(jwt);
    if (!claims) return undefined;
    const aud = Array.isArray(claims.aud) ? claims.aud : claims.aud ? [claims.aud] : [];
    const wanted = audiences.length > 0 ? audiences : [DEFAULT_K8S_AUDIENCE];
    if (!wanted.some((a) => aud.includes(a))) return undefined;
    const k = claims['kubernetes.io'] as
      { namespace?: unknown; serviceaccount?: { name?: unknown; uid?: unknown } } | undefined;
    if (typeof k?.namespace !== 'string' || typeof k.serviceaccount?.name !== 'string') return undefined;
    return {
      namespace: k.namespace,
      name: k.serviceaccount.name,
      uid: typeof k.serviceaccount.uid === 'string' ? k.serviceaccount.uid : '',
    };
  };
}
