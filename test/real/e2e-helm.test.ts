// Scenario 6 (real tier): the Helm chart. `helm lint` and `helm template` are clean; `helm install` into
// the real apiserver creates the CRDs, RBAC and webhook configurations (the webhook reached through the
// chart's webhook.urlOverride, since no pods run without a kubelet); a bad VaultPolicy is refused through
// them. Then vaultgate runs as the chart's Deployments would: the container args rendered by the chart,
// each process authenticated as the chart's ServiceAccount (so the chart's RBAC is what is tested), and
// the controller logging in to Vault with kubernetes auth and the bootstrap policy from NOTES.txt.
// Vault is a real OpenBao 2.7.2: its ACLs enforce the bootstrap policy.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { type E2EStack, startE2E, toYaml } from '../harness/e2e-stack.ts';
import { REPO_ROOT, runVaultgate, vaultgateArgv } from '../harness/e2e-processes.ts';
import { freePort } from '../harness/ports.ts';
import { realTier } from '../harness/real-tier.ts';
import { CommandError } from '../harness/tools.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const CHART = join(REPO_ROOT, 'charts/vaultgate');
const RELEASE = 'vaultgate';
const RELEASE_NS = 'vaultgate';
const NS = 'team-a';

type Doc = Record<string, unknown> & {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};
type DeploymentDoc = Doc & {
  spec: { template: { spec: { serviceAccountName: string; containers: Array<{ args: string[] }> } } };
};

const docs = (yaml: string): Doc[] =>
  parseAllDocuments(yaml)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => Boolean(d?.kind));

/** The chart's container args with `--flag=value` entries replaced or dropped (undefined) and extra ones appended. */
function withFlags(args: string[], replace: Record<string, string | undefined>, extra: string[] = []): string[] {
  const out = args.filter((a) => !Object.keys(replace).some((f) => a === `--${f}` || a.startsWith(`--${f}=`)));
  for (const [f, v] of Object.entries(replace)) if (v !== undefined) out.push(`--${f}=${v}`);
  return [...out, ...extra];
}

