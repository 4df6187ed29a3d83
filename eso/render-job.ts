// One Secret render as data that crosses a thread boundary (structured clone): what desiredSecret needs
// (target, provider data, the ExternalSecret's metadata, templateFrom's sources read beforehand) and what
// it produces, or its error as a value-free message. The render pool (controller/reconcilers/render-pool.ts) sends
// jobs to render workers (eso/render-worker.ts); `vaultgate template` and the in-process path run the
// same job here, so all three render the same way. Pure: no I/O.
import type { ExternalSecretTarget } from '../schemas/types.ts';
import { desiredSecret, type DesiredSecret, type SourceMetadata } from './target.ts';
import { templateSourceRefs, TemplateSourceMissingError, type TemplateSources } from './target-template.ts';
import { TemplateError, withRenderDeadline } from '../golang/template/index.ts';
import { allowanceBudget, withDeriveBudget, type DeriveBudget } from '../golang/sprig/index.ts';

type Entries = Array<[string, Uint8Array]>;

export interface SecretRenderJob {
  /** Who pays for costly functions (derivePassword's new keys). */
  namespace: string;
  target: ExternalSecretTarget | undefined;
  providerData: Entries;
  source: SourceMetadata;
  /** templateFrom's ConfigMaps and Secrets by name; null: not found. */
  configMaps: Array<[string, Entries | null]>;
  secrets: Array<[string, Entries | null]>;
  /** New derivePassword keys this render may derive (its namespace's remaining budget). */
  deriveAllowance: number;
  /** Stop the render after `ms`, with `template rendering exceeded ${label}` (withRenderDeadline). */
  deadline?: { ms: number; label: string };
}

export interface WireSecret {
  type?: string;
  data: Entries;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  immutable?: boolean;
}

export type RenderOutcome =
  | { ok: true; secret: WireSecret; derived: number }
  | { ok: false; error: { message: string; missingSource: boolean }; derived: number };

// Copies: a Buffer is often a view of a larger pool, and a message would carry the whole pool.
const entries = (m: ReadonlyMap<string, Buffer>): Entries => [...m].map(([k, v]) => [k, new Uint8Array(v)]);
const buffers = (e: Entries): Map<string, Buffer> =>
  new Map(e.map(([k, v]) => [k, Buffer.from(v.buffer, v.byteOffset, v.byteLength)]));

/** Whether desiredSecret would run a template for this target (without one it only copies). */
export function hasTemplate(target: ExternalSecretTarget | undefined): boolean {
  return target?.template !== undefined;
}

/** The job for desiredSecret(target, providerData, source, sources) in `namespace`. */
export function secretRenderJob(
  namespace: string,
  target: ExternalSecretTarget | undefined,
  providerData: ReadonlyMap<string, Buffer>,
  source: SourceMetadata,
  sources: TemplateSources,
  deriveAllowance: number,
): SecretRenderJob {
  const refs = templateSourceRefs(target);
  const read = (
    names: string[],
    get: (n: string) => { data: ReadonlyMap<string, Buffer> } | undefined,
  ): Array<[string, Entries | null]> =>
    names.map((n) => {
      const o = get(n);
      return [n, o ? entries(o.data) : null];
    });
  return {
    namespace,
    target,
    providerData: entries(providerData),
    source: {
      ...(source.labels ? { labels: source.labels } : {}),
      ...(source.annotations ? { annotations: source.annotations } : {}),
    },
    configMaps: read(refs.configMaps, (n) => sources.configMap(n)),
    secrets: read(refs.secrets, (n) => sources.secret(n)),
    deriveAllowance,
  };
}

/** Run a job: desiredSecret, with derivePassword's new keys charged to `budget` (default: the job's allowance). */
export function runSecretRenderJob(
  job: SecretRenderJob,
  budget: DeriveBudget = allowanceBudget(job.namespace, job.deriveAllowance),
): RenderOutcome {
  let used = 0;
  const counting: DeriveBudget = {
    namespace: budget.namespace,
    perMinute: budget.perMinute,
    take: (now) => {
      const ok = budget.take(now);
      if (ok) used++;
      return ok;
    },
  };
  const cms = new Map(job.configMaps);
  const secrets = new Map(job.secrets);
  const sources: TemplateSources = {
    configMap: (n) => {
      const e = cms.get(n);
      return e ? { data: buffers(e) } : undefined;
    },
    secret: (n) => {
      const e = secrets.get(n);
      return e ? { data: buffers(e) } : undefined;
    },
  };
  try {
    const render = (): ReturnType<typeof desiredSecret> =>
      withDeriveBudget(counting, () => desiredSecret(job.target, buffers(job.providerData), job.source, sources));
    const d = job.deadline ? withRenderDeadline(job.deadline.ms, job.deadline.label, render) : render();
    return {
      ok: true,
      secret: {
        ...(d.type !== undefined ? { type: d.type } : {}),
        data: entries(d.data),
        labels: d.labels,
        annotations: d.annotations,
        ...(d.immutable ? { immutable: true } : {}),
      },
      derived: used,
    };
  } catch (e) {
    // TemplateError messages name fields, positions and types, never values; anything else is withheld.
    const message =
      e instanceof TemplateError
        ? e.message
        : 'spec.target.template: the template failed (details withheld: they could contain secret data)';
    return { ok: false, error: { message, missingSource: e instanceof TemplateSourceMissingError }, derived: used };
  }
}

/** The outcome as desiredSecret's result, or its error rethrown (TemplateError / TemplateSourceMissingError). */
export function desiredFromOutcome(outcome: RenderOutcome): DesiredSecret {
  if (!outcome.ok)
    throw outcome.error.missingSource
      ? new TemplateSourceMissingError(outcome.error.message)
      : new TemplateError(outcome.error.message);
  const s = outcome.secret;
  return {
    ...(s.type !== undefined ? { type: s.type } : {}),
    data: buffers(s.data),
    labels: s.labels,
    annotations: s.annotations,
    ...(s.immutable ? { immutable: true } : {}),
  };
}
