// `vaultgate validate`: the webhook's decisions, offline, for manifests (GitOps CI). The context is
// built from the manifests themselves: VaultGuardrails, Namespaces (labels) and VaultPolicies in the
// set stand for the cluster. Exit 0 all admitted, 1 any denial, 2 usage or parse errors.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify, LineCounter } from 'yaml';
import { defaultContext, type AdmissionContext, type GuardrailObject } from '../../webhook/admission/context.ts';
import { decideSync } from '../../webhook/review/review.ts';
import type { AdmissionDecision, AdmissionRequest } from '../../webhook/admission/types.ts';
import { KINDS } from '../../schemas/kinds.ts';
import { prefixProblem, DEFAULT_PREFIX } from '../../schemas/vault-names.ts';
import { parseVaultTarget, type VaultTarget } from '../../policy/capabilities.ts';

const HELP = `Usage: vaultgate validate -f <file|dir|-> [-f ...] [options]

Runs vaultgate's admission webhook offline over Kubernetes manifests: the same defaults (mutation) and
the same checks (schema, VaultPolicy/VaultRoleBinding/VaultGuardrail rules, guardrails, ESO rules) the
cluster would apply, without a cluster. Made for CI on a GitOps repository.

The manifests are the world: VaultGuardrails in them are the guardrails (none → the built-in defaults:
paths secret/data/<ns>/* and secret/metadata/<ns>/*, no sudo, no sys/* or auth/*), Namespaces in them
give the labels guardrail selectors match, and VaultPolicies in them are the ones that "exist" (a
VaultRoleBinding naming another policy gets a warning).

Options:
  -f, --filename <path>   a YAML or JSON file (multi-document YAML, List kinds), a directory of
                          *.yaml/*.yml/*.json files, or - for standard input; repeatable
  -n, --namespace <ns>    namespace for namespaced objects that do not set one (default "default")
      --prefix <prefix>   prefix of Vault-side names, <prefix>.<namespace>.<name> (default "${DEFAULT_PREFIX}")
      --as <user>         username recorded in the vaultgate.io/*-by annotations (default "vaultgate-validate")
      --vault-flavor <f>  the Vault the policies are for: openbao (default) or vault (HashiCorp Vault).
                          A capability it lacks is a denial: OpenBao has scan but not subscribe or
                          recover; HashiCorp Vault has subscribe and recover but not scan
      --vault-version <v> its version, e.g. 2.7 (default for openbao) or 1.19 (required for vault)
  -o, --output <format>   text (default) or json
  -q, --quiet             print only denied objects (text output)
  -h, --help              show this help

Output (text): per object ALLOWED or DENIED with file:line, every denial and warning (field, reason
and rule id), and the patch the mutating webhook would apply, as JSON Patch and as YAML diff lines.
Objects of kinds vaultgate does not serve are listed as SKIPPED.

Exit status: 0 every object admitted (warnings allowed), 1 at least one denial, 2 usage or parse error.

Examples:
  vaultgate validate -f examples/
  vaultgate validate -f policies/ -f guardrails.yaml -n team-a
  kustomize build overlays/prod | vaultgate validate -f - -o json
`;

interface Options {
  files: string[];
  namespace: string;
  prefix: string;
  user: string;
  output: 'text' | 'json';
  quiet: boolean;
  vaultTarget: VaultTarget;
}

class UsageError extends Error {}

