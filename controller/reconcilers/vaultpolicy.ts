// VaultPolicy → `sys/policies/acl/<prefix>.<namespace>.<name>`.
// Level-triggered: read Vault, compare with the rendered policy, write only the difference. A periodic,
// jittered re-read repairs out-of-band edits (Event DriftRepaired). Ownership is the header written by
// policy/render.ts: a policy vaultgate did not write is never overwritten or deleted unless the object
// carries `vaultgate.io/adopt: "true"`. The admission rules run again here before anything is written.
import { parsePolicyText } from '../../policy/parse.ts';
import { ownershipOf, policiesEquivalent } from '../../policy/ownership.ts';
import { renderPolicy, type PolicyRule } from '../../policy/render.ts';
import { vaultName } from '../../schemas/vault-names.ts';
import type { VaultPolicySpec } from '../../schemas/types.ts';
import { withFinalizer } from '../runtime/finalizer.ts';
import { getCondition } from '../runtime/conditions.ts';
import type { Condition, KubeObject } from '../runtime/objects.ts';
import { DONE, requeueAfter, type ReconcileContext, type Reconciler, type Result } from '../runtime/reconciler.ts';
import { NAMESPACES, VAULT_GUARDRAILS, VAULT_POLICIES } from '../runtime/resources.ts';
import { applyStatus } from '../runtime/status.ts';
import type { SysApi } from '../vault/types.ts';
import { admissionContext } from './admission-context.ts';
import type { AclRule } from '../../policy/acl.ts';
import { summariseRuleWidening } from '../../policy/widening.ts';
import type { VaultWriteAction } from '../../audit/record.ts';
import { admissionDenials, buildStatus, describeFindings, jittered, reasonOf, safeMessage, SafeError, wantsAdoption, type StatusInput, type VaultWriteObserver } from './common.ts';

export interface VaultPolicyObject extends KubeObject {
  spec: VaultPolicySpec;
}

export interface VaultPolicyDeps {
  /** Vault as the controller itself (bootstrap policy: sys/policies/acl/<prefix>.*). */
  sys: SysApi;
  namePrefix: string;
  controllerClass?: string;
  /** How often Vault is re-read to catch out-of-band edits. Default 5 min (±10% per object). */
  driftCheckMs?: number;
  now?: () => Date;
  /** Every policy write and delete, for the audit trail. */
  onVaultWrite?: VaultWriteObserver;
}

/** The rule model of a spec: `rules` as given, or `policy` text parsed (parse errors → SafeError). */
export function rulesOf(spec: VaultPolicySpec): PolicyRule[] {
  if (spec.rules && spec.policy !== undefined) throw new SafeError('InvalidSpec', 'spec.rules and spec.policy are both set; set exactly one');
  if (spec.rules) return spec.rules as PolicyRule[];
  if (spec.policy === undefined) throw new SafeError('InvalidSpec', 'one of spec.rules or spec.policy is required');
  const parsed = parsePolicyText(spec.policy);
  if (!parsed.ok) {
    throw new SafeError('InvalidSpec', `spec.policy does not parse: ${parsed.errors.map((e) => `${e.line}:${e.column}: ${e.message}`).join('; ')}`);
  }
  return parsed.rules.map((r) => r.rule as PolicyRule);
}

/** What a rewrite changes in access, both ways (e.g. a drift repair that takes back an out-of-band grant). */
function accessChange(stored: string, rendered: string): string | undefined {
  const before = parsePolicyText(stored);
  const after = parsePolicyText(rendered);
  if (!before.ok || !after.ok) return undefined;
  const b = before.rules.map((r) => r.rule as AclRule);
  const a = after.rules.map((r) => r.rule as AclRule);
  const grants = summariseRuleWidening(b, a)?.replace(/^widens access: /, 'grants ');
  const takesBack = summariseRuleWidening(a, b)?.replace(/^widens access: /, 'takes back ');
  return [grants, takesBack].filter(Boolean).join('; ') || undefined;
}

/** Status condition recording that vaultgate wrote the Vault policy (survives a stripped header). */
export const OWNED_CONDITION = 'VaultPolicyOwned';

