// metav1.LabelSelector matching (k8s.io/apimachinery/pkg/labels): matchLabels AND matchExpressions;
// an empty selector matches everything, a missing one is decided by the caller.
export interface LabelSelectorLike {
  matchLabels?: Record<string, string | undefined>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export function selectorMatches(selector: LabelSelectorLike, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (v === undefined) continue;
    if (l[k] !== v) return false;
  }
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In': if (!has || !values.includes(l[e.key]!)) return false; break;
      case 'NotIn': if (has && values.includes(l[e.key]!)) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: return false; // unknown operators never match (the apiserver would have refused them)
    }
  }
  return true;
}
