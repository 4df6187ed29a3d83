// dataFrom[].rewrite as ESO's esutils.RewriteMap: operations applied in order to the key names
// (regexp: Go ReplaceAllString; transform: a template with `.value` = the key; merge: JSON values
// merged into keys or one JSON document).
import { compileGoRegexp, GoRegexpError, replaceAllGo, goJson } from '../golang/index.ts';
import { goStringMap, renderTemplate, TemplateError } from './template.ts';
import { withRenderDeadline } from '../golang/template/index.ts';

/** The deadline of templates rendered in process (rewrite transforms: one key name each). */
export const IN_PROCESS_DEADLINE_MS = 250;
import { byteValue } from './values.ts';
import { EsoDataError } from './errors.ts';
import { ReconcileError } from '../kube/reconcile-error.ts';

export interface RewriteOperation {
  regexp?: { source: string; target: string };
  transform?: { template: string };
  merge?: {
    into?: string;
    priority?: string[];
    priorityPolicy?: 'Strict' | 'IgnoreNotFound';
    conflictPolicy?: 'Error' | 'Ignore';
    strategy?: 'Extract' | 'JSON';
  };
}

export function rewriteMap(
  ops: readonly RewriteOperation[] | undefined,
  input: Map<string, Buffer>,
): Map<string, Buffer> {
  let out = input;
  (ops ?? []).forEach((op, i) => {
    try {
      out = rewriteOne(op, out);
    } catch (e) {
      // Our own messages name keys and positions; a library's could quote a value: fixed text instead.
      const own = e instanceof TemplateError || e instanceof GoRegexpError || e instanceof ReconcileError;
      throw new EsoDataError(
        `failed rewrite operation[${i}]: ${own ? e.message : 'the operation failed (details withheld: they could contain secret data)'}`,
      );
    }
  });
  return out;
}

function rewriteOne(op: RewriteOperation, input: Map<string, Buffer>): Map<string, Buffer> {
  if (op.merge) return rewriteMerge(op.merge, input);
  if (op.regexp) {
    const re = compileGoRegexp(op.regexp.source);
    const out = new Map<string, Buffer>();
    for (const [k, v] of input) out.set(replaceAllGo(re, k, op.regexp.target), v);
    return out;
  }
  if (op.transform) {
    const out = new Map<string, Buffer>();
    const { template } = op.transform;
    // Rendered on the controller's thread (key names): every key of the operation shares one short deadline.
    withRenderDeadline(IN_PROCESS_DEADLINE_MS, `${IN_PROCESS_DEADLINE_MS}ms`, () => {
      for (const [k, v] of input) out.set(renderTemplate(template, goStringMap({ value: k })), v);
    });
    return out;
  }
  return input;
}

function rewriteMerge(op: NonNullable<RewriteOperation['merge']>, input: Map<string, Buffer>): Map<string, Buffer> {
  const priority = op.priority ?? [];
  const keys = [...input.keys()]
    .filter((k) => !priority.includes(k))
    .sort()
    .concat(priority);
  const merged: Record<string, unknown> = {};
  const conflicts: string[] = [];
  for (const key of keys) {
    const value = input.get(key);
    if (value === undefined) {
      if (op.priorityPolicy === 'IgnoreNotFound') continue;
      throw new EsoDataError(`merge failed with key ${JSON.stringify(key)} not found in input map`);
    }
    let obj: unknown;
    try {
      obj = JSON.parse(value.toString('utf8'));
    } catch {
      throw new EsoDataError(`merge failed with failed to unmarshal JSON of key ${JSON.stringify(key)}`);
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj))
      throw new EsoDataError(`merge failed: the value of key ${JSON.stringify(key)} is not a JSON object`);
    for (const [k, v] of Object.entries(obj as Record<string, unknown>)) {
      if (Object.prototype.hasOwnProperty.call(merged, k)) conflicts.push(k);
      merged[k] = v;
    }
  }
  if (op.conflictPolicy !== 'Ignore' && conflicts.length > 0)
    throw new EsoDataError(`merge failed with conflicts: ${conflicts.join(', ')}`);
  if ((op.strategy ?? 'Extract') === 'Extract') {
    return new Map(Object.entries(merged).map(([k, v]) => [k, byteValue(v)]));
  }
  if (!op.into) throw new EsoDataError("merge failed with missing 'into' field");
  const out = new Map(input);
  out.set(op.into, Buffer.from(goJson(merged, true), 'utf8'));
  return out;
}
