// The pure admission core: AdmissionRequest + AdmissionContext → AdmissionDecision. No I/O.
// Mutation changes a deep copy and diffs it into a JSON Patch (as controller-runtime's
// PatchResponseFromRaw), so a patch never adds under a missing parent and keys are escaped (`~1`)
// (json-patch.ts).
// Validation runs every rule and reports every finding, not just the first.
import { applyPatch } from 'rfc6902';
import type { AdmissionContext } from '../admission/context.ts';
import type { AdmissionDecision, AdmissionRequest, AdmissionResponse } from '../admission/types.ts';
import { cloneJson, jsonPatch } from './json-patch.ts';
import { KindRegistry, type Finding, type KindHandler, type KubeObject } from '../admission/kinds.ts';
import { vaultgateHandlers } from '../rules/index.ts';
import * as esoRules from '../rules/eso/index.ts';
import { sentence } from '../rules/finding.ts';
import { gate, withinLimits } from './size-gate.ts';

/** ESO handlers, once webhook/rules/eso/index.ts exports `esoHandlers: KindHandler[]`. */
function esoHandlers(): KindHandler[] {
  const exported = (esoRules as unknown as { esoHandlers?: unknown }).esoHandlers;
  return Array.isArray(exported) ? (exported as KindHandler[]) : [];
}

let registry: KindRegistry | undefined;
/** Every kind vaultgate admits: the vaultgate kinds and the ESO-compatible ones. */
export function defaultRegistry(): KindRegistry {
  registry ??= new KindRegistry([...vaultgateHandlers, ...esoHandlers()]);
  return registry;
}

function allow(req: AdmissionRequest, rules: string[] = []): AdmissionDecision {
  return { response: { uid: req.uid, allowed: true }, rules, patchOps: [] };
}

function isObject(v: unknown): v is KubeObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Requests the core passes through untouched: deletes, connects, and subresources such as status. */
function passesThrough(req: AdmissionRequest): boolean {
  return req.operation === 'DELETE' || req.operation === 'CONNECT' || Boolean(req.subResource);
}

/** A denial for a kind/version in a group we serve but a version we do not (e.g. ESO v1beta1). */
function unservedVersion(req: AdmissionRequest, reg: KindRegistry): AdmissionDecision | undefined {
  const { group, version, kind } = req.kind;
  if (!reg.servesGroup(group) || reg.get(req.kind)) return undefined;
  const served = reg.versionsOf(group, kind);
  const message = served.length
    ? `${kind} ${group}/${version} is not served by vaultgate; use ${served.map((v) => `${group}/${v}`).join(' or ')}`
    : `kind ${kind} is not served by vaultgate in group ${group}`;
  return refusal(req, 'admission.unserved-version', message);
}

/** A denial the core makes before any kind's rules run: 403 Invalid, the message naming its rule. */
function refusal(req: AdmissionRequest, rule: string, message: string): AdmissionDecision {
  return {
    response: {
      uid: req.uid,
      allowed: false,
      status: { code: 403, reason: 'Invalid', message: `${message} (rule ${rule})`, status: 'Failure' },
    },
    rules: [rule],
    patchOps: [],
  };
}

/** Mutating webhook: defaults and normalisation as a JSON Patch. */
export function mutate(req: AdmissionRequest, ctx: AdmissionContext, reg = defaultRegistry()): AdmissionDecision {
  if (passesThrough(req)) return allow(req);
  const handler = reg.get(req.kind);
  if (!handler?.mutate || !isObject(req.object)) return allow(req);
  // Nothing is copied or diffed before the size gate: an oversized object is refused here already.
  const oversize = gate(handler, req.object, isObject(req.oldObject) ? req.oldObject : undefined);
  if (oversize.length) return decisionFromFindings(req, oversize);
  const mutated = cloneJson(req.object);
  handler.mutate(mutated, ctx, req);
  const patchOps = jsonPatch(req.object, mutated);
  const response: AdmissionResponse = { uid: req.uid, allowed: true };
  if (patchOps.length) {
    response.patchType = 'JSONPatch';
    response.patch = Buffer.from(JSON.stringify(patchOps)).toString('base64');
  }
  return { response, rules: patchOps.length ? ['mutation.defaults'] : [], patchOps };
}

