// The rotation planner: pure and level-triggered. Given what the cert Secret holds, what every webhook
// configuration's caBundle holds, and the time, it returns the steps that move the world one safe step
// towards "a valid leaf, signed by a healthy CA, trusted by every webhook configuration". Running it again
// on the same state returns the same steps; running it after they were applied returns fewer.
//
// The one ordering rule that prevents outages (ESO #2885 "x509: certificate signed by unknown authority"):
// a leaf from a new CA is issued only after that CA has been seen in every caBundle for a grace period
// (every apiserver's webhook informer has caught up). So a CA rotation is:
//   stage-ca (bundle = old + new, new CA signs from now on) → inject → record-published → grace →
//   issue-leaf (from the new CA) → replicas reload → retire grace → retire-cas (old CA dropped) → inject.
// Lookahead is a fraction of the lifetime, never a fixed interval (ESO #1249: a fixed 90-day lookahead
// broke certificates shorter than 90 days).
import { createHash } from 'node:crypto';
import { BACKDATE_MS, DEFAULT_CA_VALIDITY_DAYS, DEFAULT_LEAF_VALIDITY_DAYS } from './generate.ts';
import { bundleFacts, isIssuedBy, isValidAt, keyMatchesCert, tryCertFacts, type CertFacts } from './pem.ts';

const DAY_MS = 86_400_000;

/** The cert Secret's content, raw. Private keys are secret: nothing here may be logged. */
export interface StoredPki {
  /** Trust bundle: every CA currently trusted (PEM, concatenated). */
  caBundle?: string;
  /** Private key of the signing CA (one of the bundle's CAs). */
  caKey?: string;
  /** Serving leaf. */
  cert?: string;
  key?: string;
  /** The caBundle publication record (kept in a Secret annotation). */
  published?: PublishedRecord;
  /**
   * Epoch ms of an operator's request to rotate the CA now (key compromise, policy): honoured once by any
   * signing CA created before it, through the same safe sequence. Requests in the future wait.
   */
  rotateRequestedAt?: number;
}

/** "This exact trust bundle was seen in every webhook configuration since `at`." */
export interface PublishedRecord {
  bundleId: string;
  /** Epoch ms. */
  at: number;
}

export type WebhookConfigKind = 'MutatingWebhookConfiguration' | 'ValidatingWebhookConfiguration';

/** One webhook configuration as the planner needs it: the CA bundle of each of its webhooks. */
export interface WebhookTarget {
  kind: WebhookConfigKind;
  name: string;
  /** Decoded caBundle (PEM) per webhook entry; '' when absent. */
  caBundles: string[];
}

export interface RotationPolicy {
  /** SANs the leaf must carry. */
  dnsNames: string[];
  ipAddresses: string[];
  leafValidityDays: number;
  caValidityDays: number;
  /** Renew the leaf once this fraction of its lifetime has passed (cert-manager's default is 2/3 too). */
  leafRenewFraction: number;
  /** Rotate the CA at this fraction of its lifetime, or `caRenewBeforeMs` before expiry, whichever is first. */
  caRenewFraction: number;
  caRenewBeforeMs: number;
  /** How long a new trust bundle must have been in every caBundle before a leaf from a new CA is served. */
  publishGraceMs: number;
  /** How long after a leaf from the signer was issued the other CAs stay trusted (replicas reload meanwhile). */
  retireGraceMs: number;
}

export const DEFAULT_POLICY: Omit<RotationPolicy, 'dnsNames' | 'ipAddresses'> = {
  leafValidityDays: DEFAULT_LEAF_VALIDITY_DAYS,
  caValidityDays: DEFAULT_CA_VALIDITY_DAYS,
  leafRenewFraction: 2 / 3,
  caRenewFraction: 0.8,
  caRenewBeforeMs: 365 * DAY_MS,
  // The apiserver's webhook configuration informer usually catches up within a second; a minute covers
  // every apiserver of an HA control plane with margin.
  publishGraceMs: 60_000,
  // kubelet refreshes Secret volumes within ~1 min (sync period + cache TTL) and the reloader polls
  // every few seconds: 15 minutes covers a slow node with margin.
  retireGraceMs: 15 * 60_000,
};

export type Action =
  /** No usable CA and no usable leaf: a new CA and leaf (the bundle keeps CAs still trusted somewhere). */
  | { type: 'create'; reason: string; adoptCAs: string[] }
  /** A new CA joins the bundle and signs from now on; the current leaf keeps serving. */
  | { type: 'stage-ca'; reason: string }
  /** A new leaf from the signing CA. */
  | { type: 'issue-leaf'; reason: string }
  /** Drop these CAs (by fingerprint) from the trust bundle. */
  | { type: 'retire-cas'; fingerprints: string[]; reason: string }
  /** Remember that the current bundle is in every webhook configuration. */
  | { type: 'record-published'; bundleId: string }
  /** Make this configuration's every caBundle equal the Secret's trust bundle (after the steps above). */
  | { type: 'inject'; kind: WebhookConfigKind; name: string; reason: string };

