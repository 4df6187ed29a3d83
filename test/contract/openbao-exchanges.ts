// The questions whose answers are recorded from a real OpenBao (test/contract/openbao-answers.json, by
// `npm run record:openbao`) and replayed against the simulator in the fast tier
// (test/contract/vault-sim-answers.test.ts): ACL decisions for the policies of test/policy/openbao-cases.ts
// (its policies and requests only: the answers are OpenBao's, never policy/*.ts's), and the error shapes
// vaultgate's adapter branches on. The real tier replays them against OpenBao again
// (test/real/contract.test.ts), so a fixture that no longer matches the server fails there first.
import { type AclCase, CASE_MOUNTS, OPENBAO_CASES, OPENBAO_REFUSED } from '../policy/openbao-cases.ts';

/** Who sends a request: the root token, the scenario's token (its policy + default), no token, or an unknown token. */
export type Caller = 'root' | 'token' | 'none' | 'unknown';

export interface Exchange {
  id: string;
  method: 'GET' | 'LIST' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
  as: Caller;
  /** What is recorded: the status and Vault's `errors`, or the capabilities of sys/capabilities-self for `path`. */
  answer: 'status+errors' | 'capabilities';
}

export interface Scenario {
  name: string;
  /** A policy written as root; the scenario's token holds it (and `default`). */
  policy?: string;
  /** Root requests before the exchanges (mounts, seed data); each must succeed, answers not recorded. */
  setup?: Array<{ method: 'POST' | 'PUT'; path: string; body: unknown }>;
  exchanges: Exchange[];
}

export interface Answer {
  status: number;
  errors?: string[];
  capabilities?: string[];
}

const OP_METHOD = { read: 'GET', list: 'LIST', create: 'POST', update: 'POST' } as const;

function mountSetup(): NonNullable<Scenario['setup']> {
  return [
    ...CASE_MOUNTS.kv2.map((m) => ({
      method: 'POST' as const,
      path: `sys/mounts/${m}`,
      body: { type: 'kv', options: { version: '2' } },
    })),
    { method: 'POST', path: `sys/mounts/${CASE_MOUNTS.kv1}`, body: { type: 'kv', options: { version: '1' } } },
    ...CASE_MOUNTS.seed.map((s) => ({ method: 'POST' as const, path: s.path, body: s.body })),
  ];
}

/** The exchange that asks OpenBao check `i` of an ACL case; undefined for SCAN (vaultgate never sends one; the simulator has no SCAN). */
function aclExchange(c: AclCase, i: number): Exchange | undefined {
  const check = c.checks[i];
  if (!check) return undefined;
  if ('capabilities' in check)
    return {
      id: `${c.name}#${i} capabilities ${check.capabilities}`,
      method: 'POST',
      path: check.capabilities,
      as: 'token',
      answer: 'capabilities',
    };
  if (check.op === 'scan') return undefined;
  return {
    id: `${c.name}#${i} ${check.op} ${check.path}${check.body ? ` ${JSON.stringify(check.body)}` : ''}`,
    method: OP_METHOD[check.op],
    path: check.path,
    ...(check.body ? { body: check.body } : {}),
    as: 'token',
    answer: 'status+errors',
  };
}

/** Where the recorded answer to check `i` of an ACL case is kept in the answers file (undefined: not asked). */
export function aclAnswerKey(c: AclCase, i: number): string | undefined {
  const x = aclExchange(c, i);
  return x ? `acl:${c.name} | ${x.id}` : undefined;
}

/** ACL scenarios: one per case of test/policy/openbao-cases.ts. */
function aclScenarios(): Scenario[] {
  return OPENBAO_CASES.map((c) => ({
    name: `acl:${c.name}`,
    policy: c.policy,
    exchanges: c.checks.flatMap((_check, i): Exchange[] => {
      const x = aclExchange(c, i);
      return x ? [x] : [];
    }),
  }));
}

