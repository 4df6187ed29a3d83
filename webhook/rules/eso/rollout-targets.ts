// vaultgate.io/rollout-restart-targets on an ExternalSecret: workloads of its own namespace only (an
// ExternalSecret must not restart another tenant's pods), kinds the coordinator restarts, valid names.
// Refused with the field and the rule rather than ignored: the controller ignores an unreadable list.
import type { Finding } from '../../admission/kinds.ts';
import { ROLLOUT_TARGETS_ANNOTATION, externalSecretRolloutTargets } from '../../../eso/rollout-targets.ts';
import { type Obj, child, deny, obj, str } from './access.ts';

export const ROLLOUT_TARGETS_RULE = 'eso.es.rollout-targets';

export function checkRolloutTargets(es: Obj): Finding[] {
  const annotations = obj(obj(es.metadata)?.annotations);
  const value = str(annotations?.[ROLLOUT_TARGETS_ANNOTATION]);
  if (value === undefined) return [];
  const field = child('metadata.annotations', ROLLOUT_TARGETS_ANNOTATION);
  const { refs, problems } = externalSecretRolloutTargets({
    metadata: { annotations: { [ROLLOUT_TARGETS_ANNOTATION]: value } },
  });
  const findings = problems.map((p) =>
    deny(
      field,
      ROLLOUT_TARGETS_RULE,
      `${p}; expected a comma-separated list such as "deployment/app,statefulset/db" of workloads in this namespace`,
    ),
  );
  if (problems.length === 0 && refs.length === 0)
    findings.push(
      deny(
        field,
        ROLLOUT_TARGETS_RULE,
        'names no workload; remove the annotation or list kind/name entries such as "deployment/app"',
      ),
    );
  const creation = str(obj(obj(es.spec)?.target)?.creationPolicy);
  if (creation === 'None' && refs.length > 0)
    findings.push(
      deny(
        field,
        ROLLOUT_TARGETS_RULE,
        'creationPolicy None writes no Secret, so nothing would restart these workloads',
      ),
    );
  return findings;
}