export interface Plan {
  actions: Action[];
  /** Why nothing (more) happens yet, for logs. */
  waiting?: string;
  /** Epoch ms of the next moment a step becomes due (the keeper need not look before). */
  nextAt?: number;
}

/** Stable id of a set of certificates (order and duplicates ignored). Fingerprints only: not secret. */
export function bundleId(certs: Pick<CertFacts, 'fingerprint'>[]): string {
  const fps = [...new Set(certs.map((c) => c.fingerprint))].sort();
  return createHash('sha256').update(fps.join(',')).digest('hex').slice(0, 16);
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

/** What the planner concluded about the stored PKI; exported for `certs inspect`-like displays and tests. */
export interface Observed {
  bundle: CertFacts[];
  signer?: CertFacts;
  leaf?: CertFacts;
  /** The leaf can serve now: key matches, valid, issued by a trusted CA, carries every required SAN. */
  leafUsable: boolean;
  /** Why the leaf is not usable (for the action reason). */
  leafProblem?: string;
}

export function observe(stored: StoredPki | undefined, policy: RotationPolicy, now: number): Observed {
  const seen = new Set<string>();
  const bundle = bundleFacts(stored?.caBundle).filter((c) => !seen.has(c.fingerprint) && !!seen.add(c.fingerprint));
  const signer = bundle.find((c) => c.isCA && isValidAt(c, now) && keyMatchesCert(stored?.caKey, c));
  const leaf = tryCertFacts(stored?.cert);
  const leafProblem = !leaf
    ? 'no serving certificate'
    : !keyMatchesCert(stored?.key, leaf)
      ? 'serving key does not match the certificate'
      : !isValidAt(leaf, now)
        ? now >= leaf.notAfter
          ? 'serving certificate expired'
          : 'serving certificate not yet valid'
        : !bundle.some((ca) => ca.isCA && isValidAt(ca, now) && isIssuedBy(leaf, ca))
          ? 'serving certificate not issued by a trusted CA'
          : missingSans(leaf, policy)
            ? `serving certificate lacks SANs ${missingSans(leaf, policy)}`
            : undefined;
  return { bundle, signer, leaf, leafUsable: !leafProblem, leafProblem };
}

function missingSans(leaf: CertFacts, policy: RotationPolicy): string | undefined {
  const missing = [
    ...policy.dnsNames.filter((n) => !leaf.dnsNames.includes(n)),
    ...policy.ipAddresses.filter((ip) => !leaf.ipAddresses.includes(ip.toLowerCase())),
  ];
  return missing.length ? missing.join(', ') : undefined;
}

/**
 * A request applies to a CA created before it. Creation = notBefore + BACKDATE_MS, to the second (X.509
 * times carry no milliseconds), so the request is compared at second precision too: the CA staged in
 * answer to it is never "older" than it, and the request is honoured exactly once.
 */
function rotationRequested(signer: CertFacts, requestedAt: number | undefined, now: number): boolean {
  if (requestedAt === undefined || requestedAt > now) return false;
  return signer.notBefore + BACKDATE_MS < Math.floor(requestedAt / 1000) * 1000;
}

function caRenewAt(ca: CertFacts, policy: RotationPolicy): number {
  const byFraction = ca.notBefore + (ca.notAfter - ca.notBefore) * policy.caRenewFraction;
  return Math.min(byFraction, ca.notAfter - policy.caRenewBeforeMs);
}

function leafRenewAt(leaf: CertFacts, policy: RotationPolicy): number {
  return leaf.notBefore + (leaf.notAfter - leaf.notBefore) * policy.leafRenewFraction;
}

function fingerprintsOf(pem: string): Set<string> {
  return new Set(bundleFacts(pem).map((c) => c.fingerprint));
}

/** CAs present in webhook configurations now (still valid): kept trusted when starting over. */
function publishedCAs(targets: WebhookTarget[], now: number): string[] {
  const byFp = new Map<string, string>();
  for (const t of targets)
    for (const pem of t.caBundles) {
      for (const c of bundleFacts(pem)) if (c.isCA && isValidAt(c, now)) byFp.set(c.fingerprint, c.pem);
    }
  return [...byFp.values()];
}

export function plan(
  stored: StoredPki | undefined,
  targets: WebhookTarget[],
  policy: RotationPolicy,
  now: number,
): Plan {
  const o = observe(stored, policy, now);
  const actions: Action[] = [];
  const due: number[] = [];
  const injectAll = (reason: string): void => {
    for (const t of targets) actions.push({ type: 'inject', kind: t.kind, name: t.name, reason });
  };

  // 1. No CA that can sign.
  if (!o.signer) {
    if (o.leafUsable) {
      actions.push({
        type: 'stage-ca',
        reason: o.bundle.length ? 'no usable signing CA (expired, or its key is missing)' : 'no trust bundle',
      });
    } else {
      const keep = [
        ...o.bundle.filter((c) => c.isCA && isValidAt(c, now)).map((c) => c.pem),
        ...publishedCAs(targets, now),
      ];
      actions.push({
        type: 'create',
        reason: `${stored ? o.leafProblem : 'no certificate Secret'}; no usable signing CA`,
        adoptCAs: [...new Set(keep)],
      });
    }
    injectAll('trust bundle changed');
    return { actions };
  }

  // 2. The signing CA nears its end: a successor joins the bundle now, years ahead.
  const caDue = caRenewAt(o.signer, policy);
  const requested = rotationRequested(o.signer, stored?.rotateRequestedAt, now);
  if (now >= caDue || requested) {
    actions.push({
      type: 'stage-ca',
      reason: requested
        ? `CA rotation requested at ${new Date(stored!.rotateRequestedAt!).toISOString()}`
        : `signing CA ${o.signer.subject} reached its renewal point (expires ${new Date(o.signer.notAfter).toISOString()})`,
    });
    if (!o.leafUsable) actions.push({ type: 'issue-leaf', reason: o.leafProblem ?? 'unusable' });
    injectAll('trust bundle changed');
    return { actions };
  }
  due.push(caDue);

  const bundleFps = new Set(o.bundle.map((c) => c.fingerprint));
  const id = bundleId(o.bundle);
  // A configuration with no webhooks trusts nothing and blocks nothing.
  const everywhere = targets.every((t) => t.caBundles.every((pem) => sameSet(fingerprintsOf(pem), bundleFps)));
  const published = stored?.published?.bundleId === id ? stored.published : undefined;
  if (everywhere && !published) actions.push({ type: 'record-published', bundleId: id });
  const publishedAt = published?.at ?? (everywhere ? now : undefined);
  const signerTrusted = publishedAt !== undefined && now >= publishedAt + policy.publishGraceMs;

  // 3. The leaf: replace at once when it cannot serve (nothing to lose), otherwise renew only from a CA
  //    every apiserver already trusts.
  let waiting: string | undefined;
  let leafFromSigner = o.leafUsable && !!o.leaf && isIssuedBy(o.leaf, o.signer);
  if (!o.leafUsable) {
    actions.push({ type: 'issue-leaf', reason: o.leafProblem ?? 'unusable' });
    leafFromSigner = false;
  } else {
    const leaf = o.leaf!;
    const renewAt = leafRenewAt(leaf, policy);
    const sansChanged =
      leaf.dnsNames.length !== policy.dnsNames.length || leaf.ipAddresses.length !== policy.ipAddresses.length;
    const reason = !leafFromSigner
      ? 'serving certificate is from a CA that no longer signs'
      : now >= renewAt
        ? `serving certificate reached ${Math.round(policy.leafRenewFraction * 100)}% of its lifetime`
        : sansChanged
          ? 'serving certificate carries SANs no longer wanted'
          : undefined;
    if (!reason) due.push(renewAt);
    else if (signerTrusted) {
      actions.push({ type: 'issue-leaf', reason });
      leafFromSigner = false; // a brand-new leaf: the retire grace starts again
    } else {
      waiting = `${reason}; waiting until the trust bundle has been in every webhook configuration for ${policy.publishGraceMs / 1000}s`;
      if (publishedAt !== undefined) due.push(publishedAt + policy.publishGraceMs);
    }
  }

  // 4. Retire the other CAs: expired ones at once; the rest once the signer's leaf has been out long
  //    enough for every replica to have reloaded it.
  const others = o.bundle.filter((c) => c.fingerprint !== o.signer!.fingerprint);
  const retireAt = leafFromSigner ? o.leaf!.notBefore + BACKDATE_MS + policy.retireGraceMs : Infinity;
  const retire = others.filter((c) => !c.isCA || now >= c.notAfter || now >= retireAt);
  if (retire.length) {
    actions.push({
      type: 'retire-cas',
      fingerprints: retire.map((c) => c.fingerprint),
      reason:
        now >= retireAt
          ? 'the serving certificate from the new CA has been out for the retire grace'
          : 'expired or not a CA',
    });
  } else if (others.length && retireAt !== Infinity) due.push(retireAt);
  for (const c of others) if (!retire.includes(c)) due.push(c.notAfter);

  // 5. caBundles: every configuration carries exactly the trust bundle.
  if (retire.length) {
    // the bundle is about to change: recording the old one's publication would be stale at once
    const i = actions.findIndex((a) => a.type === 'record-published');
    if (i >= 0) actions.splice(i, 1);
    injectAll('trust bundle changed');
  } else {
    for (const t of targets) {
      const problem = t.caBundles.some((pem) => pem === '')
        ? 'caBundle missing'
        : t.caBundles.some((pem) => !sameSet(fingerprintsOf(pem), bundleFps))
          ? 'caBundle differs from the trust bundle'
          : undefined;
      if (problem) actions.push({ type: 'inject', kind: t.kind, name: t.name, reason: problem });
    }
  }

  const future = due.filter((t) => t > now && Number.isFinite(t));
  return { actions, waiting, nextAt: future.length ? Math.min(...future) : undefined };
}

export function rotationPolicy(opts: Pick<RotationPolicy, 'dnsNames'> & Partial<RotationPolicy>): RotationPolicy {
  return { ...DEFAULT_POLICY, ipAddresses: [], ...opts };
}
