// `vaultgate audit`: verify the signed decision trail, report effective Vault access, make a local key.
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { JSONWebKeySet } from 'jose';
import { generateAuditKey, mergeJwks, parseJwks, privateKeyPem } from '../../trail/keys.ts';
import { orderRotatedFiles, verifyAuditFiles, type VerifyReport } from '../../trail/verify.ts';
import { buildAccessReport, type AccessFinding } from '../../audit/access/report.ts';
import { desiredState } from '../../audit/access/model.ts';
import { renderAccessHtml, renderAccessText } from '../../audit/access/render.ts';
import { loadFromCluster, loadManifests, readVaultState, vaultSysFromEnv } from '../../audit/access/sources.ts';
import { computePlan, vaultFindings } from '../../audit/plan/plan.ts';
import { CAPABILITIES, type RequestCapability } from '../../policy/acl.ts';
import { DEFAULT_PREFIX, prefixProblem } from '../../schemas/vault-names.ts';

const HELP = `Usage: vaultgate audit <command> [options]

Commands:
  verify <file...> --jwks <file|url>   check signatures, hash chain and sequence of audit files
  access [-f <file|dir>...] [query]    who can do what on which Vault path, with findings
  keygen [--out <dir>]                 make an Ed25519 signing key and its JWKS for local use

Run "vaultgate audit <command> --help" for the options of each.
`;

const VERIFY_HELP = `Usage: vaultgate audit verify <file...> --jwks <file|url> [--output text|json] [--keep-order]
                                                     [--require-authenticated]

Verifies vaultgate audit files (JSON lines from the file sink, or a shipped stdout log with other log
lines mixed in): every record's content against its SHA-256 hash, every checkpoint's EdDSA signature
against the JWKS and its readable fields against the signed payload, and for each replica's chain: seq
ascending without gaps, each record's prev equal to the hash of the record before it, every record
covered by a later signed checkpoint (the trail signs the last record of every batch it writes), and
restarts linked to the chain they follow.

It also counts the admission records no caller authentication vouches for: those whose caller presented
no verified client certificate (webhook without --client-ca-file), and those from before subject pinning
(a certificate of the client CA, whatever its subject). Their user is only what the request body claimed:
anyone who could reach the webhook's port could have sent them. A signature proves the webhook wrote a
record, not that the apiserver asked for it. --require-authenticated makes any such record an error
(exit 1): use it where the webhook runs with client authentication.

Give rotated files oldest first; names like audit.log.2 audit.log.1 audit.log are put in that order
automatically (a shell glob lists them the other way round); --keep-order turns that off.

The JWKS: the ConfigMap the webhook publishes,
  kubectl -n vaultgate get cm vaultgate-audit-jwks -o jsonpath='{.data.jwks\\.json}' > jwks.json
or a URL serving it, or the jwks.json "vaultgate audit keygen" wrote.

Every problem is printed as file:line (replica, seq): what was expected and what was found, e.g.
  audit.log:42 (replica webhook-0, seq 41): expected seq 40 after audit.log:41, found seq 41: record seq 40 is missing (dropped)

Exit status: 0 intact (notices allowed, e.g. a chain whose start was rotated away), 1 any error (or, with
--require-authenticated, any record no caller authentication vouches for), 2 usage.
`;

const ACCESS_HELP = `Usage: vaultgate audit access [-f <file|dir>...] [query] [options]

Computes what every ServiceAccount can do in Vault through the kubernetes-auth roles vaultgate writes
(VaultRoleBinding → role → VaultPolicies), with Vault's own ACL rules: most specific pattern wins, the
same pattern in several policies is unioned, deny wins on its pattern. A token carries one role's
policies, so access is computed per role and unioned per ServiceAccount.

Source (one of):
  -f, --filename <path>     manifests: YAML/JSON files or directories (repeatable); Namespace objects
                            in them give labels for guardrail selectors
  (no -f)                   the cluster in your kubeconfig: lists VaultPolicies, VaultRoleBindings,
                            VaultGuardrails and Namespaces with @kubernetes/client-node
      --kubeconfig <file>   kubeconfig to use (default: $KUBECONFIG or ~/.kube/config)
      --context <name>      kubeconfig context

Query (optional; without one the full matrix of ServiceAccounts × path patterns is shown):
      --path <path> --capability <cap>   who can <cap> on <path>?  e.g. --path secret/data/payments/db --capability read
      --subject <ns/sa>                  what can this ServiceAccount do?

Vault (optional):
      --vault               also read Vault: orphans (policies/roles under the prefix with no owning
                            object) and drift (Vault content that differs from the desired state)
      --vault-addr <url>    default $VAULT_ADDR; the token is read from $VAULT_TOKEN (or --vault-token-env NAME)

Output:
  -o, --output <format>     table (default), json (schemaVersion "vaultgate.io/access-report/v1",
                            see audit/README.md), html (one self-contained page)
      --out <file>          write there instead of standard output
      --prefix <prefix>     Vault name prefix (default "${DEFAULT_PREFIX}")

Findings: grants outside the namespace's guardrail paths, forbidden paths/capabilities, sudo, broad
globs, bindings to missing policies, unbound policies, unparsable policy text; with --vault orphans and drift.

Exit status: 0 no high-severity finding, 1 at least one, 2 usage or input error.
`;

