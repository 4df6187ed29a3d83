// Sprig's dict functions (dict.go).
import { fail } from '../func.ts';
import { GoMap, goType } from '../values.ts';
import { isEmpty } from './lists.ts';

export function toMap(v: unknown): GoMap {
  return v instanceof GoMap ? v : new GoMap();
}

/** mergo.Merge / MergeWithOverwrite on map[string]interface{}. */
export function mergeInto(dst: GoMap, src: GoMap, overwrite: boolean): void {
  for (const [k, sv] of src) {
    const dv = dst.get(k);
    if (dst.has(k) && dv instanceof GoMap && sv instanceof GoMap) {
      mergeInto(dv, sv, overwrite);
      continue;
    }
    if (!dst.has(k)) dst.set(k, sv);
    else if (isEmpty(dv) && !isEmpty(sv)) dst.set(k, sv);
    else if (overwrite && !isEmpty(sv)) dst.set(k, sv);
  }
}

export function dig(...ps: unknown[]): unknown {
  if (ps.length < 3) fail('dig needs at least three arguments');
  const last = ps[ps.length - 1];
  if (!(last instanceof GoMap) || last.elem !== 'interface {}')
    return fail(`interface conversion: interface {} is ${goType(last)}, not map[string]interface {}`);
  const def = ps[ps.length - 2];
  const ks = ps
    .slice(0, -2)
    .map((k) => (typeof k === 'string' ? k : fail(`interface conversion: interface {} is ${goType(k)}, not string`)));
  let d: GoMap = last;
  for (let i = 0; i < ks.length; i++) {
    if (!d.has(ks[i]!)) return def;
    const step = d.get(ks[i]!);
    if (i === ks.length - 1) return step;
    if (!(step instanceof GoMap) || step.elem !== 'interface {}')
      return fail(`interface conversion: interface {} is ${goType(step)}, not map[string]interface {}`);
    d = step;
  }
  return def;
}
