// Small helpers shared by the rule modules: building findings and reading loosely-typed objects.
import { isDeepStrictEqual } from 'node:util';
import type { Finding, KubeObject } from '../admission/kinds.ts';

export type { Finding, KubeObject };

export function deny(field: string, rule: string, message: string): Finding {
  return { field, rule, message, severity: 'deny' };
}

export function warn(field: string, rule: string, message: string): Finding {
  return { field, rule, message, severity: 'warn' };
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function recordAt(obj: unknown, key: string): Record<string, unknown> | undefined {
  const v = isRecord(obj) ? obj[key] : undefined;
  return isRecord(v) ? v : undefined;
}

export function stringAt(obj: unknown, key: string): string | undefined {
  const v = isRecord(obj) ? obj[key] : undefined;
  return typeof v === 'string' ? v : undefined;
}

export function stringsAt(obj: unknown, key: string): string[] | undefined {
  const v = isRecord(obj) ? obj[key] : undefined;
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
}

export function objectName(obj: KubeObject): string {
  return stringAt(obj.metadata, 'name') ?? '';
}

export function objectNamespace(obj: KubeObject, fallback?: string): string {
  return stringAt(obj.metadata, 'namespace') ?? fallback ?? '';
}

/** The readable sentence of a finding: `spec.rules[0].path: ... (rule vaultpolicy.path-syntax)`. */
export function sentence(f: Finding): string {
  return `${f.field ? `${f.field}: ` : ''}${f.message} (rule ${f.rule})`;
}

/**
 * Schema findings say "does not match a pattern" where a semantic rule on the same field says why;
 * keep the semantic one only, so each problem is reported once.
 */
export function withoutShadowedSchemaFindings(schema: Finding[], semantic: Finding[]): Finding[] {
  const explained = new Set(semantic.map((f) => f.field));
  return [...schema.filter((f) => !explained.has(f.field)), ...semantic];
}

/** Denials become warnings when the UPDATE cannot have made the object worse. */
export function ratchet(findings: Finding[], o: KubeObject, old: KubeObject | undefined): Finding[] {
  if (!old) return findings;
  const deleting = Boolean(recordAt(o, 'metadata')?.deletionTimestamp);
  if (!deleting && !isDeepStrictEqual(o.spec, old.spec)) return findings;
  return findings.map((f) =>
    f.severity === 'deny'
      ? {
          ...f,
          severity: 'warn',
          message: `${f.message} (tolerated: ${deleting ? 'the object is being deleted' : 'this update leaves spec unchanged'})`,
        }
      : f,
  );
}
