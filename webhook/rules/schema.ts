// Rule "schema.*": the object against its kind's JSON Schema (the same one the CRD carries).
import { validateObject } from '../../schemas/validator.ts';
import { type Finding, isRecord, type KubeObject, ratchet, withoutShadowedSchemaFindings } from './finding.ts';

export function schemaFindings(obj: KubeObject): Finding[] {
  return validateObject(obj).map((p) => ({ field: p.field, rule: p.rule, message: p.message, severity: p.severity }));
}

/**
 * A kind's findings: its schema's, then its semantic rules' over the spec (none without a spec); a schema
 * finding on a field a semantic rule explains is dropped, so each problem is reported once.
 */
export function schemaThenSpecFindings(
  obj: KubeObject,
  specFindings: (spec: Record<string, unknown>) => Finding[],
): Finding[] {
  const schema = schemaFindings(obj);
  return isRecord(obj.spec) ? withoutShadowedSchemaFindings(schema, specFindings(obj.spec)) : schema;
}

/**
 * An ESO kind's findings: its schema's plus its rules' (a schema finding on a field a rule explains is
 * dropped), ratcheted against the stored object (finding.ts `ratchet`).
 */
export function ratchetedFindings(obj: KubeObject, old: KubeObject | undefined, ruleFindings: Finding[]): Finding[] {
  return ratchet(withoutShadowedSchemaFindings(schemaFindings(obj), ruleFindings), obj, old);
}