function parseArgs(argv: string[]): Options | 'help' {
  const opts: Options = {
    files: [],
    namespace: 'default',
    prefix: DEFAULT_PREFIX,
    user: 'vaultgate-validate',
    output: 'text',
    quiet: false,
    vaultTarget: parseVaultTarget(undefined, undefined),
  };
  let flavor: string | undefined;
  let version: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const raw = argv[i] as string;
    const eq = raw.startsWith('--') ? raw.indexOf('=') : -1;
    const arg = eq > 0 ? raw.slice(0, eq) : raw;
    const value = (): string => {
      const v = eq > 0 ? raw.slice(eq + 1) : argv[++i];
      if (v === undefined || v === '') throw new UsageError(`${arg} needs a value`);
      return v;
    };
    switch (arg) {
      case '-h':
      case '--help':
        return 'help';
      case '-f':
      case '--filename':
        opts.files.push(value());
        break;
      case '-n':
      case '--namespace':
        opts.namespace = value();
        break;
      case '--prefix':
        opts.prefix = value();
        break;
      case '--as':
        opts.user = value();
        break;
      case '--vault-flavor':
        flavor = value();
        break;
      case '--vault-version':
        version = value();
        break;
      case '-o':
      case '--output': {
        const v = value();
        if (v !== 'text' && v !== 'json') throw new UsageError(`--output must be text or json, not "${v}"`);
        opts.output = v;
        break;
      }
      case '-q':
      case '--quiet':
        opts.quiet = true;
        break;
      default:
        throw new UsageError(`unknown option "${raw}"`);
    }
  }
  if (opts.files.length === 0) throw new UsageError('no manifests: pass -f <file|dir|->');
  const problem = prefixProblem(opts.prefix);
  if (problem) throw new UsageError(`--prefix: ${problem}`);
  try {
    opts.vaultTarget = parseVaultTarget(flavor, version);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return opts;
}

/** One manifest object and where it came from. */
export interface Manifest {
  file: string;
  line: number;
  object: Record<string, unknown>;
}

class ParseError extends Error {}

function expandPaths(paths: string[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (p === '-') {
      out.push(p);
      continue;
    }
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new ParseError(`${p}: no such file or directory`);
    }
    if (st.isDirectory()) {
      out.push(
        ...readdirSync(p)
          .filter((n) => /\.(ya?ml|json)$/.test(n))
          .sort()
          .map((n) => join(p, n)),
      );
    } else out.push(p);
  }
  return out;
}

/** Parse YAML (1.1, as the apiserver reads it) or JSON; `kind: List` is flattened into its items. */
export function parseManifests(text: string, file: string): Manifest[] {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { version: '1.1', lineCounter, prettyErrors: false });
  const list = Array.isArray(docs) ? docs : [docs];
  const out: Manifest[] = [];
  for (const doc of list) {
    const error = doc.errors[0];
    if (error) {
      const pos = lineCounter.linePos(error.pos[0]);
      throw new ParseError(`${file}:${pos.line}:${pos.col}: ${error.message.split('\n')[0]}`);
    }
    const line = doc.contents ? lineCounter.linePos(doc.contents.range[0]).line : 1;
    let value: unknown;
    try {
      // toJS resolves aliases: an unresolved one, or an alias bomb (yaml's maxAliasCount), throws here
      value = doc.toJS();
    } catch (err) {
      throw new ParseError(`${file}:${line}: ${(err instanceof Error ? err.message : String(err)).split('\n')[0]}`);
    }
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value))
      throw new ParseError(`${file}:${line}: a manifest must be a mapping with apiVersion and kind`);
    const obj = value as Record<string, unknown>;
    if (typeof obj.kind === 'string' && obj.kind.endsWith('List') && Array.isArray(obj.items)) {
      for (const item of obj.items)
        if (item && typeof item === 'object') out.push({ file, line, object: item as Record<string, unknown> });
    } else out.push({ file, line, object: obj });
  }
  return out;
}

function readSource(path: string): string {
  return path === '-' ? readFileSync(0, 'utf8') : readFileSync(path, 'utf8');
}

