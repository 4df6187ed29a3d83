// Reading back what policy/render.ts wrote: the ownership header (who vaultgate wrote a policy for) and a
// comparison of our rendered text with Vault's stored text that ignores layout but not meaning.
//
// Vault stores policy text byte for byte as written, so a reformat by a human (or a tool that re-indents)
// must not count as drift, while any changed token (a path, a capability, a parameter) must.
import { MANAGED_BY, type PolicyOwner } from './render.ts';

export interface PolicyOwnership {
  managedBy: string;
  namespace?: string;
  name?: string;
  uid?: string;
}

/**
 * The `# key: value` lines at the top of a policy (before the first non-comment line), or undefined when
 * the text has no `managed-by` header: a policy written by someone else.
 */
export function readOwnership(text: string): PolicyOwnership | undefined {
  const fields = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '') continue;
    if (!line.startsWith('#')) break;
    const m = /^#\s*([a-z-]+)\s*:\s*(.*?)\s*$/.exec(line);
    if (m?.[1] && !fields.has(m[1])) fields.set(m[1], m[2] ?? '');
  }
  const managedBy = fields.get('managed-by');
  if (managedBy === undefined) return undefined;
  return { managedBy, namespace: fields.get('namespace'), name: fields.get('name'), uid: fields.get('uid') };
}

export type OwnershipVerdict =
  /** Written by vaultgate for this very object (same namespace, name and uid). */
  | 'owned'
  /** Written by vaultgate for an earlier object of the same namespace/name (deleted and re-created). */
  | 'owned-previous'
  /** No vaultgate header, or a header naming another object: never touch without adoption. */
  | 'foreign';

/**
 * Whose policy this is. An earlier incarnation of the same namespace/name is still ours to overwrite
 * (its Vault name is derived from namespace/name alone, and that object is gone), but deletion requires
 * the exact uid so a re-created object never deletes what it did not write.
 */
export function ownershipOf(text: string, owner: PolicyOwner): OwnershipVerdict {
  const o = readOwnership(text);
  if (!o || o.managedBy !== MANAGED_BY) return 'foreign';
  if (o.namespace !== owner.namespace || o.name !== owner.name) return 'foreign';
  return o.uid === owner.uid ? 'owned' : 'owned-previous';
}

/**
 * Whether Vault's stored text means the same as ours: equal ownership headers and equal token sequences
 * once whitespace and comments are dropped. Reordering, an added rule, a changed string: all differ.
 */
export function policiesEquivalent(rendered: string, stored: string): boolean {
  const a = readOwnership(rendered);
  const b = readOwnership(stored);
  if (JSON.stringify(a) !== JSON.stringify(b)) return false;
  const ta = tokens(rendered);
  const tb = tokens(stored);
  if (!ta || !tb) return rendered === stored;
  return ta.length === tb.length && ta.every((t, i) => t === tb[i]);
}

/**
 * HCL1 tokens (strings with their escapes decoded, heredocs, numbers, identifiers, punctuation), without
 * comments and whitespace. undefined when the text does not tokenise (then only identical text is equal).
 */
export function tokens(text: string): string[] | undefined {
  const out: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '#' || (c === '/' && text[i + 1] === '/')) {
      while (i < n && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) return undefined;
      i = end + 2;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') {
        if (text[j] === '\\') j++;
        if (text[j] === '\n') return undefined;
        j++;
      }
      if (j >= n) return undefined;
      const raw = text.slice(i, j + 1);
      try {
        out.push(`s:${JSON.parse(raw) as string}`);
      } catch {
        out.push(`r:${raw}`); // an HCL escape JSON does not know: compare it literally
      }
      i = j + 1;
      continue;
    }
    if (c === '<' && text[i + 1] === '<') {
      const m = /^<<-?([A-Za-z_][A-Za-z0-9_]*)\r?\n/.exec(text.slice(i));
      if (!m) return undefined;
      const marker = m[1]!;
      const bodyStart = i + m[0].length;
      const rest = text.slice(bodyStart);
      // The first line that holds the marker alone (spaces and tabs around it): a fixed pattern whose
      // captured word is compared, rather than a RegExp built from the policy's text.
      const lineWord = /^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*$/gm;
      let end: RegExpExecArray | null;
      while ((end = lineWord.exec(rest)) && end[1] !== marker);
      if (!end) return undefined;
      out.push(`s:${rest.slice(0, end.index).replace(/\r?\n$/, '')}`);
      i = bodyStart + end.index + end[0].length;
      continue;
    }
    if ('{}[]=,:'.includes(c)) {
      out.push(c);
      i++;
      continue;
    }
    const m = /^[A-Za-z0-9_.+\-]+/.exec(text.slice(i, i + 256));
    if (!m) return undefined;
    out.push(`w:${m[0]}`);
    i += m[0].length;
  }
  return out;
}
