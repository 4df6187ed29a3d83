// Server-side-apply field ownership for the Kubernetes simulator, close enough to structured-merge-diff
// for what vaultgate relies on: per-manager field sets in metadata.managedFields (FieldsV1 format),
// 409 conflicts when an applier sets a field another manager owns to a different value, `force` taking
// ownership, fields dropped from an applier's intent removed when nobody else owns them, and Update
// operations (PUT/PATCH/POST) taking ownership of the fields they change.
// Simplification (documented): every list is atomic (real SSA merges lists marked listType=map/set by key).
import { isDeepStrictEqual } from 'node:util';

export type Path = string[];
type Obj = Record<string, unknown>;

export interface ManagedEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Obj;
  subresource?: string;
}

/** Metadata fields set by the server, never owned. */
const SYSTEM_META = new Set([
  'name',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'managedFields',
  'selfLink',
  'generateName',
]);

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Leaf paths of the fields in scope: `status` only for the status subresource, everything else otherwise. */
export function leafPaths(obj: Obj, scope: 'main' | 'status', hasStatusSubresource: boolean): Path[] {
  const out: Path[] = [];
  const walk = (v: unknown, path: Path): void => {
    if (isObj(v) && Object.keys(v).length > 0) for (const [k, c] of Object.entries(v)) walk(c, [...path, k]);
    else out.push(path);
  };
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind') continue;
    if (scope === 'status' ? k !== 'status' : k === 'status' && hasStatusSubresource) continue;
    if (k === 'metadata' && isObj(v)) {
      for (const [mk, mv] of Object.entries(v)) if (!SYSTEM_META.has(mk)) walk(mv, ['metadata', mk]);
      continue;
    }
    walk(v, [k]);
  }
  return out;
}