/** The answers vaultgate's adapter (vault/errors.ts, vault/sys.ts, vault/kv.ts) reads: statuses and `errors` lists. */
function errorScenarios(): Scenario[] {
  const e = (id: string, method: Exchange['method'], path: string, as: Caller, body?: unknown): Exchange => ({
    id,
    method,
    path,
    as,
    answer: 'status+errors',
    ...(body === undefined ? {} : { body }),
  });
  return [
    {
      name: 'errors:not-found',
      exchanges: [
        e('kv2 read of a missing secret', 'GET', 'secret/data/vgx-missing/x', 'root'),
        e('kv2 list of a missing prefix', 'LIST', 'secret/metadata/vgx-missing/', 'root'),
        e('kv2 metadata of a missing secret', 'GET', 'secret/metadata/vgx-missing/x', 'root'),
        e('read of a missing ACL policy', 'GET', 'sys/policies/acl/vgx-missing', 'root'),
        e('delete of a missing ACL policy', 'DELETE', 'sys/policies/acl/vgx-missing', 'root'),
        e('read of a missing kubernetes role', 'GET', 'auth/kubernetes/role/vgx-missing', 'root'),
        e('delete of a missing kubernetes role', 'DELETE', 'auth/kubernetes/role/vgx-missing', 'root'),
        e('a path under no mount', 'GET', 'vgx-nomount/x', 'root'),
        e('an auth mount that is not enabled', 'POST', 'auth/vgx-none/login', 'none', { role: 'r', jwt: 'x' }),
      ],
    },
    {
      name: 'errors:refused',
      policy: 'path "secret/data/vgx-allowed/*" { capabilities = ["read"] }',
      exchanges: [
        e('read outside the policy', 'GET', 'secret/data/vgx-other/x', 'token'),
        e('write with a read-only policy', 'POST', 'secret/data/vgx-allowed/x', 'token', { data: { a: 'b' } }),
        e('an unknown token', 'GET', 'secret/data/vgx-allowed/x', 'unknown'),
        e('no token', 'GET', 'secret/data/vgx-allowed/x', 'none'),
        e('policy write with a read-only policy', 'PUT', 'sys/policies/acl/vgx-x', 'token', {
          policy: 'path "x" { capabilities = ["read"] }',
        }),
      ],
    },
    {
      // Quotas count every caller, root included; a path inside a mount matches only itself unless it ends in `*`.
      name: 'quota:paths',
      setup: [
        { method: 'POST', path: 'secret/data/vgx-q1/a', body: { data: { v: '1' } } },
        { method: 'POST', path: 'secret/data/vgx-q2/a', body: { data: { v: '1' } } },
        {
          method: 'POST',
          path: 'sys/quotas/rate-limit/vgx-q1',
          body: { path: 'secret/data/vgx-q1/', rate: 1, interval: '1h' },
        },
        {
          method: 'POST',
          path: 'sys/quotas/rate-limit/vgx-q2',
          body: { path: 'secret/data/vgx-q2/*', rate: 1, interval: '1h' },
        },
      ],
      exchanges: [
        e('under a quota path without *: first read', 'GET', 'secret/data/vgx-q1/a', 'root'),
        e('under a quota path without *: second read', 'GET', 'secret/data/vgx-q1/a', 'root'),
        e('under a quota path with *: first read', 'GET', 'secret/data/vgx-q2/a', 'root'),
        e('under a quota path with *: second read', 'GET', 'secret/data/vgx-q2/a', 'root'),
      ],
    },
    {
      name: 'errors:invalid',
      setup: [{ method: 'POST', path: 'secret/data/vgx-cas/x', body: { data: { v: '1' } } }],
      exchanges: [
        e('kv2 write without data', 'POST', 'secret/data/vgx-cas/y', 'root', {}),
        e('kv2 write with a stale check-and-set', 'POST', 'secret/data/vgx-cas/x', 'root', {
          options: { cas: 0 },
          data: { v: '2' },
        }),
        e('policy write without text', 'PUT', 'sys/policies/acl/vgx-empty', 'root', { policy: '' }),
        e('kubernetes role without bound service accounts', 'POST', 'auth/kubernetes/role/vgx-unbound', 'root', {
          token_policies: ['x'],
        }),
        ...OPENBAO_REFUSED.map((r, i) =>
          e(`refused policy #${i}`, 'PUT', `sys/policies/acl/vgx-refused-${i}`, 'root', { policy: r.policy }),
        ),
      ],
    },
  ];
}

