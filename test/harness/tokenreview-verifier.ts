// A SaTokenVerifier for the Vault simulator that does what Vault's kubernetes auth does on login
// (hashicorp/vault-plugin-auth-kubernetes, path_login.go + token_review.go): read the namespace and name
// from the JWT's claims, POST a TokenReview to the real kube-apiserver (bearer: the configured
// token_reviewer_jwt, else the client's own JWT), require `authenticated` and a
// `system:serviceaccount:<ns>:<name>` user, and require the reviewed identity to equal the claimed one
// ("JWT names did not match TokenReview's"). Every failure is a plain refusal, as Vault maps any lookup
// error to permission denied. The JWT is sent to the apiserver only; it is never logged or put in an error.
import { request } from 'node:https';
import type { SaTokenVerifier, ServiceAccountIdentity } from '../sim/vault.ts';

export interface TokenReviewVerifierOptions {
  /** kube-apiserver URL, e.g. https://127.0.0.1:6443 (Vault's `kubernetes_host`). */
  server: string;
  /** CA bundle the apiserver's serving certificate chains to (`kubernetes_ca_cert`). */
  caPem: string;
  /** Bearer for the TokenReview (`token_reviewer_jwt`; needs system:auth-delegator). Omitted → the login JWT itself. */
  reviewerJwt?: string | (() => string | Promise<string>);
  timeoutMs?: number;
  /** Called with each review's outcome (never with the token), for test assertions. */
  onReview?: (outcome: TokenReviewOutcome) => void;
}

export type TokenReviewOutcome =
  | { ok: true; identity: ServiceAccountIdentity; audiences: readonly string[] }
  | { ok: false; reason: string; audiences: readonly string[] };

interface TokenReviewStatus {
  authenticated?: boolean;
  error?: string;
  user?: { username?: string; uid?: string };
}

/** Namespace and name the JWT claims (bound token `kubernetes.io` claims, or the legacy secret-token claims); unverified. */
export function claimedServiceAccount(jwt: string): { namespace: string; name: string } | undefined {
  const payload = jwt.split('.')[1];
  if (!payload) return undefined;
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const bound = claims['kubernetes.io'] as { namespace?: unknown; serviceaccount?: { name?: unknown } } | undefined;
  const namespace = bound?.namespace ?? claims['kubernetes.io/serviceaccount/namespace'];
  const name = bound?.serviceaccount?.name ?? claims['kubernetes.io/serviceaccount/service-account.name'];
  return typeof namespace === 'string' && typeof name === 'string' ? { namespace, name } : undefined;
}

/** Splits `system:serviceaccount:<ns>:<name>`; undefined for any other user. */
export function serviceAccountFromUsername(
  username: string | undefined,
): { namespace: string; name: string } | undefined {
  const parts = (username ?? '').split(':');
  if (parts.length !== 4 || parts[0] !== 'system' || parts[1] !== 'serviceaccount' || !parts[2] || !parts[3])
    return undefined;
  return { namespace: parts[2], name: parts[3] };
}

function postTokenReview(
  opts: TokenReviewVerifierOptions,
  bearer: string,
  jwt: string,
  audiences: readonly string[],
): Promise<{ status: number; body: unknown }> {
  const payload = JSON.stringify({
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenReview',
    spec: { token: jwt, ...(audiences.length > 0 ? { audiences } : {}) },
  });
  const url = new URL('/apis/authentication.k8s.io/v1/tokenreviews', opts.server);
  const timeoutMs = opts.timeoutMs ?? 10_000;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        ca: opts.caPem,
        agent: false, // no pooled sockets keeping the test process alive
        timeout: timeoutMs,
        headers: {
          authorization: `Bearer ${bearer}`,
          accept: 'application/json',
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`TokenReview: no answer in ${timeoutMs} ms`)));
    req.on('error', (err) => reject(new Error(`TokenReview request failed: ${err.message}`)));
    req.end(payload);
  });
}

/** The verifier to pass as `VaultSim.start({ verifier })`. */
export function tokenReviewVerifier(opts: TokenReviewVerifierOptions): SaTokenVerifier {
  const report = (o: TokenReviewOutcome): void => opts.onReview?.(o);
  return async (jwt, audiences) => {
    const refuse = (reason: string): undefined => {
      report({ ok: false, reason, audiences });
      return undefined;
    };
    const claimed = claimedServiceAccount(jwt);
    if (!claimed) return refuse('the JWT carries no service account claims');
    const configured = typeof opts.reviewerJwt === 'function' ? await opts.reviewerJwt() : opts.reviewerJwt;
    let res: { status: number; body: unknown };
    try {
      res = await postTokenReview(opts, configured || jwt, jwt, audiences);
    } catch (err) {
      return refuse((err as Error).message); // apiserver unreachable: Vault refuses the login too
    }
    if (res.status === 401)
      return refuse('service account unauthorized; this could mean it has been deleted or recreated with a new token');
    if (res.status < 200 || res.status > 206) return refuse(`TokenReview answered HTTP ${res.status}`);
    const status = (res.body as { status?: TokenReviewStatus } | undefined)?.status ?? {};
    if (status.error) return refuse(`lookup failed: ${status.error.replaceAll(jwt, '[jwt]')}`);
    if (!status.authenticated) return refuse('lookup failed: service account jwt not valid');
    const reviewed = serviceAccountFromUsername(status.user?.username);
    if (!reviewed) return refuse('lookup failed: username returned is not a service account');
    if (reviewed.namespace !== claimed.namespace || reviewed.name !== claimed.name)
      return refuse("JWT names did not match TokenReview's");
    const identity: ServiceAccountIdentity = { ...reviewed, uid: status.user?.uid ?? '' };
    report({ ok: true, identity, audiences });
    return identity;
  };
}