/** The admission context the manifests describe. */
export function contextFromManifests(
  manifests: Manifest[],
  opts: { prefix: string; namespace: string; vaultTarget?: VaultTarget },
): AdmissionContext {
  const guardrails: GuardrailObject[] = [];
  const namespaceLabels = new Map<string, Record<string, string>>();
  const policies = new Set<string>();
  // Whole objects for the VaultDynamicSecret access rules, keyed `Kind/namespace/name` (no namespace for a
  // ClusterSecretStore). Absent from the manifests reads as absent: those rules then only warn.
  const objects = new Map<string, Record<string, unknown>>();
  for (const { object } of manifests) {
    const meta = (object.metadata ?? {}) as { name?: string; namespace?: string; labels?: Record<string, string> };
    if (object.apiVersion === 'v1' && object.kind === 'Namespace' && meta.name)
      namespaceLabels.set(meta.name, meta.labels ?? {});
    if (object.apiVersion === 'vaultgate.io/v1alpha1' && object.kind === 'VaultGuardrail' && meta.name) {
      guardrails.push({ metadata: { name: meta.name }, spec: (object.spec ?? {}) as Record<string, unknown> });
    }
    if (object.apiVersion === 'vaultgate.io/v1alpha1' && object.kind === 'VaultPolicy' && meta.name)
      policies.add(`${meta.namespace ?? opts.namespace}/${meta.name}`);
    const kind = String(object.kind);
    const cluster = kind === 'ClusterSecretStore';
    const group = kind.startsWith('Vault') ? 'vaultgate.io/' : 'external-secrets.io/';
    if (
      meta.name &&
      String(object.apiVersion).startsWith(group) &&
      (cluster || ['VaultPolicy', 'VaultRoleBinding', 'SecretStore'].includes(kind))
    )
      objects.set(`${kind}/${cluster ? '' : (meta.namespace ?? opts.namespace)}/${meta.name}`, object);
  }
  const cached = (kind: string, ns: string, name: string) => objects.get(`${kind}/${ns}/${name}`) ?? null;
  return defaultContext({
    guardrails,
    namePrefix: opts.prefix,
    ...(opts.vaultTarget ? { vaultTarget: opts.vaultTarget } : {}),
    namespaceLabels: (ns) => namespaceLabels.get(ns),
    // The set is the desired state: a policy missing from it is missing (a warning, never a denial).
    policyExists: (ns, name) => policies.has(`${ns}/${name}`),
    vaultPolicy: (ns, name) => cached('VaultPolicy', ns, name),
    vaultRoleBinding: (ns, name) => cached('VaultRoleBinding', ns, name),
    secretStore: (kind, name, ns) => (kind === 'ClusterSecretStore' || ns ? cached(kind, ns ?? '', name) : undefined),
  });
}

export interface ObjectResult {
  file: string;
  line: number;
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  outcome: 'ALLOWED' | 'DENIED' | 'SKIPPED';
  denials: string[];
  warnings: string[];
  audit: string[];
  rules: string[];
  patch: AdmissionDecision['patchOps'];
  diff: string[];
}

export function evaluate(
  manifests: Manifest[],
  ctx: AdmissionContext,
  opts: { namespace: string; user: string },
): ObjectResult[] {
  return manifests.map((m, i) => {
    const apiVersion = typeof m.object.apiVersion === 'string' ? m.object.apiVersion : '';
    const kind = typeof m.object.kind === 'string' ? m.object.kind : '';
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
    const meta = KINDS.find((k) => k.group === group && k.kind === kind);
    const metadata = (m.object.metadata ?? {}) as Record<string, unknown>;
    const name = typeof metadata.name === 'string' ? metadata.name : '';
    const base = {
      file: m.file,
      line: m.line,
      apiVersion,
      kind,
      name,
      denials: [],
      warnings: [],
      audit: [],
      rules: [],
      patch: [],
      diff: [],
    };
    if (!KINDS.some((k) => k.group === group)) return { ...base, outcome: 'SKIPPED' as const };
    const namespaced = meta?.scope !== 'Cluster';
    const namespace = namespaced
      ? typeof metadata.namespace === 'string'
        ? metadata.namespace
        : opts.namespace
      : undefined;
    const object = structuredClone(m.object);
    if (namespace) object.metadata = { ...metadata, namespace };
    const req: AdmissionRequest = {
      uid: `vaultgate-validate-${i}`,
      kind: { group, version, kind },
      resource: { group, version, resource: meta?.plural ?? `${kind.toLowerCase()}s` },
      ...(name ? { name } : {}),
      ...(namespace ? { namespace } : {}),
      operation: 'CREATE',
      userInfo: { username: opts.user },
      object,
      dryRun: true,
    };
    const { mutation, validation, object: mutated } = decideSync(req, ctx);
    const response = validation.response;
    return {
      ...base,
      ...(namespace ? { namespace } : {}),
      outcome: response.allowed ? ('ALLOWED' as const) : ('DENIED' as const),
      denials: response.allowed ? [] : (response.status?.message ?? '').split('\n').filter(Boolean),
      warnings: response.warnings ?? [],
      audit: response.auditAnnotations?.['guardrail-audit']
        ? (JSON.parse(response.auditAnnotations['guardrail-audit']) as string[])
        : [],
      rules: [...new Set([...mutation.rules, ...validation.rules])],
      patch: mutation.patchOps,
      diff: mutation.patchOps.length && mutated ? yamlDiff(object, mutated) : [],
    };
  });
}

