// `vaultgate plan`: the Vault writes the controller would make for manifests, as a unified diff.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { desiredState } from '../../audit/model.ts';
import { computePlan, renderPlan } from '../../audit/plan.ts';
import { loadManifests, readVaultState, vaultSysFromEnv } from '../../audit/sources.ts';
import { DEFAULT_PREFIX, prefixProblem } from '../../schemas/vault-names.ts';

export const summary = 'show what the controller would write, change or delete in Vault for manifests';

const HELP = `Usage: vaultgate plan -f <file|dir>... [--vault] [options]

Shows what the vaultgate controller would create, update or delete in Vault for these manifests:
one ACL policy per VaultPolicy (sys/policies/acl/<prefix>.<namespace>.<name>, rendered exactly as
the controller writes it) and one kubernetes-auth role per VaultRoleBinding
(auth/<mount>/role/<prefix>.<namespace>.<name>), as a unified diff for pull-request review.

Offline (default) every object is diffed against nothing. With --vault the diff is against Vault's
current text; objects under the prefix with no manifest are shown as deletes (only policies vaultgate
wrote, recognised by their ownership header; others are listed as skipped and never touched), and a
policy update that grants more than Vault has now is flagged "widens access: +read on ...".

Options:
  -f, --filename <path>     YAML/JSON manifests or directories (repeatable). Give the whole set: with
                            --vault, what is missing from it is planned for deletion
      --vault               compare with Vault ($VAULT_ADDR / --vault-addr, token from $VAULT_TOKEN)
      --vault-addr <url>
      --vault-token-env <NAME>  read the token from this variable instead of VAULT_TOKEN
      --prefix <prefix>     Vault name prefix (default "${DEFAULT_PREFIX}")
  -o, --output <format>     diff (default; colored on a terminal) or json
      --out <file>          write there instead of standard output
  -h, --help

Exit status: 0 nothing to change, 1 changes planned (like "terraform plan -detailed-exitcode" 2), 2 usage error.
`;

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: false, strict: true,
      options: {
        filename: { type: 'string', short: 'f', multiple: true }, vault: { type: 'boolean' }, 'vault-addr': { type: 'string' },
        'vault-token-env': { type: 'string' }, prefix: { type: 'string' }, output: { type: 'string', short: 'o' }, out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`vaultgate plan: ${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) { process.stdout.write(HELP); return 0; }
  const usage = (m: string) => { process.stderr.write(`vaultgate plan: ${m}\n`); return 2; };
  if (!v.filename?.length) return usage('-f <file|dir> is required (see --help)');
  const prefix = v.prefix ?? DEFAULT_PREFIX;
  const bad = prefixProblem(prefix);
  if (bad) return usage(bad);
  if (v.output !== undefined && v.output !== 'diff' && v.output !== 'json') return usage('--output must be diff or json');
  let objects;
  try { objects = loadManifests(v.filename); } catch (err) { return usage(err instanceof Error ? err.message : String(err)); }
  const state = desiredState(objects, prefix);
  let current;
  if (v.vault) {
    const vault = await vaultSysFromEnv({ ...(v['vault-addr'] ? { address: v['vault-addr'] } : {}), ...(v['vault-token-env'] ? { tokenEnv: v['vault-token-env'] } : {}) });
    try { current = await readVaultState(vault.sys, prefix, ['kubernetes', ...state.roles.map((r) => r.mount)]); } finally { vault.close(); }
  }
  const plan = computePlan(state, current);
  const text = v.output === 'json' ? `${JSON.stringify(plan, null, 2)}\n` : renderPlan(plan, { color: !v.out && process.stdout.isTTY });
  if (v.out) writeFileSync(v.out, text);
  else process.stdout.write(text);
  return plan.counts.create + plan.counts.update + plan.counts.delete > 0 ? 1 : 0;
}
