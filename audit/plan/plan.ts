// `vaultgate plan`: what the controller would create, change or delete in Vault, as a reviewable unified
// diff, and the access-widening summary the webhook adds as a warning on VaultPolicy updates. Pure: the
// current Vault state is passed in (readVaultState in audit/access/sources.ts reads it).
import { createTwoFilesPatch } from 'diff';
import { renderPolicy } from '../../policy/render.ts';
import { policiesEquivalent, readOwnership } from '../../policy/ownership.ts';
import type { AclRule } from '../../policy/acl.ts';
import { summariseRuleWidening } from '../../policy/widening.ts';
import { parseVaultName } from '../../schemas/vault-names.ts';
import {
  policyRules,
  type DesiredPolicy,
  type DesiredRole,
  type DesiredState,
  type InvalidRole,
  type KubeObj,
} from '../access/model.ts';
import type { AccessFinding } from '../access/report.ts';
import type { VaultCurrent } from '../access/sources.ts';

export type { VaultCurrent };
import { canonicalJson } from '../../trail/events.ts';

export type PlanAction = 'create' | 'update' | 'delete' | 'unchanged' | 'skip' | 'refused';

/** One admission denial of an object: the webhook refuses it, and the controller's re-check refuses it too. */
export interface Refusal {
  field: string;
  rule: string;
  message: string;
}

export interface PlanOptions {
  /**
   * Admission denials per object, keyed `VaultPolicy <ns>/<name>` / `VaultRoleBinding <ns>/<name>`: the
   * controller's pipeline runs them first, so a refused object is shown as refused, never as a write.
   */
  refusals?: ReadonlyMap<string, readonly Refusal[]>;
}

export interface PlanItem {
  object: 'policy' | 'role';
  vaultName: string;
  mount?: string;
  /** Vault API path of the object. */
  path: string;
  action: PlanAction;
  /** `VaultPolicy ns/name` / `VaultRoleBinding ns/name`, when an object owns it. */
  owner?: string;
  reason: string;
  /** Unified diff, current → desired ('' for unchanged / skip). */
  diff: string;
  /** Policies only: what applying the change widens, if anything. */
  widening?: string;
  /** Policies only: what Vault's current text grants beyond the desired state (someone widened it in Vault). */
  vaultGrantsMore?: string;
  /** `refused` only: each admission rule that refuses the object. */
  refusals?: Refusal[];
}

export interface Plan {
  /** Whether Vault's current state was compared (else everything is a create against nothing). */
  compared: boolean;
  items: PlanItem[];
  counts: Record<PlanAction, number>;
}

const ROLE_KEYS = [
  'bound_service_account_names',
  'bound_service_account_namespaces',
  'token_policies',
  'token_ttl',
  'token_max_ttl',
  'audience',
] as const;

/** The role fields vaultgate sets, normalised for comparison and display (sorted lists, seconds). */
export function roleView(role: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ROLE_KEYS) {
    const v = role[k];
    if (v === undefined || v === '' || v === null) continue;
    out[k] = Array.isArray(v)
      ? [...(v as string[])].map(String).sort()
      : typeof v === 'string' && /^\d+$/.test(v)
        ? Number(v)
        : v;
  }
  if (out.token_policies === undefined && Array.isArray(role.policies))
    out.token_policies = [...(role.policies as string[])].sort();
  return out;
}

function roleText(role: Record<string, unknown>): string {
  return `${JSON.stringify(JSON.parse(canonicalJson(roleView(role))), null, 2)}\n`;
}

/** A git-style unified diff: /dev/null on the side where the object does not exist. */
function patch(path: string, before: string, after: string): string {
  const text = createTwoFilesPatch(
    before === '' ? '/dev/null' : `vault/${path}`,
    after === '' ? '/dev/null' : `desired/${path}`,
    before,
    after,
    undefined,
    undefined,
    { context: 3 },
  );
  return text.replace(/^=+\n/, '').replace(/\t\n/g, '\n');
}

