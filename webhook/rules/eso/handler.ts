// The admission handler of an ESO kind (stores, the ExternalSecret family, generators): findings are the
// schema's plus the kind's rules', ratcheted (index.ts says why).
import type { AdmissionContext } from '../../admission/context.ts';
import type { Finding, KindHandler, KubeObject } from '../../admission/kinds.ts';
import type { AdmissionRequest } from '../../admission/types.ts';
import { ratchet } from '../finding.ts';
import { ratchetedFindings } from '../schema.ts';

/**
 * `rules` returns undefined for an object of another controller class: it is admitted untouched, its schema
 * unchecked too. `limits`: the kind's size limits (webhook/admission/kinds.ts), when it has any.
 */
export function esoKindHandler<C extends AdmissionContext>(
  kind: { group: string; version: string; kind: string },
  rules: (o: KubeObject, ctx: C, req: AdmissionRequest) => Finding[] | undefined,
  limits?: (o: KubeObject) => Finding[],
): KindHandler {
  return {
    ...kind,
    ...(limits ? { limits } : {}),
    tolerate: ratchet,
    validate(o: KubeObject, old: KubeObject | undefined, ctx: C, req: AdmissionRequest): Finding[] {
      const findings = rules(o, ctx, req);
      return findings ? ratchetedFindings(o, old, findings) : [];
    },
  };
}