/** Changed lines between two objects rendered as YAML (LCS over lines; objects are small). */
export function yamlDiff(before: unknown, after: unknown): string[] {
  const a = stringify(before, { lineWidth: 0 }).trimEnd().split('\n');
  const b = stringify(after, { lineWidth: 0 }).trimEnd().split('\n');
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: string[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      ops.push(`  ${a[i++]}`);
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) ops.push(`- ${a[i++]}`);
    else ops.push(`+ ${b[j++]}`);
  }
  // Changed lines with one line of context around each run, as `diff -U1` would show them.
  const keep = ops.map((op, k) => [k - 1, k, k + 1].some((x) => ops[x] !== undefined && !ops[x].startsWith('  ')));
  const out: string[] = [];
  ops.forEach((op, k) => {
    if (!keep[k]) return;
    if (out.length && !keep[k - 1]) out.push('...');
    out.push(op);
  });
  return out;
}

function formatText(results: ObjectResult[], quiet: boolean): string {
  const lines: string[] = [];
  for (const r of results) {
    if (quiet && r.outcome !== 'DENIED') continue;
    const id = `${r.kind} ${r.namespace ? `${r.namespace}/` : ''}${r.name || '<no name>'}`;
    if (r.outcome === 'SKIPPED') {
      lines.push(`SKIPPED ${id} (${r.file}:${r.line}): ${r.apiVersion} ${r.kind} is not a kind vaultgate serves`);
      continue;
    }
    lines.push(`${r.outcome} ${id} (${r.file}:${r.line})`);
    for (const d of r.denials) lines.push(`  denied:  ${d}`);
    for (const w of r.warnings) lines.push(`  warning: ${w}`);
    for (const a of r.audit) lines.push(`  audit:   ${a}`);
    if (r.patch.length && r.outcome === 'ALLOWED') {
      lines.push('  patch (JSON Patch):');
      for (const op of r.patch) lines.push(`    ${JSON.stringify(op)}`);
      lines.push('  patch (YAML diff):');
      for (const d of r.diff) lines.push(`    ${d}`);
    }
  }
  const count = (o: ObjectResult['outcome']) => results.filter((r) => r.outcome === o).length;
  lines.push(
    `${results.length} object(s): ${count('ALLOWED')} allowed, ${count('DENIED')} denied, ${count('SKIPPED')} skipped`,
  );
  return `${lines.join('\n')}\n`;
}

export function run(argv: string[]): Promise<number> {
  return Promise.resolve(runSync(argv));
}

function runSync(argv: string[]): number {
  let opts: Options | 'help';
  try {
    opts = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`vaultgate validate: ${err.message}\n\nRun "vaultgate validate --help" for usage.\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  const manifests: Manifest[] = [];
  try {
    for (const file of expandPaths(opts.files))
      manifests.push(...parseManifests(readSource(file), file === '-' ? '<stdin>' : file));
  } catch (err) {
    if (!(err instanceof ParseError)) throw err;
    process.stderr.write(`vaultgate validate: ${err.message}\n`);
    return 2;
  }
  const ctx = contextFromManifests(manifests, opts);
  const results = evaluate(manifests, ctx, opts);
  if (opts.output === 'json') {
    const count = (o: ObjectResult['outcome']) => results.filter((r) => r.outcome === o).length;
    process.stdout.write(
      `${JSON.stringify({ results, summary: { allowed: count('ALLOWED'), denied: count('DENIED'), skipped: count('SKIPPED') } }, null, 2)}\n`,
    );
  } else {
    process.stdout.write(formatText(results, opts.quiet));
  }
  return results.some((r) => r.outcome === 'DENIED') ? 1 : 0;
}
