// Label and field selector parsing/matching for the simulator (apimachinery's labels.Parse grammar:
// `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, comma = AND).
type Req = { key: string; op: 'in' | 'notin' | 'exists' | '!exists'; values: string[] };

export class SelectorError extends Error {}

export function parseLabelSelector(sel: string | undefined): Req[] {
  if (!sel || !sel.trim()) return [];
  const reqs: Req[] = [];
  // split on commas not inside parentheses
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of sel) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  for (const raw of parts) {
    const p = raw.trim();
    let m: RegExpMatchArray | null;
    if ((m = p.match(/^([\w./-]+)\s+(in|notin)\s+\(([^)]*)\)$/))) {
      reqs.push({
        key: m[1]!,
        op: m[2] as 'in' | 'notin',
        values: m[3]!
          .split(',')
          .map((v) => v.trim())
          .filter(Boolean),
      });
    } else if ((m = p.match(/^([\w./-]+)\s*(==|=|!=)\s*([\w.-]*)$/))) {
      reqs.push({ key: m[1]!, op: m[2] === '!=' ? 'notin' : 'in', values: [m[3]!] });
    } else if ((m = p.match(/^!\s*([\w./-]+)$/))) {
      reqs.push({ key: m[1]!, op: '!exists', values: [] });
    } else if ((m = p.match(/^([\w./-]+)$/))) {
      reqs.push({ key: m[1]!, op: 'exists', values: [] });
    } else throw new SelectorError(`unable to parse requirement: "${p}"`);
  }
  return reqs;
}

export function matchesLabels(reqs: Req[], labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  return reqs.every((r) => {
    const has = Object.hasOwn(l, r.key);
    switch (r.op) {
      case 'in':
        return has && r.values.includes(l[r.key]!);
      case 'notin':
        return !has || !r.values.includes(l[r.key]!);
      case 'exists':
        return has;
      case '!exists':
        return !has;
    }
  });
}

/** Field selectors: metadata.name and metadata.namespace with =, == and != (what the apiserver supports for every kind). */
export function parseFieldSelector(
  sel: string | undefined,
): (obj: { metadata: { name: string; namespace?: string } }) => boolean {
  if (!sel || !sel.trim()) return () => true;
  const tests = sel.split(',').map((raw) => {
    const m = raw.trim().match(/^(metadata\.name|metadata\.namespace)\s*(==|=|!=)\s*(.*)$/);
    if (!m) throw new SelectorError(`field label not supported: ${raw.trim()}`);
    const [, field, op, value] = m;
    return (o: { metadata: { name: string; namespace?: string } }): boolean => {
      const v = field === 'metadata.name' ? o.metadata.name : (o.metadata.namespace ?? '');
      return op === '!=' ? v !== value : v === value;
    };
  });
  return (o) => tests.every((t) => t(o));
}
