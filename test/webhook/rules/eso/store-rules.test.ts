// SecretStore / ClusterSecretStore admission: ESO's rules (with ESO's messages) and vaultgate's own.
// Each rule: an accepted and a refused manifest.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultContext } from '../../../../webhook/admission/context.ts';
import type { KubeObject } from '../../../../webhook/admission/kinds.ts';
import { denials, edit, findings, rules, schemaErrors, warnings } from '../../../eso/helpers.ts';

const VAULT = 'spec.provider.vault';
const store: KubeObject = {
  apiVersion: 'external-secrets.io/v1',
  kind: 'SecretStore',
  metadata: { name: 'vault', namespace: 'team-a' },
  spec: {
    provider: {
      vault: {
        server: 'https://vault.example.com:8200',
        path: 'secret',
        version: 'v2',
        auth: { kubernetes: { mountPath: 'kubernetes', role: 'reader', serviceAccountRef: { name: 'app' } } },
      },
    },
  },
};
const cluster: KubeObject = edit(store, { kind: 'ClusterSecretStore', 'metadata.namespace': undefined });
const withAuth = (base: KubeObject, auth: unknown) => edit(base, { [`${VAULT}.auth`]: auth });

void describe('baseline', () => {
  void test('a plain kubernetes-auth SecretStore and ClusterSecretStore are accepted without findings', () => {
    assert.deepEqual(findings(store), []);
    assert.deepEqual(findings(cluster), []);
    assert.deepEqual(schemaErrors(store), []);
  });
});

void describe('providers', () => {
  void test("exactly one provider: none or two are refused with ESO's message", () => {
    const none = findings(edit(store, { 'spec.provider': {} }));
    assert.deepEqual(rules(denials(none)), ['eso.store.provider-count']);
    assert.match(none[0]?.message ?? '', /exactly one backend specified, found 0/);
    const two = findings(edit(store, { 'spec.provider.fake': { data: [] } }));
    assert.deepEqual(rules(denials(two)).sort(), ['eso.store.provider-count', 'eso.store.provider-unsupported']);
  });

  void test('another provider is refused with a clear message, not a schema error', () => {
    const aws = edit(store, { 'spec.provider': { aws: { service: 'SecretsManager', region: 'eu-west-1' } } });
    assert.deepEqual(schemaErrors(aws), [], 'the schema keeps provider open so the rule can name it');
    const fs = denials(findings(aws));
    assert.equal(fs.length, 1);
    assert.equal(fs[0]?.field, 'spec.provider.aws');
    assert.equal(fs[0]?.message, 'provider aws is not supported by vaultgate (only vault)');
  });
});

void describe('conditions (ClusterSecretStore)', () => {
  void test('namespaceRegexes that compile (Go syntax included) are accepted', () => {
    const ok = edit(cluster, {
      'spec.conditions': [{ namespaceRegexes: ['^team-.*$', '(?i)^Preview-[0-9]+$', '^[[:alnum:]]+$'] }],
    });
    assert.deepEqual(findings(ok), []);
  });

  void test("a namespaceRegex that does not compile is refused with ESO's wording", () => {
    const bad = findings(
      edit(cluster, { 'spec.conditions': [{ namespaces: ['a'] }, { namespaceRegexes: ['^ok$', '(unclosed'] }] }),
    );
    assert.equal(bad.length, 1);
    assert.equal(bad[0]?.field, 'spec.conditions[1].namespaceRegexes[1]');
    assert.match(
      bad[0]?.message ?? '',
      /^failed to compile 1th namespace regex in 1th condition: error parsing regexp/,
    );
  });

  void test('RE2-only semantics: lookahead (valid in JavaScript) is refused as ESO would', () => {
    const bad = findings(edit(cluster, { 'spec.conditions': [{ namespaceRegexes: ['^team-(?!admin)'] }] }));
    assert.match(bad[0]?.message ?? '', /invalid or unsupported Perl syntax/);
  });

  void test('conditions on a namespaced SecretStore only warn that they are ignored', () => {
    const fs = findings(edit(store, { 'spec.conditions': [{ namespaces: ['team-b'] }] }));
    assert.deepEqual(denials(fs), []);
    assert.deepEqual(rules(warnings(fs)), ['eso.store.conditions-ignored']);
  });
});

