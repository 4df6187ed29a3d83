// Rule "schema.*": the object against its kind's JSON Schema (the same one the CRD carries).
import { validateObject } from '../../schemas/validator.ts';
import type { Finding, KubeObject } from './finding.ts';

export function schemaFindings(obj: KubeObject): Finding[] {
  return validateObject(obj).map((p) => ({ field: p.field, rule: p.rule, message: p.message, severity: p.severity }));
}
