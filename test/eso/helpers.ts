// Shared helpers for the ESO tests: manifests from YAML files, an ajv configured like
// schemas/validator.ts (draft-07, strict, Kubernetes annotation keywords), and handler calls.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { defaultContext, type AdmissionContext } from '../../webhook/admission/context.ts';
import type { Finding, KubeObject } from '../../webhook/admission/kinds.ts';
import type { AdmissionRequest } from '../../webhook/admission/types.ts';
import { esoHandlers } from '../../webhook/rules/eso/index.ts';

const root = new URL('../../', import.meta.url);

export function loadManifests(relativePath: string): KubeObject[] {
  const text = readFileSync(new URL(relativePath, root), 'utf8');
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubeObject)
    .filter((o) => o && typeof o === 'object');
}

let compiled: Map<string, ValidateFunction> | undefined;
export function schemaValidator(kind: string): ValidateFunction {
  if (!compiled) {
    const ajv = new Ajv({ allErrors: true, strict: true, allowUnionTypes: true, useDefaults: false });
    addFormatsModule.default(ajv);
    for (const keyword of [
      'x-kubernetes-int-or-string',
      'x-kubernetes-preserve-unknown-fields',
      'x-kubernetes-map-type',
      'tsType',
    ])
      ajv.addKeyword({ keyword });
    compiled = new Map();
    for (const [k, file] of [
      ['SecretStore', 'secretstore'],
      ['ClusterSecretStore', 'clustersecretstore'],
      ['ExternalSecret', 'externalsecret'],
    ] as const) {
      compiled.set(
        k,
        ajv.compile(JSON.parse(readFileSync(new URL(`schemas/${file}.schema.json`, root), 'utf8')) as object),
      );
    }
  }
  const v = compiled.get(kind);
  if (!v) throw new Error(`no schema for ${kind}`);
  return v;
}

/** Schema errors as "path: message" strings ([] = valid). */
export function schemaErrors(o: KubeObject): string[] {
  const v = schemaValidator(String(o.kind));
  return v(o) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || '/'}: ${e.message ?? e.keyword}`);
}

export function request(o: KubeObject, namespace = 'default'): AdmissionRequest {
  const kind = String(o.kind);
  return {
    uid: 'test',
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    kind: { group: 'external-secrets.io', version: kind === 'PushSecret' ? 'v1alpha1' : 'v1', kind },
    resource: {
      group: 'external-secrets.io',
      version: kind === 'PushSecret' ? 'v1alpha1' : 'v1',
      resource: `${kind.toLowerCase()}s`,
    },
    ...(kind === 'ClusterSecretStore' || kind === 'ClusterExternalSecret' ? {} : { namespace }),
    object: o,
  };
}

/** Findings of the registered handler for the object's kind. */
export function findings(o: KubeObject, ctx: AdmissionContext = defaultContext(), namespace = 'default'): Finding[] {
  const handler = esoHandlers.find((h) => h.kind === o.kind);
  if (!handler) throw new Error(`no handler for ${String(o.kind)}`);
  return handler.validate(o, undefined, ctx, request(o, namespace));
}

export const denials = (fs: Finding[]): Finding[] => fs.filter((f) => f.severity === 'deny');
export const warnings = (fs: Finding[]): Finding[] => fs.filter((f) => f.severity === 'warn');
export const rules = (fs: Finding[]): string[] => fs.map((f) => f.rule);

/**
 * A deep copy with fields set (or removed, for `undefined`) by dotted path, e.g.
 * `edit(store, { 'spec.provider.vault.auth': {...}, 'spec.data.0.secretKey': 'x' })`.
 */
export function edit(base: KubeObject, changes: Record<string, unknown>): KubeObject {
  const copy = structuredClone(base);
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.split('.');
    const last = keys.pop() as string;
    let node = copy as Record<string, unknown>;
    keys.forEach((k, i) => {
      const next = keys[i + 1] ?? last;
      if (typeof node[k] !== 'object' || node[k] === null) node[k] = /^\d+$/.test(next) ? [] : {};
      node = node[k] as Record<string, unknown>;
    });
    if (value === undefined) delete node[last];
    else node[last] = structuredClone(value);
  }
  return copy;
}