void describe('refreshInterval', () => {
  for (const ok of [0, 300, 3600]) {
    void test(`accepts ${JSON.stringify(ok)}`, () =>
      assert.deepEqual(findings(edit(store, { 'spec.refreshInterval': ok })), []));
  }
  // ESO's SecretStore refreshInterval is an int: its CRD refuses "5m", so vaultgate does too.
  for (const [bad, pattern] of [
    [-1, /must not be negative/],
    ['5m', /whole number of seconds in a secret store/],
    ['300', /whole number of seconds/],
    [1.5, /whole number/],
  ] as const) {
    void test(`refuses ${JSON.stringify(bad)}`, () => {
      const fs = findings(edit(store, { 'spec.refreshInterval': bad }));
      assert.ok(rules(fs).includes('eso.store.refresh-interval'), rules(fs).join());
      assert.match(fs.find((f) => f.rule === 'eso.store.refresh-interval')?.message ?? '', pattern);
    });
  }
});

void describe('references in a namespaced store may not leave its namespace', () => {
  const refs: Array<[string, unknown, string]> = [
    [
      'auth.kubernetes.serviceAccountRef',
      { kubernetes: { role: 'r', serviceAccountRef: { name: 'app', namespace: 'NS' } } },
      'Auth.Kubernetes.ServiceAccountRef',
    ],
    ['auth.tokenSecretRef', { tokenSecretRef: { name: 't', key: 'token', namespace: 'NS' } }, 'Auth.TokenSecretRef'],
    [
      'auth.appRole.secretRef',
      { appRole: { roleId: 'id', secretRef: { name: 's', namespace: 'NS' } } },
      'Auth.AppRole.SecretRef',
    ],
    [
      'auth.appRole.roleRef',
      { appRole: { roleRef: { name: 'r', namespace: 'NS' }, secretRef: { name: 's' } } },
      'Auth.AppRole.RoleRef',
    ],
    ['auth.jwt.secretRef', { jwt: { role: 'r', secretRef: { name: 'j', namespace: 'NS' } } }, 'Auth.Jwt.SecretRef'],
    [
      'auth.jwt.kubernetesServiceAccountToken.serviceAccountRef',
      { jwt: { kubernetesServiceAccountToken: { serviceAccountRef: { name: 'sa', namespace: 'NS' } } } },
      'Auth.Jwt.KubernetesServiceAccountToken.ServiceAccountRef',
    ],
  ];
  for (const [path, auth, esoName] of refs) {
    const at = (ns: string) =>
      withAuth(store, JSON.parse(JSON.stringify(auth).replace('"NS"', JSON.stringify(ns))) as unknown);
    void test(`${path}: own namespace accepted, another refused`, () => {
      assert.deepEqual(denials(findings(at('team-a'))), []);
      const fs = denials(findings(at('kube-system')));
      assert.equal(fs.length, 1);
      assert.equal(fs[0]?.rule, 'eso.store.cross-namespace');
      assert.equal(fs[0]?.field, `${VAULT}.${path}.namespace`);
      assert.match(
        fs[0]?.message ?? '',
        new RegExp(
          `^invalid ${esoName.replace(/\./g, '\\.')}: namespace should either be empty or match the namespace of the SecretStore`,
        ),
      );
      // A ClusterSecretStore may point anywhere (referent auth or an explicit namespace).
      assert.deepEqual(
        denials(findings(edit(at('kube-system'), { kind: 'ClusterSecretStore', 'metadata.namespace': undefined }))),
        [],
      );
    });
  }

  void test('tls client certificate and caProvider references are checked too', () => {
    const tls = edit(store, {
      [`${VAULT}.tls`]: {
        certSecretRef: { name: 'c', namespace: 'other' },
        keySecretRef: { name: 'c', namespace: 'team-a' },
      },
    });
    assert.deepEqual(
      denials(findings(tls)).map((f) => f.field),
      [`${VAULT}.tls.certSecretRef.namespace`],
    );
    const ca = edit(store, { [`${VAULT}.caProvider`]: { type: 'ConfigMap', name: 'ca', namespace: 'other' } });
    assert.deepEqual(
      denials(findings(ca)).map((f) => f.field),
      [`${VAULT}.caProvider.namespace`],
    );
    assert.deepEqual(findings(edit(ca, { [`${VAULT}.caProvider.namespace`]: 'team-a' })), []);
  });

  void test('the namespace comes from the request when metadata has none (CREATE without metadata.namespace)', () => {
    const noNs = withAuth(edit(store, { 'metadata.namespace': undefined }), {
      tokenSecretRef: { name: 't', namespace: 'team-a' },
    });
    assert.deepEqual(denials(findings(noNs, defaultContext(), 'team-a')), []);
    assert.equal(denials(findings(noNs, defaultContext(), 'team-b'))[0]?.rule, 'eso.store.cross-namespace');
  });
});

