// admission.k8s.io/v1 shapes, as the apiserver sends and expects them. Only the fields vaultgate reads.

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}
export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: Record<string, unknown> | null;
  oldObject?: Record<string, unknown> | null;
  dryRun?: boolean;
  options?: unknown;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string; status?: 'Failure' | 'Success' };
  patch?: string; // base64 of a JSON Patch (RFC 6902)
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReview {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** What the pure core decided, with the detail the audit trail and metrics need. */
export interface AdmissionDecision {
  response: AdmissionResponse;
  /** Stable rule identifiers that fired (denials and warnings), e.g. `guardrail.forbidden-capability`. */
  rules: string[];
  /** JSON Patch operations, un-encoded, for audit summaries. Empty when nothing changes. */
  patchOps: Array<{ op: string; path: string; value?: unknown; from?: string }>;
}
