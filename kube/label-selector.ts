// metav1.LabelSelector matching, as apimachinery's labels.Selector: all matchLabels and all
// matchExpressions must hold; an empty (or absent) selector matches everything. One matcher for the
// webhook's guardrails and the controller's ClusterSecretStore conditions.

/** The shape of metav1.LabelSelector (structural, so schema-generated types fit it). */
export interface LabelSelectorLike {
  matchLabels?: Record<string, string | undefined>;
  matchExpressions?: ReadonlyArray<{ key: string; operator: string; values?: readonly string[] }>;
}

export function selectorMatches(
  selector: LabelSelectorLike | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (!selector) return true;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (v === undefined) continue;
    if (l[k] !== v) return false;
  }
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const value = l[e.key] ?? '';
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !values.includes(value)) return false;
        break;
      case 'NotIn':
        if (has && values.includes(value)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false; // an unknown operator selects nothing, as apimachinery refuses it
    }
  }
  return true;
}

/** Problems with a selector that apimachinery would refuse (values with Exists, none with In). */
export function selectorProblems(selector: LabelSelectorLike | undefined): Array<{ field: string; message: string }> {
  const out: Array<{ field: string; message: string }> = [];
  (selector?.matchExpressions ?? []).forEach((e, i) => {
    const n = e.values?.length ?? 0;
    if ((e.operator === 'In' || e.operator === 'NotIn') && n === 0)
      out.push({ field: `matchExpressions[${i}].values`, message: `operator ${e.operator} needs at least one value` });
    if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && n > 0)
      out.push({ field: `matchExpressions[${i}].values`, message: `operator ${e.operator} takes no values` });
  });
  return out;
}