export function renderDesiredPolicy(p: DesiredPolicy, currentText?: string): string {
  // Offline manifests carry no uid; reuse the uid of Vault's header for the same object so a re-render
  // of an unchanged policy is not shown as a change.
  const stored = currentText ? readOwnership(currentText) : undefined;
  const uid = p.uid ?? (stored?.namespace === p.namespace && stored?.name === p.name ? (stored.uid ?? '') : '');
  const rules = p.rules.map((r) => ({
    ...r,
    capabilities: [...r.capabilities],
    minWrappingTTL: r.minWrappingTTL === undefined ? undefined : String(r.minWrappingTTL),
    maxWrappingTTL: r.maxWrappingTTL === undefined ? undefined : String(r.maxWrappingTTL),
  }));
  return renderPolicy(rules, { namespace: p.namespace, name: p.name, uid });
}

/** An item before its verdict: which Vault object, and the Kubernetes object that owns it. */
type OwnedItem = Omit<PlanItem, 'action' | 'reason' | 'diff'> & { owner: string };
type Refusals = readonly Refusal[] | undefined;
/** A role as Vault holds it. */
type CurrentRole = VaultCurrent['roles'] extends Map<string, infer R> ? R : never;

function refusedItem(
  base: Omit<PlanItem, 'action' | 'reason' | 'diff'>,
  refusals: readonly Refusal[],
  note = '',
): PlanItem {
  return {
    ...base,
    action: 'refused',
    diff: '',
    refusals: [...refusals],
    reason: `refused by admission: the webhook denies it and the controller's re-check writes nothing for it${note}`,
  };
}

/**
 * Each desired object against Vault's current state (offline: against nothing): policies, roles, roles
 * the controller refuses, then the orphans Vault holds under the prefix.
 */
export function computePlan(state: DesiredState, current?: VaultCurrent, opts: PlanOptions = {}): Plan {
  const refusedPolicies = refusedPolicyNames(state, opts);
  const items = [
    ...state.policies.flatMap((p) => planPolicy(p, current, refusalsOf(opts, 'VaultPolicy', p))),
    ...state.roles.flatMap((r) => planRole(r, current, refusalsOf(opts, 'VaultRoleBinding', r), refusedPolicies)),
    ...state.invalidRoles.map(invalidRoleItem),
    ...(current ? orphanItems(state, current) : []),
  ];
  return { compared: current !== undefined, items, counts: countActions(items) };
}

function refusalsOf(opts: PlanOptions, kind: string, obj: { namespace: string; name: string }): Refusals {
  return opts.refusals?.get(`${kind} ${obj.namespace}/${obj.name}`);
}

/** A refused VaultPolicy never becomes Ready, and a role binds only Ready policies (fail closed). */
function refusedPolicyNames(state: DesiredState, opts: PlanOptions): Set<string> {
  return new Set(state.policies.filter((p) => refusalsOf(opts, 'VaultPolicy', p)?.length).map((p) => p.vaultName));
}

function createReason(current: VaultCurrent | undefined): string {
  return current ? 'not in Vault' : 'offline: compared with nothing';
}

/** A VaultPolicy: refused (with its earlier write removed), unparsable (skipped), or compared with Vault. */
function planPolicy(p: DesiredPolicy, current: VaultCurrent | undefined, refused: Refusals): PlanItem[] {
  const path = `sys/policies/acl/${p.vaultName}`;
  const item = {
    object: 'policy' as const,
    vaultName: p.vaultName,
    path,
    owner: `VaultPolicy ${p.namespace}/${p.name}`,
  };
  if (refused?.length) return refusedPolicyItems(item, refused, current?.policies.get(p.vaultName));
  if (p.parseErrors)
    return [{ ...item, action: 'skip', reason: `spec.policy cannot be parsed: ${p.parseErrors.join('; ')}`, diff: '' }];
  return [comparePolicy(item, p, current)];
}

