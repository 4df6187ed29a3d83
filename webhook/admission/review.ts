// PLACEHOLDER until the admission core lands: allows everything, patches nothing.
// The real implementation keeps these three signatures.
import type { AdmissionContext } from './context.ts';
import type { AdmissionDecision, AdmissionRequest } from './types.ts';

function allow(req: AdmissionRequest): AdmissionDecision {
  return { response: { uid: req.uid, allowed: true }, rules: [], patchOps: [] };
}
/** Mutating webhook: defaults and normalisation as a JSON Patch. */
export async function reviewMutation(req: AdmissionRequest, _ctx: AdmissionContext): Promise<AdmissionDecision> {
  return allow(req);
}
/** Validating webhook: schema + semantic rules + guardrails. */
export async function reviewValidation(req: AdmissionRequest, _ctx: AdmissionContext): Promise<AdmissionDecision> {
  return allow(req);
}
/** Mutation then validation of the mutated object, as the apiserver would chain them (CLI, tests). */
export async function decide(req: AdmissionRequest, ctx: AdmissionContext): Promise<{ mutation: AdmissionDecision; validation: AdmissionDecision }> {
  return { mutation: await reviewMutation(req, ctx), validation: await reviewValidation(req, ctx) };
}
