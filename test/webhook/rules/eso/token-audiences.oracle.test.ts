// #14 item 2 at admission: a tenant's SecretStore names the Vault server and the token's audiences,
// and the controller sends a ServiceAccount token there. Rule eso.store.vault-server keeps the server to
// the ones the cluster admin allowed (--allowed-vault-server, enforce guardrails' allowedVaultServers);
// rule eso.store.token-audience refuses the apiserver's own audiences unless a guardrail allows them.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext, type AdmissionContext, type GuardrailObject } from '../../../../webhook/admission/context.ts';
import type { KubeObject } from '../../../../webhook/admission/kinds.ts';
import { allowedVaultServers as parseAllowed } from '../../../../cli/commands/flags.ts';
import { vaultOrigin } from '../../../../webhook/rules/eso/vault-servers.ts';
import { storeTokenAudiences } from '../../../../webhook/rules/eso/token-audiences.ts';
import { audiencesOf } from '../../../../kube/api-audiences.ts';
import { denials, edit, findings, rules } from '../../../eso/helpers.ts';

const VAULT = 'spec.provider.vault';
const CLUSTER_VAULT = 'https://vault.vault.svc:8200';
const API_AUDIENCE = 'https://kubernetes.default.svc.cluster.local';

const store: KubeObject = {
  apiVersion: 'external-secrets.io/v1',
  kind: 'SecretStore',
  metadata: { name: 'vault', namespace: 'team-a' },
  spec: {
    provider: {
      vault: {
        server: CLUSTER_VAULT,
        path: 'secret',
        version: 'v2',
        auth: { kubernetes: { role: 'reader', serviceAccountRef: { name: 'app' } } },
      },
    },
  },
};
const cluster: KubeObject = edit(store, { kind: 'ClusterSecretStore', 'metadata.namespace': undefined });
const guardrail = (name: string, spec: Record<string, unknown>): GuardrailObject => ({
  metadata: { name },
  spec: { namespaceSelector: { matchLabels: { tier: 'gold' } }, ...spec },
});
const ctxWith = (extra: Partial<AdmissionContext> = {}): AdmissionContext =>
  defaultContext({
    vaultServers: [CLUSTER_VAULT],
    apiServerAudiences: [API_AUDIENCE],
    namespaceLabels: (ns): Record<string, string> => (ns === 'team-a' ? { tier: 'gold' } : {}),
    ...extra,
  });
/** Rules refusing `o`, created in namespace `ns` (a SecretStore moves there). */
const refusedBy = (o: KubeObject, ctx: AdmissionContext, ns = 'team-a'): string[] =>
  rules(denials(findings(o.kind === 'SecretStore' ? edit(o, { 'metadata.namespace': ns }) : o, ctx, ns)));

void describe('rule eso.store.vault-server', () => {
  void test("a store naming the cluster's Vault is admitted, however the origin is spelled", () => {
    for (const server of [CLUSTER_VAULT, `${CLUSTER_VAULT}/`, 'https://VAULT.vault.svc:8200']) {
      assert.deepEqual(refusedBy(edit(store, { [`${VAULT}.server`]: server }), ctxWith()), [], server);
    }
    // A path after the allowed origin is not the allowed server: every request would go under it (#21 item 6).
    assert.deepEqual(refusedBy(edit(store, { [`${VAULT}.server`]: `${CLUSTER_VAULT}/v1/` }), ctxWith()), [
      'eso.store.vault-server-syntax',
    ]);
    assert.equal(vaultOrigin('https://vault.example'), vaultOrigin('https://vault.example:443'));
  });

  void test('another host, port or scheme is refused, naming the field, the rule and what is allowed', () => {
    for (const server of [
      'https://attacker.example:8200',
      'https://vault.vault.svc:8201',
      'http://vault.vault.svc:8200',
      'https://kubernetes.default.svc',
    ]) {
      const fs = denials(findings(edit(store, { [`${VAULT}.server`]: server }), ctxWith(), 'team-a'));
      assert.deepEqual(
        fs.map((f) => [f.field, f.rule]),
        [[`${VAULT}.server`, 'eso.store.vault-server']],
        server,
      );
      assert.match(fs[0]?.message ?? '', /not one this cluster allows \(https:\/\/vault\.vault\.svc:8200\)/);
      assert.match(fs[0]?.message ?? '', /spec\.allowedVaultServers/);
    }
  });

  void test('a ClusterSecretStore gets the cluster list only: a guardrail widens namespaces, not cluster stores', () => {
    const other = 'https://vault-b.example:8200';
    const ctx = ctxWith({ guardrails: [guardrail('b', { mode: 'enforce', allowedVaultServers: [other] })] });
    assert.deepEqual(
      refusedBy(edit(store, { [`${VAULT}.server`]: other }), ctx),
      [],
      'team-a is selected by guardrail b',
    );
    assert.deepEqual(
      refusedBy(edit(store, { [`${VAULT}.server`]: other }), ctx, 'team-b'),
      ['eso.store.vault-server'],
      'team-b is not',
    );
    assert.deepEqual(refusedBy(edit(cluster, { [`${VAULT}.server`]: other }), ctx), ['eso.store.vault-server']);
  });

  void test('only an enforce guardrail widens the list: warn and audit modes add nothing', () => {
    const other = 'https://vault-b.example:8200';
    for (const mode of ['warn', 'audit']) {
      const ctx = ctxWith({ guardrails: [guardrail('b', { mode, allowedVaultServers: [other] })] });
      assert.deepEqual(refusedBy(edit(store, { [`${VAULT}.server`]: other }), ctx), ['eso.store.vault-server'], mode);
    }
  });

  void test('with no list configured anywhere any server is admitted (offline validation, unconfigured installs)', () => {
    assert.deepEqual(refusedBy(edit(store, { [`${VAULT}.server`]: 'https://anything.example' }), defaultContext()), []);
  });

  void test('--allowed-vault-server takes origins (repeatable or comma-separated) and names itself on a bad one', () => {
    assert.deepEqual(parseAllowed([`${CLUSTER_VAULT}`, 'https://b.example:8200,https://c.example']), {
      vaultServers: [CLUSTER_VAULT, 'https://b.example:8200', 'https://c.example'],
    });
    assert.equal(parseAllowed(undefined), undefined);
    for (const bad of ['vault.example:8200', 'https://vault.example/v1', 'ftp://vault.example']) {
      assert.throws(() => parseAllowed([bad]), /--allowed-vault-server must be an http\(s\) origin/, bad);
    }
  });
});

