// `vaultgate plan`: the Vault writes the controller would make for manifests, as a unified diff.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { desiredState, KIND_GROUP, type KubeObj } from '../../audit/access/model.ts';
import { computePlan, renderPlan, type Refusal } from '../../audit/plan/plan.ts';
import { defaultContext, type AdmissionContext, type GuardrailObject } from '../../webhook/admission/context.ts';
import type { AdmissionRequest } from '../../webhook/admission/types.ts';
import { decideSync, defaultRegistry } from '../../webhook/review/review.ts';
import { loadManifests, readVaultState, vaultSysFromEnv } from '../../audit/access/sources.ts';
import { DEFAULT_PREFIX, prefixProblem } from '../../schemas/vault-names.ts';

const HELP = `Usage: vaultgate plan -f <file|dir>... [--vault] [options]

Shows what the vaultgate controller would create, update or delete in Vault for these manifests:
one ACL policy per VaultPolicy (sys/policies/acl/<prefix>.<namespace>.<name>, rendered exactly as
the controller writes it) and one kubernetes-auth role per VaultRoleBinding
(auth/<mount>/role/<prefix>.<namespace>.<name>), as a unified diff for pull-request review.

The controller's own pipeline runs first: admission (the webhook's rules and the guardrails, with the
Namespaces and VaultGuardrails among the manifests), as the controller re-checks every object before
writing. An object admission refuses is shown as "x refused", naming each rule, and counted as
refused: the controller writes nothing for it, and a role is planned without a refused policy (it
binds only Ready policies). Then the same rule builder and renderer as the controller.

Offline (default) every object is diffed against nothing. With --vault the diff is against Vault's
current text; objects under the prefix with no manifest are shown as deletes (only policies vaultgate
wrote, recognised by their ownership header; others are listed as skipped and never touched), and a
policy update that grants more than Vault has now is flagged "widens access: +read on ...".

Options:
  -f, --filename <path>     YAML/JSON manifests or directories (repeatable). Give the whole set: with
                            --vault, what is missing from it is planned for deletion
      --vault               compare with Vault ($VAULT_ADDR / --vault-addr, token from $VAULT_TOKEN)
      --vault-addr <url>
      --vault-token-env <NAME>  read the token from this variable instead of VAULT_TOKEN
      --prefix <prefix>     Vault name prefix (default "${DEFAULT_PREFIX}")
  -o, --output <format>     diff (default; colored on a terminal) or json
      --out <file>          write there instead of standard output
  -h, --help

Exit status: 0 nothing to change, 1 changes planned or objects refused (like "terraform plan
-detailed-exitcode" 2), 2 usage error.
`;

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: false,
      strict: true,
      options: {
        filename: { type: 'string', short: 'f', multiple: true },
        vault: { type: 'boolean' },
        'vault-addr': { type: 'string' },
        'vault-token-env': { type: 'string' },
        prefix: { type: 'string' },
        output: { type: 'string', short: 'o' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`vaultgate plan: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) {
    process.stdout.write(HELP);
    return 0;
  }
  const usage = (m: string) => {
    process.stderr.write(`vaultgate plan: ${m}\n`);
    return 2;
  };
  if (!v.filename?.length) return usage('-f <file|dir> is required (see --help)');
  const prefix = v.prefix ?? DEFAULT_PREFIX;
  const bad = prefixProblem(prefix);
  if (bad) return usage(bad);
  if (v.output !== undefined && v.output !== 'diff' && v.output !== 'json')
    return usage('--output must be diff or json');
  let objects;
  try {
    objects = loadManifests(v.filename);
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
  const state = desiredState(objects, prefix);
  let current;
  if (v.vault) {
    const vault = await vaultSysFromEnv({
      ...(v['vault-addr'] ? { address: v['vault-addr'] } : {}),
      ...(v['vault-token-env'] ? { tokenEnv: v['vault-token-env'] } : {}),
    });
    try {
      current = await readVaultState(vault.sys, prefix, ['kubernetes', ...state.roles.map((r) => r.mount)]);
    } finally {
      vault.close();
    }
  }
  const plan = computePlan(state, current, { refusals: admissionRefusals(objects, prefix) });
  const text =
    v.output === 'json'
      ? `${JSON.stringify(plan, null, 2)}\n`
      : renderPlan(plan, { color: !v.out && process.stdout.isTTY });
  if (v.out) writeFileSync(v.out, text);
  else process.stdout.write(text);
  return plan.counts.create + plan.counts.update + plan.counts.delete + plan.counts.refused > 0 ? 1 : 0;
}

/** The admission context the manifests describe (their Namespaces, VaultGuardrails and VaultPolicies). */
function contextOf(objects: readonly KubeObj[], prefix: string): AdmissionContext {
  const guardrails: GuardrailObject[] = [];
  const labels = new Map<string, Record<string, string>>();
  const policies = new Set<string>();
  for (const o of objects) {
    if (!o?.metadata?.name) continue;
    if (o.kind === 'Namespace' && (o.apiVersion ?? 'v1') === 'v1')
      labels.set(o.metadata.name, { ...(o.metadata.labels ?? {}) });
    if (o.apiVersion === `${KIND_GROUP}/v1alpha1` && o.kind === 'VaultGuardrail')
      guardrails.push({ metadata: { name: o.metadata.name }, spec: o.spec ?? {} });
    if (o.apiVersion === `${KIND_GROUP}/v1alpha1` && o.kind === 'VaultPolicy')
      policies.add(`${o.metadata.namespace ?? 'default'}/${o.metadata.name}`);
  }
  return defaultContext({
    guardrails,
    namePrefix: prefix,
    namespaceLabels: (ns) => labels.get(ns),
    policyExists: (ns, name) => policies.has(`${ns}/${name}`),
  });
}

/**
 * Admission's deny findings for each VaultPolicy and VaultRoleBinding: the webhook's decision on
 * `kubectl apply` (mutation, then validation), then the controller's re-check of the stored object
 * (the same handler, as controller/reconcilers/common.ts admissionDenials calls it: UPDATE by the
 * controller, audit-only findings dropped). Keyed `<Kind> <ns>/<name>` for computePlan.
 */
export function admissionRefusals(objects: readonly KubeObj[], prefix: string): Map<string, Refusal[]> {
  const ctx = contextOf(objects, prefix);
  const out = new Map<string, Refusal[]>();
  for (const [i, o] of objects.entries()) {
    if (
      !o?.metadata?.name ||
      (o.kind !== 'VaultPolicy' && o.kind !== 'VaultRoleBinding') ||
      !(o.apiVersion ?? '').startsWith(`${KIND_GROUP}/`)
    )
      continue;
    const [group = '', version = ''] = (o.apiVersion ?? '').split('/');
    const gvk = { group, version, kind: o.kind };
    const handler = defaultRegistry().get(gvk);
    const namespace = o.metadata.namespace ?? 'default';
    const object = structuredClone({ ...o, metadata: { ...o.metadata, namespace } }) as unknown as Record<
      string,
      unknown
    >;
    const base: AdmissionRequest = {
      uid: `vaultgate-plan-${i}`,
      kind: gvk,
      resource: { group, version, resource: `${o.kind.toLowerCase()}s` },
      name: o.metadata.name,
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'vaultgate-plan' },
      object,
      dryRun: true,
    };
    const { object: stored } = decideSync(base, ctx);
    const seen = new Set<string>();
    const refusals: Refusal[] = [];
    if (!handler) {
      refusals.push({
        field: 'apiVersion',
        rule: 'admission.unserved-version',
        message: `${o.kind} ${o.apiVersion ?? ''} is not served by vaultgate`,
      });
    } else {
      const asStored = stored ?? object;
      const webhook = handler.validate(asStored, undefined, ctx, base);
      const recheck = handler.validate(asStored, undefined, ctx, {
        ...base,
        uid: `controller-recheck-${i}`,
        operation: 'UPDATE',
        userInfo: { username: 'system:vaultgate-controller' },
      });
      for (const f of [...webhook, ...recheck]) {
        if (f.severity !== 'deny' || f.auditOnly) continue;
        const key = `${f.field}\0${f.rule}\0${f.message}`;
        if (seen.has(key)) continue;
        seen.add(key);
        refusals.push({ field: f.field, rule: f.rule, message: f.message });
      }
    }
    if (refusals.length) out.set(`${o.kind} ${namespace}/${o.metadata.name}`, refusals);
  }
  return out;
}
