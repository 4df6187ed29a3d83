// Scenario 1 (real tier): `kubectl apply` against a real kube-apiserver that calls `vaultgate webhook`
// (a child process, as deployed): a VaultPolicy granting sudo on sys/* is refused with our message, a
// signed audit record of the denial is written and verifies with `vaultgate audit verify`; a clean one
// is mutated (defaults, label, annotations) and `vaultgate controller` writes it to Vault.
// Vault is a real OpenBao 2.7.2; the controller logs in with the chart's bootstrap policy (test/harness/e2e-vault.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { condition, type E2EStack, startE2E, waitForObject } from '../harness/e2e-stack.ts';
import { REPO_ROOT, runVaultgate } from '../harness/e2e-processes.ts';
import { realTier } from '../harness/real-tier.ts';
import { CommandError } from '../harness/tools.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-a';

void describe(
  'e2e 1: kubectl apply through the real apiserver and vaultgate webhook; controller writes to OpenBao',
  { skip: tier.skip },
  () => {
    let stack: E2EStack;

    before(async () => {
      stack = await startE2E();
      await stack.cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    });
    after(async () => {
      await stack?.stop();
    });

    void test('a VaultPolicy granting sudo on sys/* is refused by the apiserver with our field-level message, and the denial is in the signed audit trail', async () => {
      const manifest = readFileSync(join(REPO_ROOT, 'examples/bad-vaultpolicy-sudo-sys.yaml'), 'utf8');
      const err = await stack.cp.kubectl(['apply', '-f', '-'], { stdin: manifest }).then(
        () => assert.fail('kubectl apply of the bad policy succeeded'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof CommandError, String(err));
      assert.notEqual(err.code, 0);
      const stderr = err.stderr;
      assert.match(stderr, /admission webhook "validate\.vaultgate\.io" denied the request/);
      assert.match(stderr, /spec\.rules\[0\]\.capabilities\[2\]: "sudo" is forbidden/);
      assert.match(stderr, /\(rule guardrail\.forbidden-capability\)/);
      assert.match(stderr, /spec\.rules\[0\]\.path: "sys\/\*" is forbidden/);
      assert.match(stderr, /\(rule guardrail\.forbidden-path\)/);
      const got = await stack.getJson('vaultpolicy', 'root-ish', NS);
      assert.equal(got, undefined, 'nothing was stored');

      // The webhook's stdout (captured in its log) holds a signed record of the denial, and the whole
      // trail verifies with `vaultgate audit verify` against the key's JWKS.
      const webhook = stack.webhook;
      assert.ok(webhook);
      const records = await waitFor(
        () => {
          const lines = readFileSync(webhook.logPath, 'utf8')
            .split('\n')
            .filter((l) => l.startsWith('{"audit"'));
          const denied = lines
            .map(
              (l) =>
                JSON.parse(l) as {
                  event: { type: string; name?: string; outcome?: string; rules?: string[]; webhook?: string };
                },
            )
            .filter((r) => r.event.type === 'admission' && r.event.name === 'root-ish' && r.event.outcome === 'denied');
          return Promise.resolve(denied.length > 0 ? denied : undefined);
        },
        { what: 'an audit record of the denial', timeoutMs: 10_000 },
      );
      assert.equal(records[0]?.event.webhook, 'validating');
      assert.ok(records[0]?.event.rules?.includes('guardrail.forbidden-capability'));
      const verified = await runVaultgate(['audit', 'verify', webhook.logPath, '--jwks', webhook.jwksPath]);
      assert.match(verified, /^OK: \d+ records .* 0 error\(s\)/m);
    });

    void test('a clean VaultPolicy is mutated (vaultName, managed-by label, who-applied annotations), becomes Ready, and its Vault policy is written', async () => {
      const manifest = readFileSync(join(REPO_ROOT, 'examples/vaultpolicy.yaml'), 'utf8');
      const out = await stack.cp.kubectl(['apply', '-f', '-'], { stdin: manifest });
      assert.match(out, /vaultpolicy\.vaultgate\.io\/app-read created/);

      const shown = parse(await stack.cp.kubectl(['get', 'vp', 'app-read', '-n', NS, '-o', 'yaml'])) as {
        metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
        spec: { vaultName?: string; rules: Array<{ path: string; capabilities: string[] }> };
      };
      assert.equal(shown.spec.vaultName, 'vaultgate.team-a.app-read');
      assert.equal(shown.metadata.labels?.['app.kubernetes.io/managed-by'], 'vaultgate');
      assert.equal(shown.metadata.annotations?.['vaultgate.io/created-by'], 'vaultgate-test-admin');
      assert.equal(shown.metadata.annotations?.['vaultgate.io/last-applied-by'], 'vaultgate-test-admin');
      assert.equal(shown.spec.rules[0]?.path, 'secret/data/team-a/app/*', '{{namespace}} expanded');

      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', NS, 'vp/app-read']);
      const vp = await stack.getJson('vaultpolicy', 'app-read', NS);
      assert.equal(condition(vp)?.status, 'True');
      assert.equal(
        (vp?.status as { observedGeneration?: number }).observedGeneration,
        (vp?.metadata as { generation: number }).generation,
      );

      const read = await stack.vaultRoot('GET', 'sys/policies/acl/vaultgate.team-a.app-read');
      assert.equal(read.status, 200, JSON.stringify(read.body));
      const text = (read.body as { data: { policy: string } }).data.policy;
      assert.match(text, /path "secret\/data\/team-a\/app\/\*"/);
      assert.match(text, /path "secret\/metadata\/team-a\/app\/\*"/);
      assert.doesNotMatch(text, /sudo|sys\//);
    });

    void test('an HCL VaultPolicy is kept as written and written to Vault; deleting it removes the Vault policy (finalizer)', async () => {
      await stack.cp.kubectl(['apply', '-f', join(REPO_ROOT, 'examples/vaultpolicy-hcl.yaml')]);
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=60s', '-n', NS, 'vp/app-write']);
      const read = await stack.vaultRoot('GET', 'sys/policies/acl/vaultgate.team-a.app-write');
      assert.equal(read.status, 200);
      assert.match(
        (read.body as { data: { policy: string } }).data.policy,
        /capabilities = \["create", "read", "update", "patch", "delete"\]/,
      );

      await stack.cp.kubectl(['delete', '-n', NS, 'vp/app-write', '--wait=true', '--timeout=60s']);
      await waitForObject(stack, 'vaultpolicy', 'app-write', NS, (o) => o === undefined, 'the VaultPolicy to be gone');
      const gone = await stack.vaultRoot('GET', 'sys/policies/acl/vaultgate.team-a.app-write');
      assert.equal(gone.status, 404, 'the Vault policy was deleted before the finalizer was released');
    });
  },
);