/** Validating webhook: schema + semantic rules + guardrails. */
export function validate(req: AdmissionRequest, ctx: AdmissionContext, reg = defaultRegistry()): AdmissionDecision {
  if (passesThrough(req)) return allow(req);
  const handler = reg.get(req.kind);
  if (!handler) return unservedVersion(req, reg) ?? allow(req);
  if (!isObject(req.object)) return refusal(req, 'admission.no-object', 'the request carries no object');
  const old = isObject(req.oldObject) ? req.oldObject : undefined;
  // The size gate before any rule parses anything (raw HCL, templates): see size-gate.ts.
  const oversize = gate(handler, req.object, old);
  if (oversize.length) return decisionFromFindings(req, oversize);
  // An oldObject over the limits (the apiserver stores none such; a forged review may carry one) is not
  // read either: the rules that compare with it (widening warnings, ratchet) go without.
  return decisionFromFindings(
    req,
    handler.validate(req.object, old && withinLimits(handler, old) ? old : undefined, ctx, req),
  );
}

/** Turn findings into the response: denials → 403 with one sentence each; warnings; audit-only annotations. */
export function decisionFromFindings(req: AdmissionRequest, findings: Finding[]): AdmissionDecision {
  const rules = [...new Set(findings.map((f) => f.rule))];
  const denials = findings.filter((f) => f.severity === 'deny');
  const warnings = findings.filter((f) => f.severity === 'warn' && !f.auditOnly).map(sentence);
  const audited = findings.filter((f) => f.auditOnly).map(sentence);
  const response: AdmissionResponse = { uid: req.uid, allowed: denials.length === 0 };
  if (denials.length) {
    const forbidden = denials.some((f) => f.rule.startsWith('guardrail.'));
    response.status = {
      code: 403,
      reason: forbidden ? 'Forbidden' : 'Invalid',
      message: denials.map(sentence).join('\n'),
      status: 'Failure',
    };
  }
  if (warnings.length) response.warnings = warnings;
  if (rules.length) {
    response.auditAnnotations = { rules: rules.join(',') };
    if (audited.length) response.auditAnnotations['guardrail-audit'] = JSON.stringify(audited);
  }
  return { response, rules, patchOps: [] };
}

/** Mutating webhook entry point (kept async for the HTTP layer; the work is synchronous). */
export function reviewMutation(req: AdmissionRequest, ctx: AdmissionContext): Promise<AdmissionDecision> {
  return Promise.resolve(mutate(req, ctx));
}

/** Validating webhook entry point. */
export function reviewValidation(req: AdmissionRequest, ctx: AdmissionContext): Promise<AdmissionDecision> {
  return Promise.resolve(validate(req, ctx));
}

/** Mutation then validation of the mutated object, as the apiserver would chain them (CLI, tests). */
export function decideSync(
  req: AdmissionRequest,
  ctx: AdmissionContext,
  reg: KindRegistry = defaultRegistry(),
): { mutation: AdmissionDecision; validation: AdmissionDecision; object: KubeObject | undefined } {
  const mutation = mutate(req, ctx, reg);
  let object = isObject(req.object) ? req.object : undefined;
  if (object && mutation.patchOps.length) {
    object = structuredClone(object);
    applyOps(object, mutation.patchOps);
  }
  const validation = validate({ ...req, object: object ?? req.object ?? null }, ctx, reg);
  return { mutation, validation, object };
}

export function decide(
  req: AdmissionRequest,
  ctx: AdmissionContext,
): Promise<{ mutation: AdmissionDecision; validation: AdmissionDecision }> {
  const { mutation, validation } = decideSync(req, ctx);
  return Promise.resolve({ mutation, validation });
}

function applyOps(obj: KubeObject, ops: AdmissionDecision['patchOps']): void {
  const errors = applyPatch(obj, ops as Parameters<typeof applyPatch>[1]).filter(Boolean);
  if (errors.length) throw new Error(`internal error: the mutation patch does not apply: ${String(errors[0])}`);
}
