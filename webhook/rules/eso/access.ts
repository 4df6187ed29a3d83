// Reading untyped admission objects safely: the webhook sees whatever JSON was sent, so every field
// is checked for its type before use instead of trusting the generated types.
import type { Finding, KubeObject, Severity } from '../../admission/kinds.ts';
import type { AdmissionRequest } from '../../admission/types.ts';

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function obj(v: unknown): Obj | undefined {
  return isObj(v) ? v : undefined;
}

export function list(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** ESO's rule: an empty class is every controller's; otherwise the classes must be equal. */
export function isOurClass(objectClass: string | undefined, ourClass: string): boolean {
  return !objectClass || objectClass === ourClass;
}

/** A namespaced object's namespace: the manifest's, else the request's (undefined: neither says). */
export function namespaceOf(o: KubeObject, req: AdmissionRequest): string | undefined {
  return str(obj(o.metadata)?.namespace) || req.namespace || undefined;
}

/** Whether a field is present in the manifest (ESO's Go types treat a set pointer as "given", even empty). */
export function has(o: Obj | undefined, key: string): boolean {
  return o !== undefined && o[key] !== undefined && o[key] !== null;
}

/** kubectl-style path join: `spec.data[0].secretKey`, map keys as `data[.dockerconfigjson]` (k8s field.Path style). */
export function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${key}]`;
}

/** Messages read as one clause: the core renders `<field>: <message> (rule <rule>)`, so no final period. */
export function finding(severity: Severity, field: string, rule: string, message: string): Finding {
  return { field, rule, message: message.replace(/\.$/, ''), severity };
}

export function deny(field: string, rule: string, message: string): Finding {
  return finding('deny', field, rule, message);
}

export function warn(field: string, rule: string, message: string): Finding {
  return finding('warn', field, rule, message);
}
