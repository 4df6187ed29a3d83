// Admission's finding for a Vault path a tenant writes in an ESO object (ExternalSecret keys and
// find.path, PushSecret remote keys, a store's mount and auth paths): vault/paths.ts decides,
// the finding names the field and the rule. The controller re-runs these rules before it reads or
// writes, and the Vault adapter checks the path it sends once more.
import type { Finding } from '../../admission/kinds.ts';
import { vaultPathProblems } from '../../../vault/paths.ts';
import { deny } from './access.ts';

export function vaultPathFindings(path: unknown, field: string, rule: string): Finding[] {
  if (typeof path !== 'string') return [];
  return vaultPathProblems(path).map((p) => deny(field, rule, p.message));
}
