// `vaultgate template` (esoctl template's flags) as a user runs it: the production bundle, built into a
// temporary directory, on plain node. The hostile corpus (test/eso/hostile-templates.ts) goes through it:
// every template ends in under 2 s of rendering with a Secret or a value-free error (exit 1), and the
// process never crashes. Bad input is exit 2.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { bundle } from '../../../cli/build.ts';
import { CANARY, HOSTILE_TEMPLATES } from '../../eso/hostile-templates.ts';
import { canaryLeaks } from '../../eso/canary-variants.ts';

const dir = mkdtempSync(join(tmpdir(), 'vaultgate-template-'));
const outfile = join(dir, 'vaultgate.mjs');
const env = { PATH: process.env.PATH ?? '' };

function cli(args: string[]): { status: number | null; stdout: string; stderr: string; ms: number } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [outfile, 'template', ...args], {
    cwd: dir,
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - t0 };
}

let n = 0;
function file(content: unknown): string {
  const f = join(dir, `in-${n++}.yaml`);
  writeFileSync(f, typeof content === 'string' ? content : stringify(content));
  return f;
}

const externalSecret = (template: Record<string, unknown>): unknown => ({
  apiVersion: 'external-secrets.io/v1',
  kind: 'ExternalSecret',
  metadata: { name: 'db', namespace: 'team-a' },
  spec: { secretStoreRef: { name: 'vault' }, target: { template } },
});
const b64 = (s: string | Buffer): string => Buffer.from(s).toString('base64');

