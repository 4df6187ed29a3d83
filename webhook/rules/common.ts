// Mutations and checks every vaultgate kind shares: ownership label, who-applied annotations, and
// `spec.vaultName` being the derived `<prefix>.<namespace>.<name>`.
import type { AdmissionContext } from '../admission/context.ts';
import type { AdmissionRequest } from '../admission/types.ts';
import { vaultName } from '../../schemas/vault-names.ts';
import { deny, isRecord, objectName, objectNamespace, stringAt, type Finding, type KubeObject } from './finding.ts';

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'vaultgate';
export const LAST_APPLIED_BY = 'vaultgate.io/last-applied-by';
export const CREATED_BY = 'vaultgate.io/created-by';

function ensureMap(parent: Record<string, unknown>, key: string): Record<string, unknown> {
  const existing = parent[key];
  if (isRecord(existing)) return existing;
  const created: Record<string, unknown> = {};
  parent[key] = created;
  return created;
}

/**
 * Label and annotations. `last-applied-by` names who last changed the spec: an UPDATE that leaves the
 * spec alone (the controller adding its finalizer) does not take the credit.
 */
export function mutateOwnership(obj: KubeObject, req: AdmissionRequest): void {
  const metadata = ensureMap(obj, 'metadata');
  ensureMap(metadata, 'labels')[MANAGED_BY_LABEL] = MANAGED_BY_VALUE;
  const user = req.userInfo.username;
  if (!user) return;
  const annotations = ensureMap(metadata, 'annotations');
  const specChanged = req.operation !== 'UPDATE' || JSON.stringify(obj.spec) !== JSON.stringify(req.oldObject?.spec);
  if (specChanged || annotations[LAST_APPLIED_BY] === undefined) annotations[LAST_APPLIED_BY] = user;
  if (req.operation === 'CREATE') annotations[CREATED_BY] = user;
}

/** The namespace of a namespaced object: the request's (the apiserver's truth), else the manifest's. */
export function namespaceOf(obj: KubeObject, req: AdmissionRequest): string {
  return req.namespace || objectNamespace(obj);
}

export function derivedVaultName(obj: KubeObject, req: AdmissionRequest, ctx: AdmissionContext): string | undefined {
  const ns = namespaceOf(obj, req);
  const name = objectName(obj) || req.name || '';
  if (!ns || !name) return undefined;
  try {
    return vaultName(ctx.namePrefix, ns, name);
  } catch {
    return undefined;
  }
}

export function defaultVaultName(obj: KubeObject, req: AdmissionRequest, ctx: AdmissionContext): void {
  const spec = obj.spec;
  if (!isRecord(spec) || spec.vaultName !== undefined) return;
  const derived = derivedVaultName(obj, req, ctx);
  if (derived) spec.vaultName = derived;
}

export function vaultNameFindings(
  obj: KubeObject,
  req: AdmissionRequest,
  ctx: AdmissionContext,
  rule: string,
): Finding[] {
  const given = stringAt(obj.spec, 'vaultName');
  const derived = derivedVaultName(obj, req, ctx);
  if (given === undefined || derived === undefined || given === derived) return [];
  return [
    deny(
      'spec.vaultName',
      rule,
      `"${given}" is not the derived Vault name "${derived}" (<prefix>.<namespace>.<name>); remove the field and the webhook fills it in`,
    ),
  ];
}
