// Turning what happened into audit events, with nothing secret in them: an admission event carries
// the object's identity, the user, the verdict, rule ids, warnings and the *paths* of patch operations;
// never the object, its data or the patch values. A Vault write carries names and a content hash.
import {
  canonicalJson,
  sha256Hex,
  type AdmissionAuditEvent,
  type AdmissionCaller,
  type AdmissionOutcome,
  type VaultWriteAuditEvent,
} from './record.ts';

// The fields of an admission decision and request this reads, structurally: the webhook's
// AdmissionDecision and AdmissionRequest fit them, and the trail stays below the webhook (no import up).
export interface AdmissionDecision {
  response: { uid?: string; allowed: boolean; status?: { message?: string }; warnings?: string[] };
  rules: string[];
  patchOps: ReadonlyArray<{ op: string; path: string }>;
}
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  name?: string;
  namespace?: string;
  operation: string;
  dryRun?: boolean;
  userInfo: { username?: string; groups?: string[] };
  object?: Record<string, unknown> | null;
  oldObject?: Record<string, unknown> | null;
}

const MAX_TEXT = 1000;
const MAX_ITEMS = 100;

function clip(s: string): string {
  return s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT - 1)}…` : s;
}

export function admissionOutcome(decision: AdmissionDecision): AdmissionOutcome {
  if (!decision.response.allowed) return 'denied';
  return decision.patchOps.length > 0 ? 'mutated' : 'allowed';
}

/**
 * The audit event of one admission decision (call once per webhook call; the mutating and validating
 * webhooks each record their own decision for the same request uid).
 */
export function auditAdmission(
  decision: AdmissionDecision,
  request: AdmissionRequest,
  opts: { webhook?: 'mutating' | 'validating'; caller?: AdmissionCaller } = {},
): AdmissionAuditEvent {
  const k = request.kind;
  const message = decision.response.allowed ? undefined : decision.response.status?.message;
  return {
    type: 'admission',
    ...(opts.webhook ? { webhook: opts.webhook } : {}),
    uid: request.uid,
    kind: k.group ? `${k.group}/${k.version}/${k.kind}` : `${k.version}/${k.kind}`,
    ...(request.namespace ? { namespace: request.namespace } : {}),
    ...(request.name || objectName(request) ? { name: request.name || objectName(request) } : {}),
    operation: request.operation,
    ...(request.dryRun ? { dryRun: true } : {}),
    user: {
      ...(request.userInfo.username ? { username: request.userInfo.username } : {}),
      ...(request.userInfo.groups?.length ? { groups: request.userInfo.groups.slice(0, MAX_ITEMS) } : {}),
    },
    outcome: admissionOutcome(decision),
    rules: [...new Set(decision.rules)].slice(0, MAX_ITEMS),
    warnings: (decision.response.warnings ?? []).slice(0, MAX_ITEMS).map(clip),
    ...(message ? { message: clip(message) } : {}),
    patch: decision.patchOps.slice(0, MAX_ITEMS).map((op) => ({ op: op.op, path: op.path })),
    ...(opts.caller ? { caller: { ...opts.caller } } : {}),
  };
}

/** CREATE with generateName has no name yet; only metadata.name is read, nothing else of the object. */
function objectName(request: AdmissionRequest): string | undefined {
  const meta = (request.object ?? request.oldObject)?.metadata;
  const name = typeof meta === 'object' && meta !== null ? (meta as { name?: unknown }).name : undefined;
  return typeof name === 'string' && name ? name : undefined;
}

/** A Vault write as the controller reports it: the audit event's fields, with the content itself (hashed here, never kept). */
export type VaultWriteInput = Omit<VaultWriteAuditEvent, 'type' | 'contentSha256'> & {
  /** What was written (policy text, role body, KV custom metadata; never KV secret data): hashed, not kept. */
  content?: string | Record<string, unknown>;
};

/** The audit event of one Vault write by the controller. */
export function auditVaultWrite(input: VaultWriteInput): VaultWriteAuditEvent {
  const content =
    input.content === undefined
      ? undefined
      : typeof input.content === 'string'
        ? input.content
        : canonicalJson(input.content);
  return {
    type: 'vault-write',
    action: input.action,
    object: input.object,
    vaultName: input.vaultName,
    ...(input.mount ? { mount: input.mount } : {}),
    ...(input.owner ? { owner: { ...input.owner } } : {}),
    ...(input.reason ? { reason: clip(input.reason) } : {}),
    ...(content !== undefined ? { contentSha256: sha256Hex(content) } : {}),
    ...(input.kvVersion !== undefined ? { kvVersion: input.kvVersion } : {}),
    ...(input.change ? { change: clip(input.change) } : {}),
  };
}

/** JSON with object keys sorted, so equal content hashes equally (the trail's own canonical form). */
export { canonicalJson };
