// Rules "vaultguardrail.*": a guardrail must itself make sense before it can judge anything.
import type { AdmissionContext } from '../admission/context.ts';
import type { KindHandler } from '../admission/kinds.ts';
import type { AdmissionRequest } from '../admission/types.ts';
import { VAULTGATE_GROUP, VAULTGATE_VERSION } from '../../schemas/kinds.ts';
import { hasNamespaceTemplate, pathForbiddenBy, pathProblems } from '../../policy/paths.ts';
import { deny, isRecord, warn, type Finding, type KubeObject } from './finding.ts';
import { mutateOwnership } from './common.ts';
import { DEFAULT_FORBIDDEN_CAPABILITIES, DEFAULT_FORBIDDEN_PATHS } from './guardrails.ts';
import { selectorProblems } from '../../kube/label-selector.ts';
import { schemaThenSpecFindings } from './schema.ts';

const MODES = ['enforce', 'warn', 'audit'];

/** Rule "vaultguardrail.path-template": each allowed/forbidden pattern is a valid path with at most {{namespace}}. */
function templateFindings(spec: Record<string, unknown>): Finding[] {
  const out: Finding[] = [];
  for (const key of ['allowedPaths', 'forbiddenPaths'] as const) {
    const list = spec[key];
    if (!Array.isArray(list)) continue;
    list.forEach((p, i) => {
      if (typeof p !== 'string') return;
      for (const problem of pathProblems(p, { allowNamespaceTemplate: true })) {
        out.push(deny(`spec.${key}[${i}]`, 'vaultguardrail.path-template', problem.message));
      }
    });
  }
  const allowed = Array.isArray(spec.allowedPaths)
    ? spec.allowedPaths.filter((p): p is string => typeof p === 'string')
    : [];
  const forbidden = Array.isArray(spec.forbiddenPaths)
    ? spec.forbiddenPaths.filter((p): p is string => typeof p === 'string')
    : DEFAULT_FORBIDDEN_PATHS;
  allowed.forEach((a, i) => {
    if (pathProblems(a, { allowNamespaceTemplate: true }).length) return;
    if (!hasNamespaceTemplate(a)) {
      out.push(
        warn(
          `spec.allowedPaths[${i}]`,
          'vaultguardrail.shared-path',
          `"${a}" has no {{namespace}}: every selected namespace may grant access to the same paths`,
        ),
      );
    }
    const f = forbidden.find(
      (x) => pathProblems(x, { allowNamespaceTemplate: true }).length === 0 && pathForbiddenBy(a, x),
    );
    if (f !== undefined)
      out.push(
        warn(
          `spec.allowedPaths[${i}]`,
          'vaultguardrail.allowed-but-forbidden',
          `"${a}" reaches the forbidden path "${f}"; rules there stay forbidden`,
        ),
      );
  });
  return out;
}

function modeFindings(spec: Record<string, unknown>): Finding[] {
  const mode = spec.mode;
  if (mode === undefined || (typeof mode === 'string' && MODES.includes(mode))) return [];
  return [
    deny(
      'spec.mode',
      'vaultguardrail.mode',
      `${JSON.stringify(mode)} is not a mode: use enforce (refuse), warn (admit with warnings) or audit (admit, record only)`,
    ),
  ];
}

export function validateVaultGuardrail(
  obj: KubeObject,
  _old: KubeObject | undefined,
  _ctx: AdmissionContext,
  _req: AdmissionRequest,
): Finding[] {
  return schemaThenSpecFindings(obj, (spec) => [
    ...templateFindings(spec),
    ...modeFindings(spec),
    ...(isRecord(spec.namespaceSelector) ? selectorProblems(spec.namespaceSelector) : []).map((p) =>
      deny(`spec.namespaceSelector.${p.field}`, 'vaultguardrail.selector', p.message),
    ),
  ]);
}

/** The CRD defaults, applied here too so `vaultgate validate` shows what the cluster will store. */
export function mutateVaultGuardrail(obj: KubeObject, _ctx: AdmissionContext, req: AdmissionRequest): void {
  mutateOwnership(obj, req);
  const spec = obj.spec;
  if (!isRecord(spec)) return;
  spec.mode ??= 'enforce';
  spec.forbiddenCapabilities ??= [...DEFAULT_FORBIDDEN_CAPABILITIES];
  spec.forbiddenPaths ??= [...DEFAULT_FORBIDDEN_PATHS];
}

export const vaultGuardrailHandler: KindHandler = {
  group: VAULTGATE_GROUP,
  version: VAULTGATE_VERSION,
  kind: 'VaultGuardrail',
  validate: validateVaultGuardrail,
  mutate: mutateVaultGuardrail,
};