void describe('rule eso.store.token-audience', () => {
  const withAudiences = (o: KubeObject, audiences: string[]): KubeObject =>
    edit(o, { [`${VAULT}.auth.kubernetes.serviceAccountRef.audiences`]: audiences });

  void test('a store naming no audience gets "vault" (not the apiserver\'s, as ESO would) and is admitted', () => {
    assert.deepEqual(storeTokenAudiences(undefined), ['vault']);
    assert.deepEqual(storeTokenAudiences(['']), ['vault']);
    assert.deepEqual(storeTokenAudiences(['vault', 'x']), ['vault', 'x']);
    assert.deepEqual(refusedBy(store, ctxWith()), []);
  });

  void test('an apiserver audience is refused, naming the field, the rule and the guardrail that would allow it', () => {
    const fs = denials(findings(withAudiences(store, ['vault', API_AUDIENCE]), ctxWith(), 'team-a'));
    assert.deepEqual(
      fs.map((f) => [f.field, f.rule]),
      [[`${VAULT}.auth.kubernetes.serviceAccountRef.audiences`, 'eso.store.token-audience']],
    );
    assert.match(
      fs[0]?.message ?? '',
      /"https:\/\/kubernetes\.default\.svc\.cluster\.local" is the Kubernetes apiserver's own/,
    );
    assert.match(fs[0]?.message ?? '', /spec\.allowApiServerAudiences/);
  });

  void test("the jwt method's kubernetesServiceAccountToken is checked the same way", () => {
    const jwt = edit(store, {
      [`${VAULT}.auth`]: {
        jwt: {
          path: 'jwt',
          kubernetesServiceAccountToken: { serviceAccountRef: { name: 'app' }, audiences: [API_AUDIENCE] },
        },
      },
    });
    assert.deepEqual(
      denials(findings(jwt, ctxWith(), 'team-a')).map((f) => [f.field, f.rule]),
      [[`${VAULT}.auth.jwt.kubernetesServiceAccountToken.audiences`, 'eso.store.token-audience']],
    );
  });

  void test('an enforce guardrail selecting the namespace with allowApiServerAudiences lets it through; warn does not', () => {
    const o = withAudiences(store, [API_AUDIENCE]);
    assert.deepEqual(
      refusedBy(o, ctxWith({ guardrails: [guardrail('legacy', { mode: 'enforce', allowApiServerAudiences: true })] })),
      [],
    );
    assert.deepEqual(
      refusedBy(
        o,
        ctxWith({ guardrails: [guardrail('legacy', { mode: 'enforce', allowApiServerAudiences: true })] }),
        'team-b',
      ),
      ['eso.store.token-audience'],
    );
    assert.deepEqual(
      refusedBy(o, ctxWith({ guardrails: [guardrail('legacy', { mode: 'warn', allowApiServerAudiences: true })] })),
      ['eso.store.token-audience'],
    );
  });

  void test("a ClusterSecretStore is checked for the ServiceAccount's own namespace when it names one", () => {
    const css = edit(cluster, {
      [`${VAULT}.auth.kubernetes.serviceAccountRef`]: { name: 'app', namespace: 'team-b', audiences: [API_AUDIENCE] },
    });
    assert.deepEqual(refusedBy(css, ctxWith()), ['eso.store.token-audience']);
  });

  void test('unknown apiserver audiences (offline, webhook outside a pod): not checked at admission', () => {
    assert.deepEqual(refusedBy(withAudiences(store, [API_AUDIENCE]), ctxWith({ apiServerAudiences: undefined })), []);
  });

  void test("the apiserver's audiences are read from a token's aud claim (string or list)", () => {
    const jwt = (claims: object): string => `e30.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
    assert.deepEqual(audiencesOf(jwt({ aud: [API_AUDIENCE, 'https://issuer'] })), [API_AUDIENCE, 'https://issuer']);
    assert.deepEqual(audiencesOf(jwt({ aud: API_AUDIENCE })), [API_AUDIENCE]);
    assert.deepEqual(audiencesOf('not-a-jwt'), []);
  });
});