export function createVaultPolicyReconciler(deps: VaultPolicyDeps): Reconciler {
  const now = deps.now ?? (() => new Date());
  const driftMs = deps.driftCheckMs ?? 300_000;

  return async (key: string, ctx: ReconcileContext): Promise<Result> => {
    const obj = ctx.cache<VaultPolicyObject>(VAULT_POLICIES).get(key);
    if (!obj) return DONE;
    const ns = obj.metadata.namespace ?? '';
    const name = vaultName(deps.namePrefix, ns, obj.metadata.name);
    const owner = { namespace: ns, name: obj.metadata.name, uid: obj.metadata.uid ?? '' };
    const audited = (action: VaultWriteAction, reason: string, content?: string, change?: string): void => {
      deps.onVaultWrite?.({ action, object: 'policy', vaultName: name, owner: { kind: 'VaultPolicy', ...owner }, reason, ...(content !== undefined ? { content } : {}), ...(change ? { change } : {}) });
    };

    const writeStatus = async (input: StatusInput): Promise<void> => {
      await applyStatus(ctx.client, VAULT_POLICIES, obj, buildStatus(obj, { ...input, extra: { vaultName: name, ...input.extra } }, now()));
    };

    return withFinalizer(ctx.client, VAULT_POLICIES, obj, {
      apply: async (current) => {
        let rendered: string;
        try {
          if (current.spec.vaultName && current.spec.vaultName !== name) {
            throw new SafeError('InvalidSpec', `spec.vaultName "${current.spec.vaultName}" must be the derived name "${name}"`);
          }
          const denials = admissionDenials(current, admissionContext({
            guardrails: tryCache(ctx, VAULT_GUARDRAILS), namespaces: tryCache(ctx, NAMESPACES),
            namePrefix: deps.namePrefix, controllerClass: deps.controllerClass ?? '',
          }));
          if (denials.length > 0) {
            const guardrail = denials.some((d) => d.rule.startsWith('guardrail.'));
            throw new SafeError(guardrail ? 'GuardrailViolation' : 'InvalidSpec', `not written to Vault: ${describeFindings(denials)}`);
          }
          rendered = renderPolicy(rulesOf(current.spec), owner);
        } catch (err) {
          // A spec problem: nothing is written, nothing to retry until the object changes.
          await writeStatus({ ready: { status: 'False', reason: reasonOf(err, 'InvalidSpec'), message: safeMessage(err) } });
          ctx.events.record(current, { type: 'Warning', reason: reasonOf(err, 'InvalidSpec'), note: safeMessage(err) });
          return DONE;
        }

        let stored: string | undefined;
        try {
          stored = await deps.sys.readPolicy(name);
          if (stored !== undefined) {
            const verdict = ownershipOf(stored, owner);
            // Our own record that we wrote this policy: a header stripped in Vault must not turn a policy
            // we own (maybe now wider) into someone else's that we leave alone.
            const claimed = getCondition((current.status as { conditions?: Condition[] } | undefined)?.conditions, OWNED_CONDITION)?.status === 'True';
            if (verdict === 'foreign' && !wantsAdoption(current) && !claimed) {
              const message = `Vault policy "${name}" exists and was not written by vaultgate for this object; it is left untouched. To let vaultgate manage it, annotate the VaultPolicy with vaultgate.io/adopt: "true"`;
              await writeStatus({ ready: { status: 'False', reason: 'NotOwned', message } });
              ctx.events.record(current, { type: 'Warning', reason: 'NotOwned', note: message });
              return requeueAfter(jittered(driftMs, obj.metadata.uid));
            }
            if (!policiesEquivalent(rendered, stored)) {
              await deps.sys.writePolicy(name, rendered);
              const syncedBefore = verdict === 'owned' && isSyncedFor(current);
              const [reason, note] = verdict === 'foreign' && claimed ? ['DriftRepaired', `Vault policy ${name} was replaced outside vaultgate (ownership header removed); restored`]
                : verdict === 'foreign' ? ['Adopted', `adopted and rewrote Vault policy ${name}`]
                : syncedBefore ? ['DriftRepaired', `Vault policy ${name} was changed outside vaultgate; restored`]
                : ['Updated', `updated Vault policy ${name}`];
              ctx.events.record(current, { type: reason === 'DriftRepaired' ? 'Warning' : 'Normal', reason, note });
              audited(reason === 'DriftRepaired' ? 'repair' : reason === 'Adopted' ? 'adopt' : 'update', note, rendered, accessChange(stored, rendered));
            }
          } else {
            await deps.sys.writePolicy(name, rendered);
            ctx.events.record(current, { type: 'Normal', reason: 'Created', note: `created Vault policy ${name}` });
            audited('create', `created Vault policy ${name}`, rendered);
          }
        } catch (err) {
          await writeStatus({ ready: { status: 'False', reason: reasonOf(err, 'VaultError'), message: `cannot sync Vault policy ${name}: ${safeMessage(err)}` } });
          throw err;
        }
        await writeStatus({
          ready: { status: 'True', reason: 'Synced', message: `Vault policy ${name} matches the spec` },
          conditions: [{ type: OWNED_CONDITION, status: 'True', reason: 'Written', message: `vaultgate wrote Vault policy ${name}: it repairs drift and deletes it with this object` }],
        });
        return requeueAfter(jittered(driftMs, obj.metadata.uid));
      },

      cleanup: async (current) => {
        try {
          const stored = await deps.sys.readPolicy(name);
          if (stored === undefined) return;
          if (ownershipOf(stored, owner) === 'owned') {
            await deps.sys.deletePolicy(name);
            ctx.events.record(current, { type: 'Normal', reason: 'Deleted', note: `deleted Vault policy ${name}`, action: 'Delete' });
            audited('delete', `deleted Vault policy ${name}: VaultPolicy ${ns}/${current.metadata.name} was deleted`);
          } else {
            ctx.events.record(current, { type: 'Normal', reason: 'NotDeleted', note: `Vault policy ${name} was not written by vaultgate for this object; left in place`, action: 'Delete' });
          }
        } catch (err) {
          // Keep the finalizer: the runtime retries with backoff; the status says why deletion waits.
          await writeStatus({ ready: { status: 'False', reason: reasonOf(err, 'VaultError'), message: `deleting: cannot remove Vault policy ${name} yet (${safeMessage(err)}); retrying` } }).catch(() => undefined);
          throw err;
        }
      },
    });
  };
}

/** Ready=True for the current generation: vaultgate already made this spec effective once. */
function isSyncedFor(obj: KubeObject): boolean {
  const status = obj.status as { conditions?: Array<{ type: string; status: string; observedGeneration?: number }> } | undefined;
  const ready = status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' && ready.observedGeneration === obj.metadata.generation;
}

/** A cache the controller may not watch (e.g. namespaces in a namespace-scoped install): undefined then. */
export function tryCache(ctx: ReconcileContext, res: Parameters<ReconcileContext['cache']>[0]): ReturnType<ReconcileContext['cache']> | undefined {
  try {
    return ctx.cache(res);
  } catch {
    return undefined;
  }
}