function httpsStatus(url: string, caPem: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: caPem, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

void describe(
  'e2e 6: the Helm chart — lint, template, install into the real apiserver, run as the chart runs vaultgate',
  { skip: tier.skip },
  () => {
    let stack: E2EStack;
    let manifest: Doc[] = [];
    let webhookPort = 0;
    let webhookCaPem = '';

    const deployment = (component: 'webhook' | 'controller'): DeploymentDoc => {
      const d = manifest.find(
        (x) => x.kind === 'Deployment' && x.metadata.labels?.['app.kubernetes.io/component'] === component,
      );
      assert.ok(d, `the chart renders a ${component} Deployment`);
      return d as DeploymentDoc;
    };
    /** A kubeconfig for a ServiceAccount of the release (TokenRequest), like the token a pod mounts. */
    const saKubeconfig = async (sa: string): Promise<string> =>
      stack.procs.writeTokenKubeconfig(
        `${sa}.kubeconfig`,
        stack.cp.server,
        stack.cp.caPem,
        await stack.cp.serviceAccountToken(RELEASE_NS, sa, undefined, 3600),
      );
    const badPolicy = (): Promise<unknown> =>
      stack.cp.kubectl(['apply', '-f', join(REPO_ROOT, 'examples/bad-vaultpolicy-sudo-sys.yaml')]).then(
        () => undefined,
        (e: unknown) => e,
      );

    before(async () => {
      stack = await startE2E({ crds: false, webhook: false, controller: false });
      await stack.cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    });
    after(async () => {
      await stack?.stop();
    });

    void test('helm lint is clean with the default values and with every ci/ values file', async () => {
      const valueFiles = readdirSync(join(CHART, 'ci'))
        .filter((f) => f.endsWith('.yaml'))
        .sort();
      assert.ok(valueFiles.length > 0);
      for (const values of [undefined, ...valueFiles]) {
        const out = await stack.cp.helm([
          'lint',
          CHART,
          '--strict',
          ...(values ? ['-f', join(CHART, 'ci', values)] : []),
        ]);
        assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/, `${values ?? 'defaults'}:\n${out}`);
        assert.doesNotMatch(out, /\[(WARNING|ERROR)\]/, `${values ?? 'defaults'}:\n${out}`);
      }
    });

    void test('helm template renders valid objects; with webhook.urlOverride every webhook calls that URL with the given CA', async () => {
      const rendered = docs(await stack.cp.helm(['template', RELEASE, CHART, '-n', RELEASE_NS, '--include-crds']));
      const kinds = new Set(rendered.map((d) => d.kind));
      for (const k of [
        'CustomResourceDefinition',
        'ServiceAccount',
        'ClusterRole',
        'ClusterRoleBinding',
        'Deployment',
        'Service',
        'MutatingWebhookConfiguration',
        'ValidatingWebhookConfiguration',
      ]) {
        assert.ok(kinds.has(k), `renders a ${k}`);
      }
      const crds = rendered
        .filter((d) => d.kind === 'CustomResourceDefinition')
        .map((d) => d.metadata.name)
        .sort();
      assert.deepEqual(crds, [
        'clusterexternalsecrets.external-secrets.io',
        'clustergenerators.generators.external-secrets.io',
        'clustersecretstores.external-secrets.io',
        'externalsecrets.external-secrets.io',
        'passwords.generators.external-secrets.io',
        'pushsecrets.external-secrets.io',
        'secretstores.external-secrets.io',
        'vaultdynamicsecrets.generators.external-secrets.io',
        'vaultdynamicsecrets.vaultgate.io',
        'vaultguardrails.vaultgate.io',
        'vaultpolicies.vaultgate.io',
        'vaultrolebindings.vaultgate.io',
      ]);
      // The real apiserver accepts the built-in objects as rendered (server-side dry run: schema, defaults,
      // RBAC validation); CRDs and custom resources are applied for real by helm install below.
      await stack.cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: RELEASE_NS } });
      const builtIn = rendered.filter(
        (d) =>
          !/\.(vaultgate\.io|external-secrets\.io|monitoring\.coreos\.com|cert-manager\.io)\//.test(
            String(d.apiVersion),
          ) && d.kind !== 'CustomResourceDefinition',
      );
      assert.ok(builtIn.length > 5);
      const dry = await stack.cp.kubectl(['apply', '--dry-run=server', '-f', '-'], { stdin: toYaml(builtIn) });
      assert.equal(dry.trim().split('\n').length, builtIn.length, dry);

      const url = 'https://127.0.0.1:9443';
      const withUrl = docs(
        await stack.cp.helm([
          'template',
          RELEASE,
          CHART,
          '-n',
          RELEASE_NS,
          '--set',
          `webhook.urlOverride=${url}`,
          '--set',
          `webhook.caBundle=${Buffer.from('ca').toString('base64')}`,
        ]),
      );
      const hooks = withUrl
        .filter((d) => d.kind.endsWith('WebhookConfiguration'))
        .flatMap(
          (d) =>
            d.webhooks as Array<{
              name: string;
              clientConfig: { url?: string; service?: unknown; caBundle?: string };
              failurePolicy: string;
            }>,
        );
      assert.ok(hooks.length >= 2);
      for (const h of hooks) {
        assert.match(h.clientConfig.url ?? '', /^https:\/\/127\.0\.0\.1:9443\/(mutate|validate)$/, h.name);
        assert.equal(h.clientConfig.service, undefined, h.name);
        assert.equal(h.clientConfig.caBundle, Buffer.from('ca').toString('base64'), h.name);
      }
      const vaultgateHooks = hooks.filter((h) => h.name.startsWith('vaultgate.'));
      assert.ok(
        vaultgateHooks.length === 2 && vaultgateHooks.every((h) => h.failurePolicy === 'Fail'),
        'vaultgate kinds fail closed',
      );
    });

    void test('every container of every values set starts with arguments the vaultgate CLI accepts', async () => {
      const valueFiles = readdirSync(join(CHART, 'ci'))
        .filter((f) => f.endsWith('.yaml'))
        .sort();
      const problems: string[] = [];
      for (const values of [undefined, ...valueFiles]) {
        const rendered = docs(
          await stack.cp.helm([
            'template',
            RELEASE,
            CHART,
            '-n',
            RELEASE_NS,
            ...(values ? ['-f', join(CHART, 'ci', values)] : []),
          ]),
        );
        for (const d of rendered.filter((x): x is DeploymentDoc => x.kind === 'Deployment')) {
          const args = d.spec.template.spec.containers[0]?.args ?? [];
          // --help answers only after every flag parsed: exit 0 means the CLI knows them all.
          await runVaultgate([...args, '--help']).catch((e: unknown) => {
            problems.push(
              `${values ?? 'defaults'} ${d.metadata.name}: ${e instanceof CommandError ? e.stderr.split('\n')[0] : String(e)}`,
            );
          });
        }
      }
      assert.deepEqual(problems, []);
    });

    void test('helm install creates the CRDs, RBAC and webhook configurations, and a bad VaultPolicy is refused through them', async () => {
      // A webhook must answer before the chart's own objects go through admission; it serves before its CRDs exist.
      webhookPort = await freePort();
      const pre = await stack.procs.startWebhook({ name: 'webhook-preinstall', port: webhookPort, waitReady: false });
      webhookCaPem = pre.caPem;
      const values = join(CHART, 'ci', 'url-override-values.yaml');
      const out = await stack.cp.helm(
        [
          'install',
          RELEASE,
          CHART,
          '-n',
          RELEASE_NS,
          '--create-namespace',
          '-f',
          values,
          '--set',
          `webhook.urlOverride=${pre.url}`,
          '--set',
          `webhook.caBundle=${Buffer.from(pre.caPem).toString('base64')}`,
          '--set',
          `vault.address=${stack.vault.addr}`,
        ],
        { timeoutMs: 180_000 },
      );
      assert.match(out, /STATUS: deployed/);
      manifest = docs(await stack.cp.helm(['get', 'manifest', RELEASE, '-n', RELEASE_NS]));

      await stack.cp.kubectl([
        'wait',
        '--for=condition=Established',
        '--timeout=60s',
        'crd/vaultpolicies.vaultgate.io',
        'crd/vaultrolebindings.vaultgate.io',
        'crd/vaultguardrails.vaultgate.io',
        'crd/secretstores.external-secrets.io',
        'crd/clustersecretstores.external-secrets.io',
        'crd/externalsecrets.external-secrets.io',
      ]);
      const roles = await stack.cp.kubectl([
        'get',
        'clusterrole,clusterrolebinding',
        '-l',
        `app.kubernetes.io/instance=${RELEASE}`,
        '-o',
        'name',
      ]);
      for (const c of ['webhook', 'controller']) {
        assert.match(roles, new RegExp(`clusterrole\\.rbac\\.authorization\\.k8s\\.io/${RELEASE}-${c}`), roles);
        assert.match(roles, new RegExp(`clusterrolebinding\\.rbac\\.authorization\\.k8s\\.io/${RELEASE}-${c}`), roles);
      }
      const configs = JSON.parse(
        await stack.cp.kubectl([
          'get',
          'mutatingwebhookconfigurations,validatingwebhookconfigurations',
          '-l',
          `app.kubernetes.io/instance=${RELEASE}`,
          '-o',
          'json',
        ]),
      ) as { items: Array<{ webhooks: Array<{ clientConfig: { url?: string } }> }> };
      assert.equal(configs.items.length, 2);
      for (const h of configs.items.flatMap((i) => i.webhooks)) assert.ok(h.clientConfig.url?.startsWith(pre.url));

      // The apiserver's admission plugin picks new configurations up from an informer: poll a dry run.
      await waitFor(
        async () => {
          const e = await stack.cp
            .kubectl(['apply', '--dry-run=server', '-f', join(REPO_ROOT, 'examples/bad-vaultpolicy-sudo-sys.yaml')])
            .then(
              () => undefined,
              (x: unknown) => x,
            );
          return e instanceof CommandError && /denied the request/.test(e.stderr) ? true : undefined;
        },
        { what: "the chart's webhook configurations in effect", timeoutMs: 30_000, intervalMs: 200 },
      );
      const refused = await badPolicy();
      assert.ok(refused instanceof CommandError);
      assert.match(
        refused.stderr,
        new RegExp(`admission webhook "vaultgate\\.validate\\.${RELEASE}\\.vaultgate\\.io" denied the request`),
      );
      assert.match(refused.stderr, /"sudo" is forbidden .*\(rule guardrail\.forbidden-capability\)/);
    });

    void test("the webhook runs with the chart's args as the chart's ServiceAccount: ready, audit key in the release namespace, still refusing", async () => {
      assert.ok(manifest.length > 0, 'helm install ran');
      const d = deployment('webhook');
      const kubeconfig = await saKubeconfig(d.spec.template.spec.serviceAccountName);
      await stack.procs.stop('webhook-preinstall');
      const cert = await stack.cp.issueServingCert(['127.0.0.1', 'localhost']);
      assert.equal(cert.caPem, webhookCaPem, 'same CA as the caBundle the chart was given');
      const certFile = stack.procs.writeSecretFile('chart-webhook-tls.crt', cert.certPem);
      const keyFile = stack.procs.writeSecretFile('chart-webhook-tls.key', cert.keyPem);
      const args = withFlags(
        d.spec.template.spec.containers[0]?.args ?? [],
        { port: String(webhookPort), 'tls-cert-file': certFile, 'tls-key-file': keyFile },
        ['--host=127.0.0.1', `--kubeconfig=${kubeconfig}`, '--drain-seconds=0'],
      );
      const proc = stack.procs.group.spawn('webhook', process.execPath, vaultgateArgv(args), {
        ...process.env,
        POD_NAME: 'webhook-0',
        POD_NAMESPACE: RELEASE_NS,
      });
      await waitFor(
        async () =>
          (await httpsStatus(`https://127.0.0.1:${webhookPort}/readyz`, cert.caPem)) === 200 ? true : undefined,
        {
          what: 'the chart-configured webhook /readyz',
          timeoutMs: 60_000,
          intervalMs: 200,
          abort: proc.exited.then((why) => `webhook exited (${why})`),
        },
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
      });
      const secret = await stack.cp.request('GET', `/api/v1/namespaces/${RELEASE_NS}/secrets/vaultgate-audit-key`);
      assert.equal(secret.status, 200, "the webhook created its audit signing key with the chart's Role");
      const jwks = await stack.cp.request('GET', `/api/v1/namespaces/${RELEASE_NS}/configmaps/vaultgate-audit-jwks`);
      assert.equal(jwks.status, 200, 'and published its JWKS');
      const refused = await badPolicy();
      assert.ok(refused instanceof CommandError);
      assert.match(refused.stderr, /denied the request/);
    });

    void test("the controller runs with the chart's args as the chart's ServiceAccount and its Vault identity from NOTES.txt (bootstrap policy): policies and roles land in Vault", async () => {
      assert.ok(manifest.length > 0, 'helm install ran');
      const d = deployment('controller');
      const sa = d.spec.template.spec.serviceAccountName;
      // NOTES.txt step 4, done with the Vault API and an admin (root) token.
      const bootstrap = readFileSync(join(CHART, 'files/bootstrap-policy.hcl'), 'utf8');
      assert.equal(
        (await stack.vaultRoot('POST', 'sys/policies/acl/vaultgate-controller', { policy: bootstrap })).status,
        204,
      );
      assert.equal(
        (
          await stack.vaultRoot('POST', 'auth/kubernetes/role/vaultgate-controller', {
            bound_service_account_names: [sa],
            bound_service_account_namespaces: [RELEASE_NS],
            token_policies: ['vaultgate-controller'],
            token_ttl: '1h',
          })
        ).status,
        204,
      );

      const kubeconfig = await saKubeconfig(sa);
      // The projected token a pod would mount (default audience, as the role sets none).
      const saTokenFile = stack.procs.writeSecretFile(
        'controller-sa-token',
        await stack.cp.serviceAccountToken(RELEASE_NS, sa, undefined, 3600),
      );
      const metricsPort = await freePort();
      const args = withFlags(d.spec.template.spec.containers[0]?.args ?? [], { 'metrics-port': String(metricsPort) }, [
        `--kubeconfig=${kubeconfig}`,
        `--vault-sa-token-file=${saTokenFile}`,
      ]);
      assert.ok(args.includes(`--vault-addr=${stack.vault.addr}`), `the chart passes vault.address: ${args.join(' ')}`);
      const { VAULT_TOKEN: _dropped, ...env } = process.env;
      const proc = stack.procs.group.spawn('controller', process.execPath, vaultgateArgv(args), {
        ...env,
        POD_NAME: 'controller-0',
        POD_NAMESPACE: RELEASE_NS,
      });
      await waitFor(
        async () => ((await fetch(`http://127.0.0.1:${metricsPort}/readyz`)).status === 200 ? true : undefined),
        {
          what: 'the chart-configured controller /readyz',
          timeoutMs: 60_000,
          intervalMs: 200,
          abort: proc.exited.then((why) => `controller exited (${why})`),
        },
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
      });

      await stack.cp.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'app', namespace: NS } });
      for (const f of ['vaultpolicy.yaml', 'vaultpolicy-hcl.yaml', 'vaultrolebinding.yaml'])
        await stack.cp.kubectl(['apply', '-f', join(REPO_ROOT, 'examples', f)]);
      await stack.cp
        .kubectl(['wait', '--for=condition=Ready', '--timeout=90s', '-n', NS, 'vp/app-read', 'vp/app-write', 'vrb/app'])
        .catch((err: unknown) => {
          throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
        });
      assert.equal((await stack.vaultRoot('GET', 'sys/policies/acl/vaultgate.team-a.app-read')).status, 200);
      assert.equal((await stack.vaultRoot('GET', 'auth/kubernetes/role/vaultgate.team-a.app')).status, 200);
      assert.ok(
        stack.vault
          .logins()
          .some(
            (l) =>
              l.ok &&
              l.namespace === RELEASE_NS &&
              l.serviceAccount === sa &&
              l.role === 'vaultgate-controller' &&
              l.uid,
          ),
        "the controller logged in as its ServiceAccount (OpenBao's audit log: role, and the uid from the TokenReview)",
      );
    });
  },
);