/** Tightening takes access back: the controller removes a policy it wrote for a refused spec. */
function refusedPolicyItems(item: OwnedItem, refused: readonly Refusal[], before: string | undefined): PlanItem[] {
  const ours = before !== undefined && readOwnership(before)?.managedBy === 'vaultgate';
  const note = ours
    ? '; the policy vaultgate wrote earlier is removed (below)'
    : before !== undefined
      ? '; Vault holds a policy under this name that vaultgate did not write: left alone'
      : '';
  if (!ours) return [refusedItem(item, refused, note)];
  return [
    refusedItem(item, refused, note),
    {
      ...item,
      action: 'delete',
      reason: `${item.owner} is refused: the controller removes the policy it wrote, taking its access back`,
      diff: patch(item.path, before, ''),
    },
  ];
}

/** A policy to create, leave alone (not vaultgate's), leave as it is, or update. */
function comparePolicy(item: OwnedItem, p: DesiredPolicy, current: VaultCurrent | undefined): PlanItem {
  const before = current?.policies.get(p.vaultName);
  const after = renderDesiredPolicy(p, before);
  if (before === undefined)
    return { ...item, action: 'create', reason: createReason(current), diff: patch(item.path, '', after) };
  if (readOwnership(before)?.managedBy !== 'vaultgate')
    return {
      ...item,
      action: 'skip',
      reason: 'a policy with this name exists in Vault and was not written by vaultgate: it is never overwritten',
      diff: '',
    };
  if (policiesEquivalent(after, before)) return { ...item, action: 'unchanged', reason: 'Vault matches', diff: '' };
  const currentRules = policyRulesOfText(before);
  const widening = summariseWidening(currentRules, p.rules);
  const extra = summariseWidening(p.rules, currentRules)?.replace(/^widens access: /, '');
  return {
    ...item,
    action: 'update',
    reason: 'Vault differs from the desired state',
    diff: patch(item.path, before, after),
    ...(widening ? { widening } : {}),
    ...(extra ? { vaultGrantsMore: extra } : {}),
  };
}

/** A VaultRoleBinding: refused (with the role under its name removed), or compared with Vault. */
function planRole(
  r: DesiredRole,
  current: VaultCurrent | undefined,
  refused: Refusals,
  refusedPolicies: ReadonlySet<string>,
): PlanItem[] {
  const path = `auth/${r.mount}/role/${r.vaultName}`;
  const owner = `VaultRoleBinding ${r.namespace}/${r.name}`;
  const item = { object: 'role' as const, vaultName: r.vaultName, mount: r.mount, path, owner };
  const cur = current?.roles.get(`${r.mount}/${r.vaultName}`);
  if (refused?.length) return refusedRoleItems(item, refused, cur);
  const { body, note } = withoutRefusedPolicies(r.body, refusedPolicies);
  return [compareRole(item, roleText(body), note, cur, current)];
}

function refusedRoleItems(item: OwnedItem, refused: readonly Refusal[], cur: CurrentRole | undefined): PlanItem[] {
  if (!cur) return [refusedItem(item, refused, '')];
  return [
    refusedItem(item, refused, '; the role under this name is removed (below)'),
    {
      ...item,
      action: 'delete',
      reason: `${item.owner} is refused: the controller removes the role if it wrote it (VaultRoleOwned=True on the object; a role it does not own is left alone)`,
      diff: patch(item.path, roleText(cur.role), ''),
    },
  ];
}

/** The role body without the refused policies it names, and the note that says so ('' when none). */
export function withoutRefusedPolicies(
  body: Record<string, unknown>,
  refusedPolicies: ReadonlySet<string>,
): { body: Record<string, unknown>; note: string } {
  const tokenPolicies = Array.isArray(body.token_policies) ? (body.token_policies as unknown[]).map(String) : [];
  const unbound = tokenPolicies.filter((n) => refusedPolicies.has(n));
  if (unbound.length === 0) return { body, note: '' };
  return {
    body: { ...body, token_policies: tokenPolicies.filter((n) => !refusedPolicies.has(n)) },
    note: `; written without ${unbound.join(', ')} (refused VaultPolicy: a role binds only Ready policies)`,
  };
}

