// Templates end to end (real tier, issue #13): real kube-apiserver, real OpenBao 2.7.2, vaultgate's
// webhook and controller. An ExternalSecret whose templates come from a ConfigMap (Values and
// KeysAndValues), use range/variables/define and ESO's functions, and template its Secret's labels and
// annotations: the Secret is rendered from OpenBao's data; editing the ConfigMap re-renders it at once
// (refreshInterval is 1h: only the ConfigMap watch can do it); a missing ConfigMap waits with Ready
// False and converges when it is created; admission refuses a function vaultgate does not render.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { condition, type E2EStack, startE2E, waitForObject } from '../harness/e2e-stack.ts';
import { realTier } from '../harness/real-tier.ts';

const tier = await realTier();
const NS = 'team-t';
const PASSWORD = 'pw-Tm52xQ';

type Obj = Record<string, unknown> & {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
};
interface SecretObj extends Obj {
  data?: Record<string, string>;
}
const decode = (s: SecretObj | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(s?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));

const templates = (dsnScheme: string): object => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'db-templates', namespace: NS },
  data: {
    dsn: `{{ define "hostport" }}{{ .host }}:{{ .port }}{{ end }}${dsnScheme}://{{ .username }}:{{ .password | urlquery }}@{{ template "hostport" . }}/app`,
    'env.yaml': '{{ range $k, $v := . }}{{ $k | upper }}: {{ $v | quote }}\n{{ end }}',
  },
});

function externalSecret(name: string, configMap: string): object {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { name, namespace: NS },
    spec: {
      refreshInterval: '1h',
      secretStoreRef: { name: 'vault-backend', kind: 'SecretStore' },
      target: {
        name,
        template: {
          metadata: {
            labels: { 'db-user': '{{ .username | lower }}' },
            annotations: {
              'rendered-keys': '{{ keys (fromYaml (toYaml (dict "a" 1 "b" 2))) | sortAlpha | join "," }}',
            },
          },
          data: { 'port-number': '{{ (fromJson (printf "{\\"p\\": %s}" .port)).p }}' },
          templateFrom: [
            {
              configMap: { name: configMap, items: [{ key: 'dsn' }, { key: 'env.yaml', templateAs: 'KeysAndValues' }] },
            },
          ],
        },
      },
      dataFrom: [{ extract: { key: 'team-t/db' } }],
    },
  };
}

void describe(
  'templates on the real tier: templateFrom ConfigMap, metadata, the watch, admission',
  { skip: tier.skip },
  () => {
    let stack: E2EStack;

    before(async () => {
      stack = await startE2E();
      await stack.cp.apply([
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'db-reader', namespace: NS } },
      ]);
      await stack.vaultRoot('POST', 'secret/data/team-t/db', {
        data: { username: 'App', password: PASSWORD, host: 'db.internal', port: '5432' },
      });
      await stack.kubectlApply([
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultPolicy',
          metadata: { name: 'db-read', namespace: NS },
          spec: { rules: [{ path: 'secret/data/{{namespace}}/db', capabilities: ['read'] }] },
        },
        {
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultRoleBinding',
          metadata: { name: 'db-reader', namespace: NS },
          spec: { serviceAccounts: ['db-reader'], policies: ['db-read'], audience: 'vault' },
        },
      ]);
      await stack.cp.kubectl(['wait', '--for=condition=Ready', '--timeout=120s', '-n', NS, 'vrb/db-reader']);
      await stack.kubectlApply({
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault-backend', namespace: NS },
        spec: {
          provider: {
            vault: {
              server: stack.vault.addr,
              path: 'secret',
              version: 'v2',
              auth: {
                kubernetes: {
                  mountPath: 'kubernetes',
                  role: `vaultgate.${NS}.db-reader`,
                  serviceAccountRef: { name: 'db-reader', audiences: ['vault'] },
                },
              },
            },
          },
        },
      });
      await waitForObject<Obj>(
        stack,
        'secretstore',
        'vault-backend',
        NS,
        (o) => condition(o)?.status === 'True',
        'SecretStore Ready',
        120_000,
      );
    });
    after(async () => {
      await stack?.stop();
    });

    void test("the Secret is rendered from OpenBao through the ConfigMap's templates, labels and annotations included", async () => {
      await stack.kubectlApply(templates('postgres'));
      await stack.kubectlApply(externalSecret('db', 'db-templates'));
      const secret = await waitForObject<SecretObj>(
        stack,
        'secret',
        'db',
        NS,
        (s) => decode(s).dsn !== undefined,
        'Secret db rendered',
        120_000,
      );
      assert.deepEqual(decode(secret), {
        dsn: `postgres://App:${PASSWORD}@db.internal:5432/app`,
        HOST: 'db.internal',
        PASSWORD,
        PORT: '5432',
        USERNAME: 'App',
        'port-number': '5432',
      });
      assert.equal(secret?.metadata.labels?.['db-user'], 'app');
      assert.equal(secret?.metadata.annotations?.['rendered-keys'], 'a,b');
    });

    void test('editing the ConfigMap re-renders the Secret at once (refreshInterval 1h: the watch does it)', async () => {
      await stack.kubectlApply(templates('mysql'));
      const secret = await waitForObject<SecretObj>(
        stack,
        'secret',
        'db',
        NS,
        (s) => decode(s).dsn?.startsWith('mysql://') === true,
        'Secret db re-rendered',
        60_000,
      );
      assert.equal(decode(secret).dsn, `mysql://App:${PASSWORD}@db.internal:5432/app`);
    });

    void test('a ConfigMap that does not exist yet: Ready False naming it, then synced once it is created', async () => {
      await stack.kubectlApply(externalSecret('late', 'late-templates'));
      const es = await waitForObject<Obj>(
        stack,
        'externalsecret',
        'late',
        NS,
        (o) => condition(o)?.reason === 'TemplateSourceNotFound',
        'Ready False TemplateSourceNotFound',
        120_000,
      );
      assert.equal(condition(es)?.status, 'False');
      assert.match(condition(es)?.message ?? '', /templateFrom\[0\]\.configMap: ConfigMap "late-templates" not found/);
      await stack.kubectlApply({
        ...(templates('postgres') as { metadata: object }),
        metadata: { name: 'late-templates', namespace: NS },
      });
      const secret = await waitForObject<SecretObj>(
        stack,
        'secret',
        'late',
        NS,
        (s) => decode(s).dsn !== undefined,
        'Secret late rendered',
        120_000,
      );
      assert.equal(decode(secret).dsn, `postgres://App:${PASSWORD}@db.internal:5432/app`);
    });

    void test('admission refuses a function vaultgate does not render, naming it and the reason', async () => {
      const bad = {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: { name: 'rand', namespace: NS },
        spec: {
          secretStoreRef: { name: 'vault-backend', kind: 'SecretStore' },
          target: { template: { data: { x: '{{ randAlphaNum 8 }}' } } },
          dataFrom: [{ extract: { key: 'team-t/db' } }],
        },
      };
      await assert.rejects(
        stack.kubectlApply(bad),
        /randAlphaNum" is not supported by vaultgate: its output changes on every render/,
      );
    });

    void test('no secret value in statuses, Events or the controller log', async () => {
      const all = await stack.cp.request('GET', `/apis/external-secrets.io/v1/namespaces/${NS}/externalsecrets`);
      const events = await stack.cp.request('GET', `/api/v1/namespaces/${NS}/events`);
      for (const text of [all.text, events.text, stack.procs.log('controller')]) assert.ok(!text.includes(PASSWORD));
    });
  },
);
