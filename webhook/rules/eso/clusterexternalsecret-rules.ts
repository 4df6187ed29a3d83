// Admission rules for ClusterExternalSecret (ESO v1; ESO's webhook has none of its own, its CRD schema
// only). Its externalSecretSpec is checked with the ExternalSecret rules, so a mistake is reported once,
// on the cluster object, instead of as one failed ExternalSecret per namespace; refreshTime must be a
// Go duration and the selectors ones apimachinery accepts, or ESO's controller fails every reconcile.
// Tenancy is not decided here: each ExternalSecret it creates is admitted (webhook) and re-checked
// (controller) in its own namespace, under that namespace's guardrails, like any other.
import type { Finding } from '../../admission/kinds.ts';
import { type Obj, deny, list, obj, str, warn } from './access.ts';
import { parseGoDuration } from '../../../golang/index.ts';
import { selectorProblems } from '../../../kube/label-selector.ts';
import { validateExternalSecret } from './externalsecret-rules.ts';

const SPEC = 'spec.externalSecretSpec';

export function validateClusterExternalSecret(ces: Obj): Finding[] {
  const spec = obj(ces.spec);
  if (!spec) return [];
  const findings: Finding[] = [];
  const esSpec = obj(spec.externalSecretSpec);
  if (esSpec) {
    // The ExternalSecret rules speak of `spec.…`; here that spec sits at spec.externalSecretSpec.
    for (const f of validateExternalSecret({
      apiVersion: 'external-secrets.io/v1',
      kind: 'ExternalSecret',
      spec: esSpec,
    })) {
      findings.push({ ...f, field: f.field === 'spec' ? SPEC : f.field.replace(/^spec\./, `${SPEC}.`) });
    }
  }
  const refresh = str(spec.refreshTime);
  if (refresh !== undefined) {
    const parsed = parseGoDuration(refresh);
    if (!parsed.ok)
      findings.push(
        deny('spec.refreshTime', 'eso.ces.refresh-time', `refreshTime is not a duration: ${parsed.error}.`),
      );
    else if (parsed.ms < 0)
      findings.push(
        deny(
          'spec.refreshTime',
          'eso.ces.refresh-time',
          `refreshTime must not be negative (got ${JSON.stringify(refresh)}).`,
        ),
      );
  }
  const selectors: Array<[string, unknown]> = [
    ['spec.namespaceSelector', spec.namespaceSelector],
    ...list(spec.namespaceSelectors).map((s, i): [string, unknown] => [`spec.namespaceSelectors[${i}]`, s]),
  ];
  for (const [field, selector] of selectors) {
    const s = obj(selector);
    for (const p of selectorProblems(s)) findings.push(deny(`${field}.${p.field}`, 'eso.ces.selector', p.message));
    if (s && Object.keys(obj(s.matchLabels) ?? {}).length === 0 && list(s.matchExpressions).length === 0) {
      findings.push(
        warn(
          field,
          'eso.ces.every-namespace',
          "an empty selector selects every namespace, kube-system and vaultgate's own included (as in ESO).",
        ),
      );
    }
  }
  if (spec.namespaceSelector !== undefined && spec.namespaceSelector !== null) {
    findings.push(
      warn(
        'spec.namespaceSelector',
        'eso.ces.deprecated',
        'namespaceSelector is deprecated (ESO): use namespaceSelectors.',
      ),
    );
  }
  if (list(spec.namespaces).length === 0 && selectors.every(([, s]) => s === undefined || s === null)) {
    findings.push(
      warn(
        'spec',
        'eso.ces.no-namespaces',
        'neither namespaces nor namespaceSelectors is set: no ExternalSecret is created.',
      ),
    );
  }
  return findings;
}