void describe('auth methods', () => {
  void test('appRole needs roleId or roleRef', () => {
    assert.deepEqual(findings(withAuth(store, { appRole: { roleId: 'x', secretRef: { name: 's', key: 'id' } } })), []);
    assert.deepEqual(
      findings(withAuth(store, { appRole: { roleRef: { name: 'r', key: 'id' }, secretRef: { name: 's' } } })),
      [],
    );
    const fs = findings(withAuth(store, { appRole: { path: 'approle', secretRef: { name: 's' } } }));
    assert.deepEqual(rules(fs), ['eso.store.approle-role-id']);
    assert.equal(fs[0]?.message, 'invalid Auth.AppRole: neither `roleId` nor `roleRef` was supplied');
  });

  void test('jwt needs secretRef or kubernetesServiceAccountToken', () => {
    assert.deepEqual(findings(withAuth(store, { jwt: { role: 'r', secretRef: { name: 'j' } } })), []);
    assert.deepEqual(
      findings(
        withAuth(store, { jwt: { role: 'r', kubernetesServiceAccountToken: { serviceAccountRef: { name: 'sa' } } } }),
      ),
      [],
    );
    const fs = findings(withAuth(store, { jwt: { path: 'jwt', role: 'r' } }));
    assert.deepEqual(rules(fs), ['eso.store.jwt-token-source']);
    assert.match(
      fs[0]?.message ?? '',
      /neither `secretRef` nor `kubernetesServiceAccountToken` was supplied as token source for jwt authentication/,
    );
  });

  void test('ldap against OpenBao 2.7 (the default target) is admitted with a warning: OpenBao no longer builds it in', () => {
    const ldap = withAuth(store, {
      ldap: { path: 'ldap', username: 'alice', secretRef: { name: 'vault-ldap', key: 'password' } },
    });
    const fs = findings(ldap);
    assert.deepEqual(denials(fs), []);
    assert.deepEqual(
      warnings(fs).map((f) => [f.field, f.rule]),
      [[`${VAULT}.auth.ldap`, 'eso.store.ldap-plugin']],
    );
    assert.match(
      warnings(fs)[0]!.message,
      /OpenBao 2\.7 has no built-in ldap auth method \(it moved to the external openbao-plugins\)/,
    );
    assert.deepEqual(
      warnings(findings(ldap, { ...defaultContext(), vaultTarget: { flavor: 'vault', version: '1.20' } })),
      [],
      'HashiCorp Vault has it built in',
    );
    assert.deepEqual(
      warnings(
        findings(
          withAuth(store, { userPass: { path: 'userpass', username: 'alice', secretRef: { name: 'u', key: 'p' } } }),
        ),
      ),
      [],
    );
  });

  void test('tokenSecretRef is supported', () => {
    assert.deepEqual(findings(withAuth(store, { tokenSecretRef: { name: 'vault-token', key: 'token' } })), []);
  });

  void test("userPass, ldap and cert are supported; their Secrets need a name and a key, in the store's own namespace", () => {
    const ref = (name: string, key: string) => ({ name, key });
    assert.deepEqual(
      findings(
        withAuth(store, {
          userPass: { path: 'userpass', username: 'alice', secretRef: ref('vault-user', 'password') },
        }),
      ),
      [],
    );
    assert.deepEqual(
      denials(
        findings(
          withAuth(store, { ldap: { path: 'ldap', username: 'alice', secretRef: ref('vault-ldap', 'password') } }),
        ),
      ),
      [],
    );
    assert.deepEqual(
      findings(
        withAuth(store, {
          cert: { clientCert: ref('vault-client', 'tls.crt'), secretRef: ref('vault-client', 'tls.key') },
        }),
      ),
      [],
    );
    const missing = findings(
      withAuth(store, {
        userPass: { path: 'userpass', username: ' ', secretRef: { name: 'vault-user' } },
        cert: { clientCert: ref('c', 'tls.crt') },
      }),
    );
    assert.deepEqual(
      denials(missing).map((f) => [f.field, f.rule]),
      [
        [`${VAULT}.auth.userPass.username`, 'eso.store.auth-secret'],
        [`${VAULT}.auth.userPass.secretRef`, 'eso.store.auth-secret'],
        [`${VAULT}.auth.cert.secretRef`, 'eso.store.auth-secret'],
      ],
    );
    const elsewhere = findings(
      withAuth(store, {
        ldap: { path: 'ldap', username: 'a', secretRef: { name: 's', key: 'k', namespace: 'other' } },
      }),
    );
    assert.deepEqual(
      denials(elsewhere).map((f) => [f.field, f.rule]),
      [[`${VAULT}.auth.ldap.secretRef.namespace`, 'eso.store.cross-namespace']],
    );
    assert.match(denials(elsewhere)[0]?.message ?? '', /invalid Auth\.Ldap\.SecretRef/);
  });

  for (const method of ['iam', 'gcp']) {
    void test(`${method} is refused as not supported by vaultgate`, () => {
      const fs = findings(withAuth(store, { [method]: { path: method, username: 'u', role: 'r' } }));
      assert.deepEqual(rules(denials(fs)), ['eso.store.auth-unsupported']);
      assert.equal(fs[0]?.field, `${VAULT}.auth.${method}`);
      assert.match(fs[0]?.message ?? '', new RegExp(`auth method ${method} is not supported by vaultgate`));
    });
  }

  void test('a store without any auth method is refused (vaultgate never lends its own token)', () => {
    assert.deepEqual(rules(findings(withAuth(store, undefined))), ['eso.store.auth-required']);
    assert.deepEqual(rules(findings(withAuth(store, { namespace: 'admin' }))), ['eso.store.auth-required']);
  });

  void test('several auth blocks: allowed with a warning naming the one used (ESO order)', () => {
    const fs = findings(
      withAuth(store, { kubernetes: { role: 'r', serviceAccountRef: { name: 'a' } }, tokenSecretRef: { name: 't' } }),
    );
    assert.deepEqual(denials(fs), []);
    assert.deepEqual(rules(fs), ['eso.store.multiple-auth']);
    assert.match(fs[0]?.message ?? '', /here tokenSecretRef/);
  });

  void test('kubernetes auth: long-lived token Secret refused; no serviceAccountRef refused for a SecretStore, warned for a ClusterSecretStore', () => {
    assert.deepEqual(rules(findings(withAuth(store, { kubernetes: { role: 'r', secretRef: { name: 'sa-token' } } }))), [
      'eso.store.auth-unsupported',
    ]);
    const bare = { kubernetes: { mountPath: 'kubernetes', role: 'r' } };
    assert.deepEqual(rules(denials(findings(withAuth(store, bare)))), ['eso.store.kubernetes-identity']);
    const css = findings(withAuth(cluster, bare));
    assert.deepEqual(denials(css), []);
    assert.deepEqual(rules(warnings(css)), ['eso.store.kubernetes-identity']);
    // the warning says what the controller does (store-connector.ts refuses such a store), not that it logs in with its own identity (issue #21 item 9)
    const message = warnings(css)[0]?.message ?? '';
    assert.match(
      message,
      /the controller refuses to connect this ClusterSecretStore \(InvalidProviderConfig\) and no ExternalSecret or PushSecret that uses it is synced/,
    );
    assert.doesNotMatch(message, /logs in with vaultgate's own/);
  });

  void test('a missing audience is not an error (Vault 1.21 reverted the requirement)', () => {
    assert.deepEqual(findings(withAuth(store, { kubernetes: { role: 'r', serviceAccountRef: { name: 'app' } } })), []);
  });
});

void describe('connection settings', () => {
  void test('tls: both refs or neither', () => {
    const both = edit(store, { [`${VAULT}.tls`]: { certSecretRef: { name: 'c' }, keySecretRef: { name: 'c' } } });
    assert.deepEqual(findings(both), []);
    for (const only of ['certSecretRef', 'keySecretRef']) {
      const fs = findings(edit(store, { [`${VAULT}.tls`]: { [only]: { name: 'c' } } }));
      assert.deepEqual(rules(fs), ['eso.store.client-tls']);
      assert.match(
        fs[0]?.message ?? '',
        /^when provided, both ClientTLS.ClientCert and ClientTLS.SecretRef should be provided/,
      );
    }
  });

  void test('checkAndSet.required is refused with KV v1 and only warned (no effect) with v2', () => {
    const v1 = findings(edit(store, { [`${VAULT}.version`]: 'v1', [`${VAULT}.checkAndSet`]: { required: true } }));
    assert.deepEqual(rules(v1), ['eso.store.cas-kv1']);
    assert.equal(v1[0]?.message, 'checkAndSet is not supported with Vault KV version v1');
    const v2 = findings(edit(store, { [`${VAULT}.checkAndSet`]: { required: true } }));
    assert.deepEqual(denials(v2), []);
    assert.deepEqual(
      findings(edit(store, { [`${VAULT}.version`]: 'v1', [`${VAULT}.checkAndSet`]: { required: false } })),
      [],
    );
  });

  void test('features vaultgate does not implement are named, never silently dropped', () => {
    assert.deepEqual(rules(denials(findings(edit(store, { [`${VAULT}.headers`]: { 'X-Proxy-Auth': 'x' } })))), [
      'eso.store.unsupported-field',
    ]);
    assert.deepEqual(findings(edit(store, { [`${VAULT}.headers`]: {} })), []);
    const ignored = findings(
      edit(store, {
        [`${VAULT}.readYourWrites`]: true,
        [`${VAULT}.forwardInconsistent`]: true,
        'spec.retrySettings': { maxRetries: 3 },
      }),
    );
    assert.deepEqual(denials(ignored), []);
    assert.deepEqual(
      warnings(ignored)
        .map((f) => f.field)
        .sort(),
      [`${VAULT}.forwardInconsistent`, `${VAULT}.readYourWrites`, 'spec.retrySettings'],
    );
  });

  void test('a ClusterSecretStore caProvider needs a namespace (ESO: "missing namespace on caProvider secret")', () => {
    const ca = { type: 'Secret', name: 'vault-ca', key: 'ca.crt' };
    const fs = findings(edit(cluster, { [`${VAULT}.caProvider`]: ca }));
    assert.deepEqual(rules(fs), ['eso.store.ca-provider-namespace']);
    assert.deepEqual(findings(edit(cluster, { [`${VAULT}.caProvider`]: { ...ca, namespace: 'vault' } })), []);
    assert.deepEqual(
      findings(edit(store, { [`${VAULT}.caProvider`]: ca })),
      [],
      'a SecretStore reads it from its own namespace',
    );
  });
});

void describe('controller class', () => {
  const aws = edit(store, { 'spec.provider': { aws: { service: 'SecretsManager' } } });
  void test('a store of another controller class is admitted untouched', () => {
    assert.deepEqual(
      findings(edit(aws, { 'spec.controller': 'eso' }), defaultContext({ controllerClass: 'vaultgate' })),
      [],
    );
    assert.deepEqual(
      findings(edit(aws, { 'spec.controller': 'eso' })),
      [],
      'also when vaultgate runs with the default class',
    );
  });
  void test('an empty class belongs to every controller (ESO semantics), so ours validates it', () => {
    assert.equal(denials(findings(aws, defaultContext({ controllerClass: 'vaultgate' }))).length, 1);
    assert.equal(
      denials(findings(edit(aws, { 'spec.controller': 'vaultgate' }), defaultContext({ controllerClass: 'vaultgate' })))
        .length,
      1,
    );
  });
});

void describe('secrets stay out of messages', () => {
  void test('no finding repeats a roleId, token or header value', () => {
    const secretish = 'db02de05-fa39-4855-SECRET-67221c5c2f63';
    const bad = edit(store, {
      [`${VAULT}.auth`]: {
        appRole: { roleId: secretish, secretRef: { name: 's', namespace: 'elsewhere' } },
        ldap: { username: secretish },
      },
      [`${VAULT}.headers`]: { Authorization: `Bearer ${secretish}` },
      [`${VAULT}.tls`]: { certSecretRef: { name: 'c' } },
    });
    const fs = findings(bad);
    assert.ok(fs.length >= 4);
    for (const f of fs) assert.ok(!f.message.includes('SECRET') && !f.field.includes('SECRET'), f.message);
  });
});