void describe('vaultgate template', () => {
  let startMs = 0;
  before(async () => {
    await bundle(undefined, outfile);
    // What a trivial render costs end to end (process start, a worker, the render): the corpus's times are measured against it.
    const r = cli([
      '--source-templated-object',
      file(externalSecret({ data: { x: '{{ .a }}' } })),
      '--source-secret-data-file',
      file({ a: b64('1') }),
    ]);
    assert.equal(r.status, 0, r.stderr);
    startMs = r.ms;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  void test('renders an ExternalSecret with templateFrom sources, as the controller would, to stdout or --output', () => {
    const es = file(
      externalSecret({
        metadata: { labels: { app: '{{ .user }}' } },
        data: { dsn: 'postgres://{{ .user }}:{{ .password }}@db/app' },
        templateFrom: [
          { configMap: { name: 'tpl', items: [{ key: 'extra' }] } },
          { secret: { name: 'tpl-s', items: [{ key: 'k' }] } },
        ],
      }),
    );
    const data = file({ user: b64('app'), password: b64('s3cr3t') });
    const cm = file({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'tpl' },
      data: { extra: '{{ .user | upper }}' },
    });
    const secret = file({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tpl-s' },
      data: { k: b64('{{ .password | b64enc }}') },
    });
    const r = cli([
      '--source-templated-object',
      es,
      '--source-secret-data-file',
      data,
      '--template-from-config-map',
      cm,
      '--template-from-secret',
      secret,
    ]);
    assert.equal(r.status, 0, r.stderr);
    const out = parse(r.stdout) as {
      kind: string;
      metadata: { labels: Record<string, string> };
      data: Record<string, string>;
    };
    assert.equal(out.kind, 'Secret');
    assert.deepEqual(out.metadata.labels, { app: 'app' });
    assert.deepEqual(
      Object.fromEntries(Object.entries(out.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()])),
      { dsn: 'postgres://app:s3cr3t@db/app', extra: 'APP', k: b64('s3cr3t') },
    );

    const target = join(dir, 'out.yaml');
    const o = cli([
      '--source-templated-object',
      es,
      '--source-secret-data-file',
      data,
      '--template-from-config-map',
      cm,
      '--template-from-secret',
      secret,
      '--output',
      target,
    ]);
    assert.equal(o.status, 0, o.stderr);
    assert.equal(o.stdout, '');
    assert.equal(readFileSync(target, 'utf8'), r.stdout);
  });

  void test("renders a PushSecret's template over the source data, keeping the keys it does not template", () => {
    const ps = file({
      apiVersion: 'external-secrets.io/v1alpha1',
      kind: 'PushSecret',
      metadata: { name: 'p' },
      spec: { template: { data: { token: '{{ .token | upper }} was templated' } } },
    });
    const r = cli([
      '--source-templated-object',
      ps,
      '--source-secret-data-file',
      file({ token: b64('token'), other: b64('o') }),
    ]);
    assert.equal(r.status, 0, r.stderr);
    const out = parse(r.stdout) as { data: Record<string, string> };
    assert.equal(Buffer.from(out.data.token!, 'base64').toString(), 'TOKEN was templated');
    assert.equal(Buffer.from(out.data.other!, 'base64').toString(), 'o');
  });

  void test("a render error is exit 1 with the controller's message: the field and the rule, no value", () => {
    const r = cli([
      '--source-templated-object',
      file(externalSecret({ data: { x: '{{ .password | nope }}' } })),
      '--source-secret-data-file',
      file({ password: b64(CANARY) }),
    ]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /^vaultgate template: /);
    assert.match(r.stderr, /function "nope" not defined/);
    const m = cli([
      '--source-templated-object',
      file(externalSecret({ data: { x: '{{ .missing }}' } })),
      '--source-secret-data-file',
      file({ password: b64(CANARY) }),
    ]);
    assert.equal(m.status, 1);
    assert.match(m.stderr, /spec\.target\.template\.data\["x"\]: .*map has no entry for key "missing"/);
    assert.ok(!m.stderr.includes(CANARY));
  });

  // Issue #21 item 3: rendered text is secret too (a KeysAndValues key, an alias, a YAML error's position).
  void test('a transformed secret in a render error: no form of it, no length, no position', () => {
    const secret = 'hunter2-Vb7Qm4Xz';
    const data = file({ password: b64(secret) });
    for (const literal of [
      '{{ .password | upper }}: [1]',
      '{{ splitList "" .password | join "." }}: [1]',
      'k: *{{ .password | upper }}',
      'k: [{{ .password | b64enc }}',
      '{{ fail .password }}',
    ]) {
      const r = cli([
        '--source-templated-object',
        file(externalSecret({ templateFrom: [{ literal }] })),
        '--source-secret-data-file',
        data,
      ]);
      assert.equal(r.status, 1, `${literal}: ${r.stderr}`);
      assert.match(r.stderr, /spec\.target\.template\.templateFrom\[0\]\.literal/);
      assert.deepEqual(canaryLeaks(r.stdout + r.stderr, ['Vb7Qm4Xz']), [], r.stderr);
      assert.doesNotMatch(r.stderr, /\d+ bytes\)|column \d+/);
    }
  });

  void test('bad input is exit 2 naming the flag: a missing flag, a missing file, YAML that does not parse, another kind, data not in base64', () => {
    const es = file(externalSecret({ data: { x: '{{ .a }}' } }));
    const data = file({ a: b64('1') });
    const cases: Array<[string[], RegExp]> = [
      [['--source-secret-data-file', data], /--source-templated-object is required/],
      [['--source-templated-object', es], /--source-secret-data-file is required/],
      [
        ['--source-templated-object', join(dir, 'nope.yaml'), '--source-secret-data-file', data],
        /--source-templated-object: cannot read .*ENOENT/,
      ],
      [
        ['--source-templated-object', es, '--source-secret-data-file', file(`a: [${CANARY}`)],
        /--source-secret-data-file: .* is not valid YAML/,
      ],
      [
        ['--source-templated-object', file({ kind: 'ConfigMap', data: {} }), '--source-secret-data-file', data],
        /unsupported template kind "ConfigMap"/,
      ],
      [
        ['--source-templated-object', es, '--source-secret-data-file', file({ a: `${CANARY}!` })],
        /the value of key "a" is not base64/,
      ],
      [['--source-templated-object', es, '--source-secret-data-file', data, '--bogus'], /Unknown option '--bogus'/],
    ];
    for (const [args, want] of cases) {
      const r = cli(args);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, want);
      assert.ok(!r.stderr.includes(CANARY), r.stderr);
    }
  });

  for (const c of HOSTILE_TEMPLATES) {
    void test(`hostile: ${c.name}: ends in < 2 s of rendering, exit 0 or 1 with a value-free message, no crash`, () => {
      const data = Object.fromEntries(Object.entries({ password: CANARY, ...c.data }).map(([k, v]) => [k, b64(v)]));
      const r = cli([
        '--source-templated-object',
        file(externalSecret({ data: { out: c.template } })),
        '--source-secret-data-file',
        file(data),
      ]);
      assert.ok(r.status === 0 || r.status === 1, `exit ${String(r.status)}: ${r.stderr}`);
      assert.ok(
        r.ms - startMs < 2000 + 800,
        `rendering took ${(r.ms - startMs).toFixed(0)} ms beyond a trivial run (${startMs.toFixed(0)} ms)`,
      );
      if (c.error) {
        assert.equal(r.status, 1);
        assert.match(r.stderr, c.error);
      }
      if (r.status === 1) {
        assert.match(r.stderr, /^vaultgate template: spec\.target\.template\.data\["out"\]: /);
        assert.ok(!r.stderr.includes(CANARY.slice(0, 12)), r.stderr);
      }
    });
  }
});