/** A role to create, leave as it is, or update (compared in roleView's normalised form). */
function compareRole(
  item: OwnedItem,
  after: string,
  note: string,
  cur: CurrentRole | undefined,
  current: VaultCurrent | undefined,
): PlanItem {
  if (!cur)
    return { ...item, action: 'create', reason: createReason(current) + note, diff: patch(item.path, '', after) };
  const before = roleText(cur.role);
  if (before === after) return { ...item, action: 'unchanged', reason: `Vault matches${note}`, diff: '' };
  return {
    ...item,
    action: 'update',
    reason: `Vault differs from the desired state${note}`,
    diff: patch(item.path, before, after),
  };
}

/** The controller refuses the spec and leaves Vault as it is: neither a write nor a delete. */
function invalidRoleItem(r: InvalidRole): PlanItem {
  return {
    object: 'role',
    vaultName: r.vaultName,
    mount: r.mount,
    path: `auth/${r.mount}/role/${r.vaultName}`,
    action: 'skip',
    owner: `VaultRoleBinding ${r.namespace}/${r.name}`,
    reason: `the controller refuses this spec (${r.error}): Vault is left as it is`,
    diff: '',
  };
}

/** Vault objects under the name prefix that no desired object (valid or not) names. */
function orphanItems(state: DesiredState, current: VaultCurrent): PlanItem[] {
  // One set for both kinds, as Vault names them: a policy by its name, a role by mount/name.
  const wanted = new Set([
    ...state.policies.map((p) => p.vaultName),
    ...[...state.roles, ...state.invalidRoles].map((r) => `${r.mount}/${r.vaultName}`),
  ]);
  const policies = [...current.policies].filter(([name]) => !wanted.has(name) && parseVaultName(state.prefix, name));
  const roles = [...current.roles].filter(([key]) => !wanted.has(key)).map(([, cur]) => cur);
  return [
    ...policies.map(([name, text]) => orphanPolicyItem(name, text)),
    ...roles.flatMap((cur) => orphanRoleItem(state.prefix, cur) ?? []),
  ];
}

/** vaultgate deletes an orphan policy it wrote, and leaves one it did not write alone. */
function orphanPolicyItem(name: string, text: string): PlanItem {
  const path = `sys/policies/acl/${name}`;
  const own = readOwnership(text);
  if (own?.managedBy === 'vaultgate')
    return {
      object: 'policy',
      vaultName: name,
      path,
      action: 'delete',
      reason: `no VaultPolicy ${own.namespace ?? '?'}/${own.name ?? '?'} exists any more`,
      diff: patch(path, text, ''),
    };
  return {
    object: 'policy',
    vaultName: name,
    path,
    action: 'skip',
    reason: 'under our name prefix but not written by vaultgate: left alone (adopt or remove it by hand)',
    diff: '',
  };
}

/** A role under the prefix whose VaultRoleBinding is gone is deleted (undefined: not under the prefix). */
function orphanRoleItem(prefix: string, cur: CurrentRole): PlanItem | undefined {
  const owner = parseVaultName(prefix, cur.name);
  if (!owner) return undefined;
  const path = `auth/${cur.mount}/role/${cur.name}`;
  return {
    object: 'role',
    vaultName: cur.name,
    mount: cur.mount,
    path,
    action: 'delete',
    reason: `no VaultRoleBinding ${owner.namespace}/${owner.name} exists any more`,
    diff: patch(path, roleText(cur.role), ''),
  };
}

function countActions(items: readonly PlanItem[]): Record<PlanAction, number> {
  const counts: Record<PlanAction, number> = { create: 0, update: 0, delete: 0, unchanged: 0, skip: 0, refused: 0 };
  for (const i of items) counts[i.action]++;
  return counts;
}

