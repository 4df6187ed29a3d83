// Which Vault servers a secret store may name: the syntax (scheme://host[:port], nothing the client would
// send on every request), the origin compared (default port made explicit, host case folded), and the
// allowed list (the cluster's plus enforce guardrails' for the namespace; none configured = unrestricted).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext, type GuardrailObject } from '../../../../webhook/admission/context.ts';
import {
  allowedVaultServers,
  vaultOrigin,
  vaultServerProblem,
  vaultServerSyntaxProblem,
} from '../../../../webhook/rules/eso/vault-servers.ts';

test('syntax: scheme://host[:port] with an optional trailing slash, nothing else', () => {
  for (const ok of [
    'https://vault.example:8200',
    'http://10.0.0.5:8200/',
    'https://[fd00::1]:8200',
    'https://VAULT.example',
  ])
    assert.equal(vaultServerSyntaxProblem(ok), undefined, ok);
  for (const bad of [
    'https://vault.example:8200/v1/secret/data/team-b/db?x=',
    'https://user:hunter2@vault.example',
    'https://vault.example#frag',
    'https://vault.example\\@evil.example',
    'ftp://vault.example',
    'vault.example:8200',
  ]) {
    const problem = vaultServerSyntaxProblem(bad);
    assert.match(problem ?? '', /must be scheme:\/\/host\[:port\]/, bad);
    assert.ok(!(problem ?? '').includes('hunter2'), 'the value (user info may hold a password) is not quoted');
  }
});

test('origin: default ports explicit, host lower-cased; undefined for non-http(s) or unparsable', () => {
  assert.equal(vaultOrigin('https://Vault.Example/'), 'https://vault.example:443');
  assert.equal(vaultOrigin('http://vault.example'), 'http://vault.example:80');
  assert.equal(vaultOrigin('https://vault.example:8200'), 'https://vault.example:8200');
  assert.equal(vaultOrigin('ftp://vault.example'), undefined);
  assert.equal(vaultOrigin('not a url'), undefined);
});

const guardrail = (mode: string, servers: string[]): GuardrailObject => ({
  metadata: { name: `g-${mode}` },
  spec: { mode, namespaceSelector: { matchLabels: { tier: 'gold' } }, allowedVaultServers: servers },
});
const ctx = (vaultServers: string[], guardrails: GuardrailObject[] = []) =>
  defaultContext({
    vaultServers,
    guardrails,
    namespaceLabels: (ns): Record<string, string> => (ns === 'team-a' ? { tier: 'gold' } : {}),
  });

test('allowed list: the cluster default plus enforce guardrails of the namespace, as origins, once each', () => {
  const c = ctx(
    ['https://vault.vault.svc:8200'],
    [
      guardrail('enforce', ['https://vault.example', 'https://vault.vault.svc:8200']),
      guardrail('warn', ['https://x.example']),
    ],
  );
  assert.deepEqual(allowedVaultServers('team-a', c), ['https://vault.vault.svc:8200', 'https://vault.example:443']);
  assert.deepEqual(
    allowedVaultServers('team-b', c),
    ['https://vault.vault.svc:8200'],
    'not selected: the default only',
  );
  assert.deepEqual(allowedVaultServers(undefined, c), ['https://vault.vault.svc:8200'], 'a ClusterSecretStore');
  assert.equal(allowedVaultServers('team-a', ctx([])), undefined, 'nothing configured: unrestricted');
});

test('a server is allowed by origin (spelling of port and case aside), else the problem names the fix', () => {
  const c = ctx(['https://vault.example:443']);
  assert.equal(vaultServerProblem('https://VAULT.example/', 'team-a', c), undefined);
  const p = vaultServerProblem('https://evil.example', 'team-a', c);
  assert.match(p ?? '', /not one this cluster allows \(https:\/\/vault\.example:443\)/);
  assert.match(p ?? '', /allowedVaultServers|--allowed-vault-server/);
  assert.equal(vaultServerProblem('https://anything.example', 'team-a', ctx([])), undefined);
});
