// Hostile regexps a tenant can write (issue #20): nested quantifiers that make a backtracking engine take
// exponential time, each through a place vaultgate runs a tenant's regexp, with what Go (RE2) answers.
// test/eso/regexp-linear.test.ts runs them in a child process (this file, run as a script: it prints one
// JSON line per case with the time the call took), so a case that hangs fails the test instead of
// stalling it. The Go answers are checked against the Go oracle in test/golang/regexp.differential.test.ts.
/* eslint-disable @typescript-eslint/require-await -- an in-memory fake of an async interface */
import { goStringMap, renderTemplate } from '../../eso/template.ts';
import { rewriteMap } from '../../eso/rewrite.ts';
import { providerSecretData, type SecretSource } from '../../eso/provider-data.ts';
import { plannedPushes } from '../../eso/push.ts';
import { storeAllowsNamespace } from '../../eso/store-conditions.ts';
import { secretValue } from '../../eso/values.ts';

const a = (n: number): string => 'a'.repeat(n);

/** One attack: `run` gives the result as text; `go` is what Go gives for the same call. */
export interface RegexpAttack {
  name: string;
  /** The regexp and the input, for the Go oracle (Go's FindString / MatchString / ReplaceAllString). */
  oracle?: { kind: 'regexpFind' | 'regexpMatch' | 'regexp'; regexp: string; input: string; replacement?: string };
  go: string;
  run: () => Promise<string> | string;
}

const render = (template: string): string => renderTemplate(template, goStringMap({}));

/** A KV v2 mount with one secret per name, for find.name.regexp. */
function mount(names: readonly string[]): SecretSource {
  return {
    kvVersion: 2,
    async read() {
      return { k: 'v' };
    },
    async readMetadata() {
      return {};
    },
    async list(path) {
      return path === '' ? [...names] : undefined;
    },
  };
}