const KEYGEN_HELP = `Usage: vaultgate audit keygen [--out <dir>]

Writes audit-signing-key.pem (PKCS#8, mode 0600) and audit-jwks.json (the public key) into <dir>
(default: the current directory), and prints the key id. In a cluster the webhook makes its own key
in the Secret vaultgate-audit-key and publishes the JWKS in the ConfigMap vaultgate-audit-jwks; use
keygen to try the trail locally or to provision the Secret yourself:
  kubectl -n vaultgate create secret generic vaultgate-audit-key --from-file=ed25519.pem=audit-signing-key.pem
`;

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (!sub || sub === '--help' || sub === '-h' || sub === 'help') {
    process.stdout.write(HELP);
    return sub ? 0 : 2;
  }
  try {
    switch (sub) {
      case 'verify':
        return await verify(rest);
      case 'access':
        return await access(rest);
      case 'keygen':
        return await keygen(rest);
      default:
        process.stderr.write(`vaultgate audit: unknown command "${sub}"\n\n${HELP}`);
        return 2;
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`vaultgate audit ${sub}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
}

class UsageError extends Error {}

/** parseArgs errors (unknown option, missing value) are usage errors. */
function guard<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

/** A subcommand's files and flags (with --help), strictly: an unknown flag is a usage error. */
function filesAndFlags<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O) {
  return guard(() =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { ...HELP_OPTION, ...options },
    }),
  );
}

async function loadJwks(source: string): Promise<JSONWebKeySet> {
  if (/^https?:\/\//.test(source)) {
    const res = await fetch(source, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) throw new UsageError(`--jwks ${source}: HTTP ${res.status}`);
    return parseJwks(await res.text());
  }
  try {
    return parseJwks(readFileSync(source, 'utf8'));
  } catch (err) {
    throw new UsageError(`--jwks ${source}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function verify(argv: string[]): Promise<number> {
  const { values, positionals } = filesAndFlags(argv, {
    jwks: { type: 'string', multiple: true },
    output: { type: 'string', short: 'o' },
    'keep-order': { type: 'boolean' },
    'require-authenticated': { type: 'boolean' },
  });
  if (values.help) {
    process.stdout.write(VERIFY_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('give at least one audit file (see --help)');
  if (!values.jwks?.length) throw new UsageError('--jwks <file|url> is required: the public keys to verify against');
  let jwks: JSONWebKeySet = { keys: [] };
  for (const j of values.jwks) jwks = mergeJwks(jwks, ...(await loadJwks(j)).keys);
  const files = values['keep-order'] ? positionals : orderRotatedFiles(positionals);
  const inputs = files.map((f) => {
    try {
      return { name: f, text: readFileSync(f, 'utf8') };
    } catch {
      throw new UsageError(`cannot read ${f}`);
    }
  });
  const report = await verifyAuditFiles(inputs, jwks);
  const requireAuthenticated = values['require-authenticated'] === true;
  const refused = requireAuthenticated && report.unvouched > 0;
  if (values.output === 'json')
    process.stdout.write(
      `${JSON.stringify({ ...report, ...(requireAuthenticated ? { requireAuthenticated, ok: report.ok && !refused } : {}) }, null, 2)}\n`,
    );
  else process.stdout.write(renderVerify(report, files, requireAuthenticated));
  return report.ok && !refused ? 0 : 1;
}

function renderVerify(r: VerifyReport, files: string[], requireAuthenticated = false): string {
  const out: string[] = [];
  for (const i of r.issues)
    out.push(
      `${i.severity === 'error' ? 'ERROR ' : 'notice'} ${i.kind}: ${i.message}${i.expected && !i.message.includes(i.expected) ? `\n       expected ${i.expected}, found ${i.found ?? '(nothing)'}` : ''}`,
    );
  if (r.issues.length) out.push('');
  for (const c of r.chains) {
    out.push(
      `replica ${c.replica} chain ${c.chain}: ${c.records} records, ${c.checkpoints} signed checkpoint(s), seq ${c.firstSeq}–${c.lastSeq}${c.fromGenesis ? ' (from its start)' : ''}, head ${c.headHash.slice(0, 16)}…`,
    );
  }
  if (r.admissions > 0) {
    if (r.unvouched > 0) {
      const why = [
        ...(r.unauthenticated > 0
          ? [
              `${r.unauthenticated} unauthenticated: the caller presented no verified client certificate (webhook without --client-ca-file)`,
            ]
          : []),
        ...(r.unpinned > 0
          ? [
              `${r.unpinned} from before subject pinning: any certificate of the client CA was accepted, whatever its subject`,
            ]
          : []),
      ];
      out.push(
        `${r.unvouched} of ${r.admissions} admission record(s) no caller authentication vouches for (${why.join('; ')}): their user is only what the request claimed, and anyone who reached the webhook's port could have sent them`,
      );
    } else {
      out.push(
        `${r.admissions} admission record(s), all from a caller with a verified client certificate of a pinned subject`,
      );
    }
  }
  const errors = r.issues.filter((i) => i.severity === 'error').length;
  const refused = requireAuthenticated && r.unvouched > 0;
  if (refused)
    out.push(`--require-authenticated: ${r.unvouched} admission record(s) no caller authentication vouches for`);
  out.push(
    `${r.ok && !refused ? 'OK' : 'FAILED'}: ${r.records} records in ${files.length} file(s), ${r.chains.length} chain(s), ${errors} error(s), ${r.issues.length - errors} notice(s)${r.ignoredLines ? `, ${r.ignoredLines} non-audit lines ignored` : ''}`,
  );
  return `${out.join('\n')}\n`;
}

async function access(argv: string[]): Promise<number> {
  const { values, positionals } = filesAndFlags(argv, {
    filename: { type: 'string', short: 'f', multiple: true },
    kubeconfig: { type: 'string' },
    context: { type: 'string' },
    path: { type: 'string' },
    capability: { type: 'string' },
    subject: { type: 'string' },
    vault: { type: 'boolean' },
    'vault-addr': { type: 'string' },
    'vault-token-env': { type: 'string' },
    output: { type: 'string', short: 'o' },
    out: { type: 'string' },
    prefix: { type: 'string' },
  });
  if (values.help) {
    process.stdout.write(ACCESS_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}" (manifests go after -f)`);
  const prefix = values.prefix ?? DEFAULT_PREFIX;
  const bad = prefixProblem(prefix);
  if (bad) throw new UsageError(bad);
  const output = values.output ?? 'table';
  if (!['table', 'text', 'json', 'html'].includes(output))
    throw new UsageError(`--output must be table, json or html, not "${output}"`);
  if ((values.path === undefined) !== (values.capability === undefined))
    throw new UsageError('--path and --capability go together');
  if (
    values.capability !== undefined &&
    (!(CAPABILITIES as readonly string[]).includes(values.capability) || values.capability === 'deny')
  ) {
    throw new UsageError(`--capability must be one of ${CAPABILITIES.filter((c) => c !== 'deny').join(', ')}`);
  }
  if (values.subject !== undefined && !/^[^/]+\/[^/]+$/.test(values.subject))
    throw new UsageError('--subject takes namespace/serviceaccount');

  let objects;
  let source: string;
  if (values.filename?.length) {
    try {
      objects = loadManifests(values.filename);
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    source = `manifests: ${values.filename.join(', ')}`;
  } else {
    objects = await loadFromCluster({
      ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
      ...(values.context ? { context: values.context } : {}),
    });
    source = `cluster${values.context ? ` (context ${values.context})` : ''}`;
  }
  const state = desiredState(objects, prefix);
  let extra: AccessFinding[] = [];
  if (values.vault) {
    const vault = await vaultSysFromEnv({
      ...(values['vault-addr'] ? { address: values['vault-addr'] } : {}),
      ...(values['vault-token-env'] ? { tokenEnv: values['vault-token-env'] } : {}),
    });
    try {
      const current = await readVaultState(vault.sys, prefix, ['kubernetes', ...state.roles.map((r) => r.mount)]);
      extra = vaultFindings(computePlan(state, current));
      source += ' + Vault';
    } finally {
      vault.close();
    }
  }
  const query =
    values.path !== undefined
      ? { path: values.path, capability: values.capability as RequestCapability }
      : values.subject !== undefined
        ? { subject: values.subject }
        : undefined;
  const report = buildAccessReport(state, { source, ...(query ? { query } : {}), extraFindings: extra });
  const text =
    output === 'json'
      ? `${JSON.stringify(report, null, 2)}\n`
      : output === 'html'
        ? renderAccessHtml(report)
        : renderAccessText(report);
  if (values.out) writeFileSync(values.out, text);
  else process.stdout.write(text);
  return report.summary.findings.high > 0 ? 1 : 0;
}

async function keygen(argv: string[]): Promise<number> {
  const { values } = guard(() =>
    parseArgs({ args: argv, strict: true, options: { ...HELP_OPTION, out: { type: 'string' } } }),
  );
  if (values.help) {
    process.stdout.write(KEYGEN_HELP);
    return 0;
  }
  const dir = values.out ?? '.';
  const key = await generateAuditKey();
  const keyFile = `${dir}/audit-signing-key.pem`;
  writeFileSync(keyFile, privateKeyPem(key), { mode: 0o600, flag: 'wx' });
  chmodSync(keyFile, 0o600);
  writeFileSync(`${dir}/audit-jwks.json`, `${JSON.stringify(mergeJwks(undefined, key.publicJwk), null, 2)}\n`);
  process.stdout.write(`wrote ${keyFile} (private, mode 0600) and ${dir}/audit-jwks.json\nkey id (kid): ${key.kid}\n`);
  return 0;
}