/** Findings for `audit access --vault`: orphans, drift and missing objects. */
export function vaultFindings(plan: Plan): AccessFinding[] {
  if (!plan.compared) return [];
  const out: AccessFinding[] = [];
  for (const i of plan.items) {
    const object = i.object === 'policy' ? `Vault policy ${i.vaultName}` : `Vault role ${i.mount ?? ''}/${i.vaultName}`;
    if (i.action === 'delete' || (i.action === 'skip' && !i.owner)) {
      out.push({
        id: `vault.orphan-${i.object}`,
        severity: 'medium',
        object,
        message: `${i.reason}: an orphan under the vaultgate prefix${i.action === 'delete' ? ' (the controller deletes it)' : ''}`,
      });
    } else if (i.action === 'update') {
      out.push({
        id: `vault.drift-${i.object}`,
        severity: i.vaultGrantsMore ? 'high' : 'medium',
        object,
        message: `${i.owner ?? ''}: Vault's content differs from the desired state${i.vaultGrantsMore ? `; Vault grants more than desired (${i.vaultGrantsMore})` : ''}`,
      });
    } else if (i.action === 'create') {
      out.push({
        id: `vault.missing-${i.object}`,
        severity: 'low',
        object,
        message: `${i.owner ?? ''}: not in Vault yet (not reconciled, or the controller cannot write it)`,
      });
    }
  }
  return out;
}

function policyRulesOfText(text: string): AclRule[] {
  return policyRules({ metadata: { name: 'current' }, spec: { policy: text } }).rules;
}

// ---- widening ---------------------------------------------------------------------------------

export type PolicyLike = readonly AclRule[] | KubeObj | undefined;

function rulesOf(p: PolicyLike, namespace?: string): AclRule[] {
  if (!p) return [];
  if (Array.isArray(p)) return p as AclRule[];
  const obj = p as KubeObj;
  return policyRules({ ...obj, metadata: { ...obj.metadata, namespace: namespace ?? obj.metadata.namespace } }).rules;
}

/** `summariseWidening` over rule lists or VaultPolicy objects (the rule-level logic is policy/widening.ts). */
export function summariseWidening(prev: PolicyLike, next: PolicyLike, namespace?: string): string | undefined {
  return summariseRuleWidening(rulesOf(prev, namespace), rulesOf(next, namespace));
}

// ---- text output ------------------------------------------------------------------------------

export function renderPlan(plan: Plan, opts: { color?: boolean } = {}): string {
  const c = (code: string, s: string) => (opts.color ? `\x1b[${code}m${s}\x1b[0m` : s);
  const sym: Record<PlanAction, string> = {
    create: c('32', '+ create'),
    update: c('33', '~ update'),
    delete: c('31', '- delete'),
    unchanged: '  unchanged',
    skip: c('35', '! skip'),
    refused: c('31', 'x refused'),
  };
  const lines: string[] = [];
  if (!plan.compared)
    lines.push(
      '# offline: Vault was not read; every object is shown as a create (use --vault to compare with Vault)',
      '',
    );
  const changed = plan.items.filter((i) => i.action !== 'unchanged');
  for (const i of changed) {
    lines.push(`${sym[i.action]} ${i.object} ${i.path}${i.owner ? `  (${i.owner})` : ''}`, `    ${i.reason}`);
    if (i.widening) lines.push(`    ${c('31', i.widening)}`);
    for (const r of i.refusals ?? [])
      lines.push(`    ${c('31', `${r.field ? `${r.field}: ` : ''}${r.message} (rule ${r.rule})`)}`);
    if (i.diff) {
      for (const l of i.diff.replace(/\n$/, '').split('\n')) {
        if (l.startsWith('+') && !l.startsWith('+++')) lines.push(c('32', l));
        else if (l.startsWith('-') && !l.startsWith('---')) lines.push(c('31', l));
        else lines.push(l);
      }
    }
    lines.push('');
  }
  const n = plan.counts;
  lines.push(
    `Plan: ${n.create} to create, ${n.update} to update, ${n.delete} to delete, ${n.unchanged} unchanged${n.skip ? `, ${n.skip} skipped` : ''}${n.refused ? `, ${n.refused} refused` : ''}.`,
  );
  return `${lines.join('\n')}\n`;
}
