// metav1.LabelSelector matching, as apimachinery's labels.Selector: all matchLabels and all
// matchExpressions must hold; an empty (or absent) selector matches everything.
import type { LabelSelector } from '../../schemas/types.ts';

export function selectorMatches(selector: LabelSelector | undefined, labels: Record<string, string>): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, e.key);
    const value = labels[e.key];
    switch (e.operator) {
      case 'In': if (!has || !(e.values ?? []).includes(value ?? '')) return false; break;
      case 'NotIn': if (has && (e.values ?? []).includes(value ?? '')) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: return false; // an unknown operator selects nothing, as apimachinery refuses it
    }
  }
  return true;
}

/** Problems with a selector that apimachinery would refuse (values with Exists, none with In). */
export function selectorProblems(selector: LabelSelector | undefined): Array<{ field: string; message: string }> {
  const out: Array<{ field: string; message: string }> = [];
  (selector?.matchExpressions ?? []).forEach((e, i) => {
    const n = e.values?.length ?? 0;
    if ((e.operator === 'In' || e.operator === 'NotIn') && n === 0) out.push({ field: `matchExpressions[${i}].values`, message: `operator ${e.operator} needs at least one value` });
    if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && n > 0) out.push({ field: `matchExpressions[${i}].values`, message: `operator ${e.operator} takes no values` });
  });
  return out;
}
