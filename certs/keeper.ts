// The cert keeper: the loop the elected controller leader runs. Each pass reads the Secret and the
// labelled webhook configurations, asks the pure planner (rotation.ts) for the next steps, writes the
// Secret once (optimistic concurrency), then injects caBundles. Level-triggered: a pass that finds
// nothing to do writes nothing; a failed or interrupted pass is simply redone by the next one.
import { Counter, Gauge, type Registry } from 'prom-client';
import { silentLogger, type Logger } from '../observability/log.ts';
import { systemClock, type Clock } from '../kube/clock.ts';
import { isConflict, KubeApiError } from '../kube/errors.ts';
import { injectCaBundle, INJECT_SELECTOR, webhookTargets } from './ca-injector.ts';
import type { CertKubeClient } from './kube-adapter.ts';
import { generateCA, issueServingCert, serviceDnsNames, splitSans } from './generate.ts';
import { bundleFacts, joinPemBundle, keyMatchesCert } from './pem.ts';
import { plan, rotationPolicy, type Action, type RotationPolicy, type StoredPki } from './rotation.ts';
import { readStoredPki, writeStoredPki } from './secret-store.ts';

export interface CertKeeperOptions {
  client: CertKubeClient;
  /** Namespace and name of the cert Secret (the chart's `<release>-webhook-tls`). */
  namespace: string;
  secretName: string;
  /** The webhook Service: its DNS forms become the leaf's SANs. */
  service: string;
  clusterDomain?: string;
  /** More DNS names / IP addresses for the leaf. */
  extraSans?: string[];
  /** Which webhook configurations to inject into (default `vaultgate.io/inject-ca-bundle=true`). */
  webhookSelector?: string;
  policy?: Partial<Omit<RotationPolicy, 'dnsNames' | 'ipAddresses'>>;
  /** Upper bound between passes (default 60 s); passes come sooner when a step falls due. */
  intervalMs?: number;
  /** Delay before the follow-up pass after one that acted (default 2 s). */
  settleMs?: number;
  clock?: Clock;
  log?: Logger;
  registry?: Registry;
}

export interface KeeperPass {
  actions: Action[];
  waiting?: string;
  nextAt?: number;
}

interface KeeperMetrics {
  actions: Counter<'action'>;
  errors: Counter;
  caExpiry: Gauge;
  leafExpiry: Gauge;
}

function keeperMetrics(registry: Registry): KeeperMetrics {
  return {
    actions: new Counter({
      name: 'vaultgate_cert_keeper_actions_total',
      help: 'Certificate keeper steps taken (create, stage-ca, issue-leaf, retire-cas, record-published, inject).',
      labelNames: ['action'] as const,
      registers: [registry],
    }),
    errors: new Counter({
      name: 'vaultgate_cert_keeper_errors_total',
      help: 'Certificate keeper passes that failed (retried next pass).',
      registers: [registry],
    }),
    caExpiry: new Gauge({
      name: 'vaultgate_cert_keeper_ca_expiry_timestamp_seconds',
      help: 'notAfter of the signing CA in the cert Secret.',
      registers: [registry],
    }),
    leafExpiry: new Gauge({
      name: 'vaultgate_cert_keeper_leaf_expiry_timestamp_seconds',
      help: 'notAfter of the serving certificate in the cert Secret.',
      registers: [registry],
    }),
  };
}

/** Log fields of an action: types, reasons, fingerprints (CA PEMs are summarised, keys never appear). */
function describeAction(a: Action): Record<string, unknown> {
  if (a.type === 'create') return { action: a.type, reason: a.reason, adoptedCAs: a.adoptCAs.length };
  const { type, ...rest } = a;
  return { action: type, ...rest };
}

/** KubeApiError messages carry no bodies or headers (errors.ts); crypto errors carry no key material. */
function safeError(err: unknown): Record<string, unknown> {
  if (err instanceof KubeApiError) return err.toJSON();
  return { message: err instanceof Error ? err.message.slice(0, 300) : String(err).slice(0, 300) };
}

function signerOf(stored: StoredPki): { cert: string; key: string } {
  const signer = bundleFacts(stored.caBundle).find((c) => keyMatchesCert(stored.caKey, c));
  if (!signer || !stored.caKey) throw new Error('internal: no signing CA after planning');
  return { cert: signer.pem, key: stored.caKey };
}

export class CertKeeper {
  private readonly policy: RotationPolicy;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly metrics?: KeeperMetrics;
  private lastConfigCount = -1;

  constructor(private readonly opts: CertKeeperOptions) {
    const { dnsNames, ipAddresses } = splitSans([...serviceDnsNames(opts), ...(opts.extraSans ?? [])]);
    this.policy = rotationPolicy({ ...opts.policy, dnsNames, ipAddresses });
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger;
    this.metrics = opts.registry ? keeperMetrics(opts.registry) : undefined;
  }

