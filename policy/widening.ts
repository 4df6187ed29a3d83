// Does a policy change widen access? Used for the admission warning on VaultPolicy updates and by `vaultgate plan`.
import { CAPABILITIES, type AclRule } from './acl.ts';
import { pathWithin } from './paths.ts';

/**
 * What `next` allows that `prev` did not, as one admission warning, or undefined when nothing widens:
 * a capability on a path no earlier rule with that capability covered, or a deny that went away.
 * Conservative: priority between different patterns is not modelled, so a grant moved under a broader
 * pattern that already had it is not reported.
 */
export function summariseRuleWidening(before: readonly AclRule[], after: readonly AclRule[]): string | undefined {
  const caps = (r: AclRule) => r.capabilities.map((c) => c.toLowerCase());
  const grants = (rs: readonly AclRule[]) => rs.filter((r) => !caps(r).includes('deny'));
  const denies = (rs: readonly AclRule[]) => rs.filter((r) => caps(r).includes('deny'));
  const added = new Map<string, string[]>();
  for (const r of grants(after)) {
    for (const c of caps(r)) {
      if (!(CAPABILITIES as readonly string[]).includes(c)) continue;
      const covered = grants(before).some((o) => caps(o).includes(c) && pathWithin(r.path, o.path));
      if (!covered) added.set(r.path, [...(added.get(r.path) ?? []), c]);
    }
  }
  const parts = [...added].map(([path, cs]) => `${cs.map((c) => `+${c}`).join(' ')} on ${path}`);
  for (const d of denies(before)) {
    if (!denies(after).some((n) => pathWithin(d.path, n.path))) parts.push(`-deny on ${d.path}`);
  }
  return parts.length ? `widens access: ${parts.join('; ')}` : undefined;
}