export const REGEXP_ATTACKS: readonly RegexpAttack[] = [
  {
    name: 'template regexFind "(a+)+$" on 28 a and "!" (the issue: 16 s)',
    oracle: { kind: 'regexpFind', regexp: '(a+)+$', input: `${a(28)}!` },
    go: '',
    run: () => render(`{{ regexFind "(a+)+$" "${a(28)}!" }}`),
  },
  {
    name: 'template regexFind "(a+)+$" on 46 a and "!" (the issue: > 60 s)',
    oracle: { kind: 'regexpFind', regexp: '(a+)+$', input: `${a(46)}!` },
    go: '',
    run: () => render(`{{ regexFind "(a+)+$" "${a(46)}!" }}`),
  },
  {
    name: 'template regexMatch "(a|aa)+$"',
    oracle: { kind: 'regexpMatch', regexp: '(a|aa)+$', input: `${a(40)}!` },
    go: 'false',
    run: () => render(`{{ regexMatch "(a|aa)+$" "${a(40)}!" }}`),
  },
  {
    name: 'template mustRegexMatch "^(.*a){20}$"',
    oracle: { kind: 'regexpMatch', regexp: '^(.*a){20}$', input: `${a(40)}!` },
    go: 'false',
    run: () => render(`{{ mustRegexMatch "^(.*a){20}$" "${a(40)}!" }}`),
  },
  {
    name: 'template regexReplaceAll "(x+x+)+y"',
    oracle: { kind: 'regexp', regexp: '(x+x+)+y', input: 'x'.repeat(30), replacement: '<$1>' },
    go: 'x'.repeat(30),
    run: () => render(`{{ regexReplaceAll "(x+x+)+y" "${'x'.repeat(30)}" "<$1>" }}`),
  },
  {
    name: 'template regexFindAll "(a|a)+b"',
    oracle: { kind: 'regexpFind', regexp: '(a|a)+b', input: a(32) },
    go: '[]',
    run: () => render(`{{ regexFindAll "(a|a)+b" "${a(32)}" -1 }}`),
  },
  {
    name: 'template regexSplit "(\\\\w+\\\\s?)+$"',
    oracle: { kind: 'regexpFind', regexp: '(\\w+\\s?)+$', input: `${'word '.repeat(7)}!` },
    go: `[${'word '.repeat(7)}!]`,
    run: () => render(`{{ regexSplit "(\\\\w+\\\\s?)+$" "${'word '.repeat(7)}!" -1 }}`),
  },
  {
    name: 'template regexReplaceAllLiteral "([a-z]+)*[0-9]"',
    oracle: { kind: 'regexp', regexp: '([a-z]+)*[0-9]', input: `${a(30)}!` },
    go: `${a(30)}!`,
    run: () => render(`{{ regexReplaceAllLiteral "([a-z]+)*[0-9]" "${a(30)}!" "$1" }}`),
  },
  {
    name: 'dataFrom[].rewrite[].regexp.source "^(u|[a-z]+)+!$" on a 22-character key (the issue: 68 s)',
    oracle: { kind: 'regexp', regexp: '^(u|[a-z]+)+!$', input: 'u'.repeat(22), replacement: 'x' },
    go: 'u'.repeat(22),
    run: () =>
      [
        ...rewriteMap(
          [{ regexp: { source: '^(u|[a-z]+)+!$', target: 'x' } }],
          new Map([['u'.repeat(22), Buffer.from('v')]]),
        ).keys(),
      ].join(','),
  },
  {
    name: 'dataFrom[].find.name.regexp "^(a+)+$" over a listing',
    oracle: { kind: 'regexpMatch', regexp: '^(a+)+$', input: `${a(30)}-b` },
    go: 'aaaa',
    run: async () =>
      [
        ...(
          await providerSecretData({ dataFrom: [{ find: { name: { regexp: '^(a+)+$' } } }] }, async () =>
            mount(['aaaa', `${a(30)}-b`]),
          )
        ).data.keys(),
      ].join(','),
  },
  {
    name: 'PushSecret dataTo[].match.regexp "(a|aa)+$"',
    oracle: { kind: 'regexpMatch', regexp: '(a|aa)+$', input: `${a(40)}-` },
    go: '',
    run: () =>
      plannedPushes(
        { dataTo: [{ storeRef: { name: 's' }, match: { regexp: '(a|aa)+$' } }] },
        new Map([[`${a(40)}-`, Buffer.from('v')]]),
        { kind: 'SecretStore', name: 's' },
      )
        .map((p) => p.data.match.remoteRef.remoteKey)
        .join(','),
  },
  {
    name: 'PushSecret dataTo[].rewrite[].regexp.source "^(k|[a-z]+)+!$"',
    oracle: { kind: 'regexp', regexp: '^(k|[a-z]+)+!$', input: 'k'.repeat(24), replacement: 'x' },
    go: 'k'.repeat(24),
    run: () =>
      plannedPushes(
        { dataTo: [{ storeRef: { name: 's' }, rewrite: [{ regexp: { source: '^(k|[a-z]+)+!$', target: 'x' } }] }] },
        new Map([['k'.repeat(24), Buffer.from('v')]]),
        { kind: 'SecretStore', name: 's' },
      )
        .map((p) => p.data.match.remoteRef.remoteKey)
        .join(','),
  },
  {
    name: 'ClusterSecretStore conditions[].namespaceRegexes "^(a+)+$"',
    oracle: { kind: 'regexpMatch', regexp: '^(a+)+$', input: `${a(30)}-b` },
    go: 'false',
    run: () => String(storeAllowsNamespace([{ namespaceRegexes: ['^(a+)+$'] }], `${a(30)}-b`, {})),
  },
  {
    name: 'remoteRef.property wildcard "*a*a*a*a*a*a*a*a*b" (gjson)',
    go: 'missing',
    run: () => {
      try {
        return secretValue({ [a(40)]: 'v' }, `${'*a'.repeat(8)}*b`).toString();
      } catch {
        return 'missing';
      }
    },
  },
];

/** Run as a script: `node --import tsx regexp-attacks.ts [first case index] [end index]`, one JSON line per case. */
if (process.argv[1]?.endsWith('regexp-attacks.ts')) {
  const from = Number(process.argv[2] ?? 0);
  const to = Math.min(Number(process.argv[3] ?? REGEXP_ATTACKS.length), REGEXP_ATTACKS.length);
  for (let i = from; i < to; i++) {
    const c = REGEXP_ATTACKS[i]!;
    process.stdout.write(`${JSON.stringify({ start: i })}\n`);
    const t0 = performance.now();
    let result: string;
    try {
      result = await c.run();
    } catch (e) {
      result = `error: ${(e as Error).message}`;
    }
    process.stdout.write(`${JSON.stringify({ done: i, ms: Math.round(performance.now() - t0), result })}\n`);
  }
}
