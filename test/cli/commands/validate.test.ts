// `vaultgate validate` end to end: spawn the CLI as a user (or CI) would.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('../../../', import.meta.url).pathname;

function cli(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'validate', ...args], {
      cwd: root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

void describe('vaultgate validate', () => {
  void test('a YAML error is bad input, exit 2 with file:line, never a denial (exit 1): unresolved alias, alias bomb (issue #21 item 9)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vaultgate-validate-yaml-'));
    try {
      const alias = join(dir, 'alias.yaml');
      writeFileSync(alias, 'apiVersion: vaultgate.io/v1alpha1\nkind: VaultPolicy\nmetadata: *undefined-anchor\n');
      const bomb = join(dir, 'bomb.yaml');
      const levels = [
        'a: &a [x,x,x,x,x,x,x,x,x,x]',
        ...'bcdef'.split('').map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcde'[i]!}`).join(',')}]`),
      ];
      writeFileSync(bomb, `${levels.join('\n')}\n`);
      for (const [file, why] of [
        [alias, /alias\.yaml:1: Unresolved alias/],
        [bomb, /bomb\.yaml:1: Excessive alias count/],
      ] as const) {
        const r = await cli(['-f', file]);
        assert.equal(r.code, 2, r.stdout + r.stderr);
        assert.match(r.stderr, why);
        assert.equal(r.stdout, '');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  void test('refuses the sudo-on-sys/* VaultPolicy, naming the rules, exit 1', async () => {
    const r = await cli(['-f', 'examples/bad-vaultpolicy-sudo-sys.yaml']);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, /^DENIED VaultPolicy team-a\/root-ish \(examples\/bad-vaultpolicy-sudo-sys\.yaml:\d+\)$/m);
    assert.match(
      r.stdout,
      /spec\.rules\[0\]\.capabilities\[2\]: "sudo" is forbidden by the built-in guardrail defaults \(rule guardrail\.forbidden-capability\)/,
    );
    assert.match(r.stdout, /\(rule guardrail\.forbidden-path\)/);
  });

  void test('accepts a clean VaultPolicy and prints its patch as JSON Patch and YAML diff, exit 0', async () => {
    const r = await cli(['-f', 'examples/vaultpolicy.yaml', '--as', 'ci-bot']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^ALLOWED VaultPolicy team-a\/app-read/m);
    assert.match(r.stdout, /\{"op":"add","path":"\/spec\/vaultName","value":"vaultgate\.team-a\.app-read"\}/);
    assert.match(r.stdout, /^\s+- {5}- path: secret\/data\/\{\{namespace\}\}\/app\/\*$/m);
    assert.match(r.stdout, /^\s+\+ {5}- path: secret\/data\/team-a\/app\/\*$/m);
    assert.match(r.stdout, /vaultgate\.io\/last-applied-by: ci-bot/);
  });

  void test('stdin, multi-document YAML, context from the manifests, JSON output', async () => {
    const manifests = `
apiVersion: v1
kind: Namespace
metadata: { name: prod-a, labels: { tier: prod } }
---
apiVersion: vaultgate.io/v1alpha1
kind: VaultGuardrail
metadata: { name: prod }
spec:
  namespaceSelector: { matchLabels: { tier: prod } }
  maxTokenTTL: 2h
  mode: warn
---
apiVersion: vaultgate.io/v1alpha1
kind: VaultRoleBinding
metadata: { name: app, namespace: prod-a }
spec: { serviceAccounts: [app], policies: [missing], tokenTTL: 1h, tokenMaxTTL: 4h }
`;
    const r = await cli(['-f', '-', '-o', 'json', '--prefix', 'vg'], manifests);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const out = JSON.parse(r.stdout) as {
      summary: Record<string, number>;
      results: Array<{
        kind: string;
        outcome: string;
        warnings: string[];
        patch: Array<{ path: string; value?: unknown }>;
        file: string;
        line: number;
      }>;
    };
    assert.deepEqual(out.summary, { allowed: 2, denied: 0, skipped: 1 });
    const vrb = out.results.find((x) => x.kind === 'VaultRoleBinding');
    assert.equal(vrb?.outcome, 'ALLOWED');
    assert.deepEqual([vrb?.file, vrb?.line], ['<stdin>', 14]);
    assert.ok(
      vrb?.warnings.some((w) => w.includes('guardrail "prod"') && w.includes('rule guardrail.max-token-ttl')),
      vrb?.warnings.join('\n'),
    );
    assert.ok(vrb?.warnings.some((w) => w.includes('rule vaultrolebinding.policy-missing')));
    assert.ok(vrb?.patch.some((op) => op.path === '/spec/vaultName' && op.value === 'vg.prod-a.app'));
  });

  void test("a VaultDynamicSecret is checked against its store's VaultRoleBinding given alongside (issue #23 item 5)", async () => {
    const manifests = (grants: string) => `
apiVersion: vaultgate.io/v1alpha1
kind: VaultPolicy
metadata: { name: creds, namespace: team-a }
spec: { rules: [${grants}] }
---
apiVersion: vaultgate.io/v1alpha1
kind: VaultRoleBinding
metadata: { name: app, namespace: team-a }
spec: { serviceAccounts: [app], policies: [creds], audience: vault }
---
apiVersion: external-secrets.io/v1
kind: SecretStore
metadata: { name: vault, namespace: team-a }
spec:
  provider:
    vault:
      server: https://vault.example:8200
      auth: { kubernetes: { mountPath: kubernetes, role: vg.team-a.app, serviceAccountRef: { name: app, audiences: [vault] } } }
---
apiVersion: vaultgate.io/v1alpha1
kind: VaultDynamicSecret
metadata: { name: db, namespace: team-a }
spec: { storeRef: { name: vault }, path: database/creds/app }
`;
    const read = '{ path: database/creds/app, capabilities: [read] }';
    const refused = await cli(['-f', '-', '--prefix', 'vg'], manifests(read));
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(
      refused.stdout,
      /spec\.revocation: .*lacks update on sys\/leases\/revoke.*\(rule vaultdynamicsecret\.access-revoke\)/,
    );
    const granted = `${read}, { path: sys/leases/revoke, capabilities: [update] }, { path: auth/token/lookup-accessor, capabilities: [update] }`;
    const admitted = await cli(['-f', '-', '--prefix', 'vg'], manifests(granted));
    assert.doesNotMatch(admitted.stdout, /vaultdynamicsecret\.access-/, admitted.stdout);
  });

  void test('parse errors exit 2 with file:line; usage errors exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vaultgate-validate-'));
    try {
      const file = join(dir, 'broken.yaml');
      writeFileSync(file, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n');
      const r = await cli(['-f', file]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, new RegExp(`${file.replace(/[.]/g, '\\.')}:\\d+:\\d+: `));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const usage = await cli([]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /no manifests: pass -f/);
  });
});