export function getAt(obj: unknown, path: Path): unknown {
  let cur = obj;
  for (const k of path) {
    if (!isObj(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function setAt(obj: Obj, path: Path, value: unknown): void {
  let cur = obj;
  for (const k of path.slice(0, -1)) {
    if (!isObj(cur[k])) cur[k] = {};
    cur = cur[k] as Obj;
  }
  cur[path[path.length - 1]!] = value;
}

function deleteAt(obj: Obj, path: Path): void {
  const parents: Obj[] = [];
  let cur: unknown = obj;
  for (const k of path.slice(0, -1)) {
    if (!isObj(cur)) return;
    parents.push(cur);
    cur = cur[k];
  }
  if (!isObj(cur)) return;
  delete cur[path[path.length - 1]!];
  // drop maps left empty by the removal, as SSA does for maps it created
  for (let i = path.length - 2; i >= 1; i--) {
    const parent = parents[i]!;
    const child = parent[path[i]!];
    if (isObj(child) && Object.keys(child).length === 0) delete parent[path[i]!];
    else break;
  }
}

const overlaps = (a: Path, b: Path): boolean => {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
};

export function toFieldsV1(paths: Path[]): Obj {
  const root: Obj = {};
  for (const p of paths) {
    let cur = root;
    for (const k of p) {
      const fk = `f:${k}`;
      if (!isObj(cur[fk])) cur[fk] = {};
      cur = cur[fk] as Obj;
    }
  }
  return root;
}

export function fromFieldsV1(tree: Obj): Path[] {
  const out: Path[] = [];
  const walk = (node: Obj, path: Path): void => {
    const keys = Object.keys(node).filter((k) => k.startsWith('f:'));
    if (keys.length === 0 && path.length > 0) out.push(path);
    for (const k of keys) walk(node[k] as Obj, [...path, k.slice(2)]);
  };
  walk(tree, []);
  return out;
}

export interface Conflict {
  manager: string;
  field: string;
}

export class ApplyConflictError extends Error {
  constructor(
    readonly conflicts: Conflict[],
    apiVersion: string,
  ) {
    const n = conflicts.length;
    const list = conflicts.map((c) => `conflict with "${c.manager}" using ${apiVersion}: ${c.field}`).join('\n- ');
    super(n === 1 ? `Apply failed with 1 conflict: ${list}` : `Apply failed with ${n} conflicts: \n- ${list}`);
  }
}

const fieldString = (p: Path): string => `.${p.join('.')}`;

interface Ctx {
  apiVersion: string;
  now: string;
  subresource?: string;
  hasStatusSubresource: boolean;
}

function entriesOf(obj: Obj): ManagedEntry[] {
  const meta = obj.metadata as Obj | undefined;
  return ((meta?.managedFields as ManagedEntry[] | undefined) ?? []).map((e) => ({ ...e }));
}

function setEntry(
  entries: ManagedEntry[],
  ctx: Ctx,
  manager: string,
  operation: 'Apply' | 'Update',
  paths: Path[],
): ManagedEntry[] {
  const others = entries.filter(
    (e) => !(e.manager === manager && e.operation === operation && e.subresource === ctx.subresource),
  );
  const old = entries.find(
    (e) => e.manager === manager && e.operation === operation && e.subresource === ctx.subresource,
  );
  if (paths.length === 0) return others;
  const fieldsV1 = toFieldsV1(paths);
  const unchanged = old && isDeepStrictEqual(old.fieldsV1, fieldsV1);
  const entry: ManagedEntry = {
    manager,
    operation,
    apiVersion: ctx.apiVersion,
    time: unchanged ? old.time : ctx.now,
    fieldsType: 'FieldsV1',
    fieldsV1,
    ...(ctx.subresource ? { subresource: ctx.subresource } : {}),
  };
  return [...others, entry];
}

function removeFromOthers(
  entries: ManagedEntry[],
  ctx: Ctx,
  keep: (e: ManagedEntry) => boolean,
  taken: Path[],
): ManagedEntry[] {
  return entries.flatMap((e) => {
    if (keep(e) || e.subresource !== ctx.subresource) return [e];
    const paths = fromFieldsV1(e.fieldsV1).filter((q) => !taken.some((p) => overlaps(p, q)));
    return paths.length ? [{ ...e, fieldsV1: toFieldsV1(paths) }] : [];
  });
}

/**
 * Merge `applied` into `current` for `manager`. Returns the new object (managedFields updated) or throws
 * ApplyConflictError. `current` undefined = create.
 */
export function ssaApply(current: Obj | undefined, applied: Obj, manager: string, force: boolean, ctx: Ctx): Obj {
  const scope = ctx.subresource === 'status' ? 'status' : 'main';
  const base: Obj = current
    ? structuredClone(current)
    : { apiVersion: applied.apiVersion, kind: applied.kind, metadata: { ...(applied.metadata as Obj) } };
  const entries = entriesOf(base);
  const F = leafPaths(applied, scope, ctx.hasStatusSubresource);
  const mine = (e: ManagedEntry): boolean => e.manager === manager && e.operation === 'Apply';
  const conflicts: Conflict[] = [];
  const conflictPaths: Path[] = [];
  for (const e of entries) {
    if (mine(e) || e.subresource !== ctx.subresource) continue;
    for (const q of fromFieldsV1(e.fieldsV1)) {
      for (const p of F) {
        if (!overlaps(p, q) || isDeepStrictEqual(getAt(base, p), getAt(applied, p))) continue;
        conflicts.push({ manager: e.manager, field: fieldString(q) });
        conflictPaths.push(p);
        break;
      }
    }
  }
  if (conflicts.length && !force) throw new ApplyConflictError(conflicts, ctx.apiVersion);

  const previous = entries
    .filter((e) => mine(e) && e.subresource === ctx.subresource)
    .flatMap((e) => fromFieldsV1(e.fieldsV1));
  const ownedByOthers = entries
    .filter((e) => !mine(e) && e.subresource === ctx.subresource)
    .flatMap((e) => fromFieldsV1(e.fieldsV1));
  for (const q of previous) {
    if (F.some((p) => overlaps(p, q))) continue;
    if (ownedByOthers.some((o) => overlaps(o, q))) continue;
    deleteAt(base, q);
  }
  for (const p of F) setAt(base, p, structuredClone(getAt(applied, p)));

  let next = force ? removeFromOthers(entries, ctx, mine, conflictPaths) : entries;
  next = setEntry(next, ctx, manager, 'Apply', F);
  (base.metadata as Obj).managedFields = next;
  return base;
}

/** Record an Update operation: fields it changed become `manager`'s and leave every other manager's set. */
export function trackUpdate(old: Obj | undefined, updated: Obj, manager: string, ctx: Ctx): void {
  const scope = ctx.subresource === 'status' ? 'status' : 'main';
  const entries = old ? entriesOf(old) : [];
  const newLeaves = leafPaths(updated, scope, ctx.hasStatusSubresource);
  const oldLeaves = old ? leafPaths(old, scope, ctx.hasStatusSubresource) : [];
  const changed = newLeaves.filter((p) => !old || !isDeepStrictEqual(getAt(old, p), getAt(updated, p)));
  const removed = oldLeaves.filter((p) => getAt(updated, p) === undefined);
  const mineUpdate = (e: ManagedEntry): boolean => e.manager === manager && e.operation === 'Update';
  let next = removeFromOthers(entries, ctx, () => false, removed);
  next = removeFromOthers(next, ctx, mineUpdate, changed);
  const owned = next
    .filter((e) => mineUpdate(e) && e.subresource === ctx.subresource)
    .flatMap((e) => fromFieldsV1(e.fieldsV1));
  const merged = [...owned, ...changed.filter((p) => !owned.some((q) => q.join('\0') === p.join('\0')))];
  if (changed.length || removed.length || !old) next = setEntry(next, ctx, manager, 'Update', merged);
  ((updated.metadata ??= {}) as Obj).managedFields = next;
}