  /** One level-triggered pass. Rejects on API errors (the caller retries); a 409 just means "redo". */
  async reconcileOnce(): Promise<KeeperPass> {
    const { client, namespace, secretName } = this.opts;
    const [secret, configs] = await Promise.all([
      client.getSecret(namespace, secretName),
      client.listWebhookConfigurations(this.opts.webhookSelector ?? INJECT_SELECTOR),
    ]);
    if (configs.length === 0 && this.lastConfigCount !== 0) {
      this.log.warn(
        { selector: this.opts.webhookSelector ?? INJECT_SELECTOR },
        'no webhook configuration matches the selector: caBundle is injected nowhere',
      );
    }
    this.lastConfigCount = configs.length;
    const stored = readStoredPki(secret);
    const now = this.clock.now();
    const p = plan(stored, webhookTargets(configs), this.policy, now);

    let next: StoredPki = { ...stored };
    let secretChanged = false;
    for (const a of p.actions) {
      const before = next;
      next = await this.applyToSecret(next, a, now);
      if (next !== before) secretChanged = true;
    }
    if (secretChanged) {
      try {
        await writeStoredPki(client, namespace, secretName, secret, next);
      } catch (err) {
        if (isConflict(err) || (err instanceof KubeApiError && err.reason === 'AlreadyExists')) {
          this.log.info(
            { secret: `${namespace}/${secretName}` },
            'cert Secret changed meanwhile; the next pass re-plans',
          );
          return { actions: [] };
        }
        throw err;
      }
    }
    const bundle = next.caBundle ?? '';
    for (const a of p.actions) {
      if (a.type !== 'inject' || !bundle) continue;
      const cfg = configs.find((c) => c.kind === a.kind && c.metadata.name === a.name);
      if (cfg) await injectCaBundle(client, cfg, bundle);
    }
    for (const a of p.actions) {
      this.metrics?.actions.inc({ action: a.type });
      this.log.info({ ...describeAction(a), secret: `${namespace}/${secretName}` }, 'cert keeper step');
    }
    this.recordExpiry(next);
    if (p.waiting) this.log.debug({ waiting: p.waiting }, 'cert keeper waiting');
    return p;
  }

  private recordExpiry(stored: StoredPki): void {
    if (!this.metrics) return;
    const bundle = bundleFacts(stored.caBundle);
    const signer = bundle.find((c) => keyMatchesCert(stored.caKey, c));
    if (signer) this.metrics.caExpiry.set(signer.notAfter / 1000);
    const leaf = bundleFacts(stored.cert)[0];
    if (leaf) this.metrics.leafExpiry.set(leaf.notAfter / 1000);
  }

  /** The Secret content after `a` (the same object when `a` does not touch the Secret). */
  private async applyToSecret(s: StoredPki, a: Action, now: number): Promise<StoredPki> {
    const leafOpts = {
      dnsNames: this.policy.dnsNames,
      ipAddresses: this.policy.ipAddresses,
      validityDays: this.policy.leafValidityDays,
      now: new Date(now),
    };
    switch (a.type) {
      case 'create': {
        const ca = await generateCA({ validityDays: this.policy.caValidityDays, now: new Date(now) });
        const leaf = await issueServingCert({ ca, ...leafOpts });
        return { caBundle: joinPemBundle([ca.cert, ...a.adoptCAs]), caKey: ca.key, cert: leaf.cert, key: leaf.key };
      }
      case 'stage-ca': {
        const ca = await generateCA({ validityDays: this.policy.caValidityDays, now: new Date(now) });
        return {
          ...s,
          caBundle: joinPemBundle([...bundleFacts(s.caBundle).map((c) => c.pem), ca.cert]),
          caKey: ca.key,
          published: undefined,
        };
      }
      case 'issue-leaf': {
        const leaf = await issueServingCert({ ca: signerOf(s), ...leafOpts });
        return { ...s, cert: leaf.cert, key: leaf.key };
      }
      case 'retire-cas': {
        const drop = new Set(a.fingerprints);
        return {
          ...s,
          caBundle: joinPemBundle(
            bundleFacts(s.caBundle)
              .filter((c) => !drop.has(c.fingerprint))
              .map((c) => c.pem),
          ),
        };
      }
      case 'record-published':
        return { ...s, published: { bundleId: a.bundleId, at: now } };
      case 'inject':
        return s;
    }
  }

  /** Pass after pass until `signal` aborts (leadership lost or shutdown). Errors are logged and retried. */
  async run(signal: AbortSignal): Promise<void> {
    const interval = this.opts.intervalMs ?? 60_000;
    const settle = this.opts.settleMs ?? 2_000;
    let failures = 0;
    while (!signal.aborted) {
      let delay = interval;
      try {
        const pass = await this.reconcileOnce();
        failures = 0;
        if (pass.actions.length) delay = settle;
        else if (pass.nextAt !== undefined)
          delay = Math.max(settle, Math.min(interval, pass.nextAt - this.clock.now()));
      } catch (err) {
        failures++;
        this.metrics?.errors.inc();
        this.log.warn({ err: safeError(err), failures }, 'cert keeper pass failed; retrying');
        delay = Math.min(interval, settle * 2 ** Math.min(failures, 5));
      }
      await this.clock.sleep(delay, signal);
    }
  }
}

/**
 * Start point for the controller process: call from the leader elector's `onStartedLeading(signal)`,
 * so only the leader rotates certificates; resolves when `signal` aborts.
 */
export function runCertKeeper(opts: CertKeeperOptions, signal: AbortSignal): Promise<void> {
  return new CertKeeper(opts).run(signal);
}