/** Every scenario, in recording order; the first one creates the mounts the ACL cases need. */
export function scenarios(): Scenario[] {
  const acl = aclScenarios();
  const first = acl[0];
  if (first) first.setup = [...mountSetup(), ...(first.setup ?? [])];
  return [...acl, ...errorScenarios()];
}

/** Where the answers live, and the one command that re-records them. */
export const ANSWERS_FILE = new URL('./openbao-answers.json', import.meta.url).pathname;
export const RECORD_COMMAND = 'npm run record:openbao';

export interface AnswersFile {
  /** `bao version` of the server that answered. */
  server: string;
  recorded: string;
  command: string;
  answers: Record<string, Answer>;
}

interface RawResponse {
  status: number;
  body: Record<string, unknown> | undefined;
}

async function call(
  addr: string,
  token: string | undefined,
  method: Exchange['method'] | 'POST',
  path: string,
  body?: unknown,
): Promise<RawResponse> {
  const list = method === 'LIST';
  const res = await fetch(`${addr}/v1/${path}${list ? '?list=true' : ''}`, {
    method: list ? 'GET' : method,
    headers: {
      ...(token ? { 'X-Vault-Token': token } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> | undefined;
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
  } catch {
    parsed = { errors: [text.trim()] };
  }
  return { status: res.status, body: parsed };
}

/**
 * Asks `addr` every question (as the answers file keys them). The server needs KV v2 at secret/ and a
 * kubernetes auth mount at kubernetes/ (a dev server plus `sys/auth/kubernetes`, or the simulator).
 */
export async function ask(
  addr: string,
  rootToken: string,
  list: Scenario[] = scenarios(),
): Promise<Record<string, Answer>> {
  const out: Record<string, Answer> = {};
  for (const [n, s] of list.entries()) {
    for (const step of s.setup ?? []) {
      const r = await call(addr, rootToken, step.method, step.path, step.body);
      if (r.status >= 300)
        throw new Error(`${s.name} setup ${step.method} ${step.path}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    }
    let token: string | undefined;
    if (s.policy !== undefined) {
      const name = `vgx-case-${n}`;
      const w = await call(addr, rootToken, 'PUT', `sys/policies/acl/${name}`, { policy: s.policy });
      if (w.status >= 300) throw new Error(`${s.name}: policy refused: HTTP ${w.status} ${JSON.stringify(w.body)}`);
      const t = await call(addr, rootToken, 'POST', 'auth/token/create', { policies: [name], ttl: '10m' });
      token = (t.body?.auth as { client_token?: string } | undefined)?.client_token;
      if (!token) throw new Error(`${s.name}: no token: HTTP ${t.status}`);
    }
    for (const x of s.exchanges) {
      const caller =
        x.as === 'root' ? rootToken : x.as === 'token' ? token : x.as === 'unknown' ? 'hvs.vgx-not-a-token' : undefined;
      const key = `${s.name} | ${x.id}`;
      if (x.answer === 'capabilities') {
        const r = await call(addr, caller, 'POST', 'sys/capabilities-self', { paths: [x.path] });
        const caps = (r.body?.data as Record<string, unknown> | undefined)?.[x.path] ?? r.body?.[x.path];
        out[key] = {
          status: r.status,
          ...(Array.isArray(caps) ? { capabilities: [...(caps as string[])].sort() } : {}),
        };
      } else {
        const r = await call(addr, caller, x.method, x.path, x.body);
        const errors = Array.isArray(r.body?.errors) ? (r.body.errors as string[]) : undefined;
        out[key] = { status: r.status, ...(errors ? { errors } : {}) };
      }
    }
  }
  return out;
}
