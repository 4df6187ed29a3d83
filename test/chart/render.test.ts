// With the helm binary (built by `npm run upstream`): helm lint and helm template for the defaults and
// every ci/ values file; every rendered object validated with kubernetes-models; the safety properties
// of RBAC, admission registration and pods checked on the rendered manifests. Skipped without helm.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-argument --
   rendered manifests are untyped YAML that these checks walk field by field */
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHART_DIR, CI_FILES, helm, helmSkip, one, ofKind, render, type Obj } from './render.ts';

const skip = helmSkip();
const VARIANTS = [undefined, ...CI_FILES.map((f) => `ci/${f}`)];
const CUSTOM_GROUPS = new Set(['cert-manager.io', 'monitoring.coreos.com', 'vaultgate.io']);

/** kubernetes-models module of an apiVersion: `v1` → kubernetes-models/v1, `apps/v1` → kubernetes-models/apps/v1. */
async function modelFor(obj: Obj): Promise<(new (o: unknown) => { validate(): void }) | undefined> {
  const group = String(obj.apiVersion).includes('/') ? String(obj.apiVersion).split('/')[0]! : '';
  if (CUSTOM_GROUPS.has(group)) return undefined;
  const mod = (await import(`kubernetes-models/${String(obj.apiVersion)}`)) as Record<
    string,
    new (o: unknown) => { validate(): void }
  >;
  return mod[String(obj.kind)];
}

function podSpecs(objs: Obj[]): [string, Obj][] {
  return ofKind(objs, 'Deployment').map((d) => [String(d.metadata.name), d.spec.template.spec as Obj]);
}

void describe('chart rendered by helm', { skip }, () => {
  const rendered = new Map<string | undefined, Obj[]>();
  before(() => {
    for (const v of VARIANTS) rendered.set(v, render({ valuesFile: v }));
  });

  for (const v of VARIANTS) {
    void test(`helm lint --strict ${v ?? '(defaults)'}`, () => {
      const r = helm(['lint', '--strict', CHART_DIR, ...(v ? ['-f', join(CHART_DIR, v)] : [])]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
    });

    void test(`every object of ${v ?? '(defaults)'} is a valid Kubernetes object`, async () => {
      const objs = rendered.get(v)!;
      assert.ok(objs.length >= 10, `only ${objs.length} objects`);
      let checked = 0;
      for (const obj of objs) {
        const Model = await modelFor(obj);
        if (!Model) continue;
        assert.doesNotThrow(() => new Model(obj).validate(), `${obj.kind}/${obj.metadata?.name}`);
        checked++;
      }
      assert.ok(checked >= 10, `validated ${checked}`);
    });

    void test(`RBAC of ${v ?? '(defaults)'} has no wildcard verb, resource or apiGroup`, () => {
      for (const role of [...ofKind(rendered.get(v)!, 'ClusterRole'), ...ofKind(rendered.get(v)!, 'Role')]) {
        for (const rule of role.rules as Obj[]) {
          for (const field of ['verbs', 'resources', 'apiGroups', 'resourceNames']) {
            for (const x of (rule[field] ?? []) as string[])
              assert.ok(!x.includes('*'), `${role.kind}/${role.metadata.name} ${field} has ${x}`);
          }
          assert.ok(!(rule.nonResourceURLs as unknown[] | undefined)?.length, 'no nonResourceURLs');
        }
      }
    });

    void test(`webhook configurations of ${v ?? '(defaults)'}: our kinds only, no DELETE, safe settings`, () => {
      const configs = [
        ...ofKind(rendered.get(v)!, 'MutatingWebhookConfiguration'),
        ...ofKind(rendered.get(v)!, 'ValidatingWebhookConfiguration'),
      ];
      assert.equal(configs.length, 2);
      for (const cfg of configs) {
        for (const hook of cfg.webhooks as Obj[]) {
          assert.equal(hook.sideEffects, 'None');
          assert.equal(hook.timeoutSeconds, 5);
          assert.equal(hook.matchPolicy, 'Equivalent');
          assert.deepEqual(hook.admissionReviewVersions, ['v1']);
          const excluded = hook.namespaceSelector.matchExpressions[0].values as string[];
          assert.ok(excluded.includes('kube-system') && excluded.includes('vaultgate'));
          for (const rule of hook.rules as Obj[]) {
            assert.deepEqual(rule.operations, ['CREATE', 'UPDATE']);
            for (const g of rule.apiGroups as string[])
              assert.ok(
                ['vaultgate.io', 'external-secrets.io', 'generators.external-secrets.io'].includes(g),
                `apiGroup ${g}`,
              );
            for (const r of rule.resources as string[])
              assert.ok(!r.includes('*') && !r.includes('/') && r !== 'pods', `resource ${r}`);
            if ((rule.apiGroups as string[]).includes('vaultgate.io'))
              assert.equal(hook.failurePolicy, 'Fail', 'security objects fail closed');
          }
          const path = cfg.kind === 'MutatingWebhookConfiguration' ? '/mutate' : '/validate';
          assert.ok(hook.clientConfig.service?.path === path || String(hook.clientConfig.url).endsWith(path));
        }
      }
    });

    void test(`pods of ${v ?? '(defaults)'}: hardened, probed, resourced`, () => {
      for (const [name, spec] of podSpecs(rendered.get(v)!)) {
        assert.equal(spec.securityContext.runAsNonRoot, true, name);
        assert.equal(spec.securityContext.seccompProfile.type, 'RuntimeDefault', name);
        assert.ok(spec.topologySpreadConstraints.length >= 1, `${name} spreads`);
        for (const c of spec.containers as Obj[]) {
          assert.equal(c.command[0], 'vaultgate');
          assert.ok(['webhook', 'controller'].includes(c.args[0]), `${name}: vaultgate ${c.args[0]}`);
          assert.deepEqual(
            c.securityContext,
            {
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              runAsNonRoot: true,
              capabilities: { drop: ['ALL'] },
              seccompProfile: { type: 'RuntimeDefault' },
            },
            name,
          );
          assert.ok(c.readinessProbe && c.livenessProbe, `${name} probes`);
          assert.ok(c.resources.requests.cpu && c.resources.limits.memory, `${name} resources`);
        }
      }
    });
  }

  void test('defaults: 2+2 replicas, PDBs, readiness on /readyz, the CA key never mounted, keeper wired', () => {
    const objs = rendered.get(undefined)!;
    const webhook = one(objs, 'Deployment', '-webhook');
    const controller = one(objs, 'Deployment', '-controller');
    assert.equal(webhook.spec.replicas, 2);
    assert.equal(controller.spec.replicas, 2);
    assert.equal(ofKind(objs, 'PodDisruptionBudget').length, 2);
    const wc = webhook.spec.template.spec.containers[0] as Obj;
    assert.equal(wc.readinessProbe.httpGet.path, '/readyz');
    assert.equal(wc.readinessProbe.httpGet.scheme, 'HTTPS');
    const tls = (webhook.spec.template.spec.volumes as Obj[]).find((vol) => vol.name === 'tls')!;
    assert.deepEqual(
      (tls.secret.items as Obj[]).map((i) => i.key),
      ['tls.crt', 'tls.key'],
    );
    const args = (controller.spec.template.spec.containers[0] as Obj).args as string[];
    assert.ok(args.includes('--leader-elect'));
    assert.ok(args.includes('--webhook-cert-secret=rel-vaultgate-webhook-tls'));
    assert.ok(
      args.includes('--webhook-config-selector=vaultgate.io/inject-ca-bundle=true,app.kubernetes.io/instance=rel'),
    );
    assert.equal(one(objs, 'Secret', '-webhook-tls').data, undefined, 'the cert Secret is created empty');
    for (const cfg of [
      ...ofKind(objs, 'MutatingWebhookConfiguration'),
      ...ofKind(objs, 'ValidatingWebhookConfiguration'),
    ]) {
      assert.equal(cfg.metadata.labels['vaultgate.io/inject-ca-bundle'], 'true');
      const eso = (cfg.webhooks as Obj[]).find((h) => String(h.name).startsWith('eso.'))!;
      assert.equal(eso.failurePolicy, 'Ignore');
    }
    const sa = ofKind(objs, 'ServiceAccount');
    assert.ok(sa.every((s) => s.automountServiceAccountToken === false));
    const webhookRole = one(objs, 'ClusterRole', '-webhook');
    assert.ok(
      !(webhookRole.rules as Obj[]).some((r) => (r.resources as string[]).includes('secrets')),
      'the webhook reads no Secret',
    );
  });

  void test('cert-manager: Certificate + inject-ca-from, and vaultgate manages no certificate', () => {
    const objs = rendered.get('ci/cert-manager-values.yaml')!;
    const cert = one(objs, 'Certificate', '-webhook');
    assert.deepEqual(cert.spec.dnsNames, [
      'rel-vaultgate-webhook',
      'rel-vaultgate-webhook.vaultgate',
      'rel-vaultgate-webhook.vaultgate.svc',
      'rel-vaultgate-webhook.vaultgate.svc.cluster.local',
    ]);
    for (const cfg of ofKind(objs, 'ValidatingWebhookConfiguration')) {
      assert.equal(cfg.metadata.annotations['cert-manager.io/inject-ca-from'], 'vaultgate/rel-vaultgate-webhook');
      assert.equal(cfg.metadata.labels['vaultgate.io/inject-ca-bundle'], undefined);
    }
    const args = (one(objs, 'Deployment', '-controller').spec.template.spec.containers[0] as Obj).args as string[];
    assert.ok(!args.some((a) => a.startsWith('--webhook-cert-secret')));
    assert.ok(
      !ofKind(objs, 'ClusterRole').some((r) => JSON.stringify(r.rules).includes('webhookconfigurations')),
      'no webhook configuration rights',
    );
    assert.equal(ofKind(objs, 'ServiceMonitor').length, 2);
    assert.equal(ofKind(objs, 'NetworkPolicy').length, 2);
    assert.ok(
      one(objs, 'ConfigMap', '-dashboard').data['vaultgate.json'].includes('vaultgate_admission_requests_total'),
    );
  });

  void test('url-override: clientConfig.url + the given caBundle, no Service reference', () => {
    const objs = rendered.get('ci/url-override-values.yaml')!;
    for (const cfg of [
      ...ofKind(objs, 'MutatingWebhookConfiguration'),
      ...ofKind(objs, 'ValidatingWebhookConfiguration'),
    ]) {
      for (const hook of cfg.webhooks as Obj[]) {
        assert.match(hook.clientConfig.url as string, /^https:\/\/127\.0\.0\.1:9443\/(mutate|validate)$/);
        assert.equal(hook.clientConfig.service, undefined);
        assert.match(Buffer.from(hook.clientConfig.caBundle as string, 'base64').toString(), /BEGIN CERTIFICATE/);
      }
    }
  });

  void test('a bad value fails helm template with the schema path', () => {
    const r = helm(['template', 'rel', CHART_DIR, '--set', 'webhook.timeoutSeconds=60']);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /webhook\/timeoutSeconds/);
  });
});

void describe('ESO CRDs as guarded templates', { skip }, () => {
  let dir: string;
  before(() => {
    // the CRD sources belong in files/eso-crds/: place the generated ones there in a copy of the chart
    dir = mkdtempSync(join(tmpdir(), 'vg-chart-'));
    cpSync(CHART_DIR, join(dir, 'vaultgate'), { recursive: true });
    for (const f of readdirSync(join(dir, 'vaultgate', 'crds')).filter((n) => n.includes('external-secrets.io'))) {
      cpSync(join(dir, 'vaultgate', 'crds', f), join(dir, 'vaultgate', 'files', 'eso-crds', f));
      rmSync(join(dir, 'vaultgate', 'crds', f));
    }
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  void test('auto (no cluster): rendered, each kept on uninstall', () => {
    const crds = ofKind(render({ chartDir: join(dir, 'vaultgate') }), 'CustomResourceDefinition');
    assert.deepEqual(crds.map((c) => c.metadata.name).sort(), [
      'clusterexternalsecrets.external-secrets.io',
      'clustergenerators.generators.external-secrets.io',
      'clustersecretstores.external-secrets.io',
      'externalsecrets.external-secrets.io',
      'passwords.generators.external-secrets.io',
      'pushsecrets.external-secrets.io',
      'secretstores.external-secrets.io',
      'vaultdynamicsecrets.generators.external-secrets.io',
    ]);
    assert.ok(crds.every((c) => c.metadata.annotations['helm.sh/resource-policy'] === 'keep'));
  });

  void test('installCRDs=false: none', () => {
    assert.equal(
      ofKind(render({ chartDir: join(dir, 'vaultgate'), set: ['eso.installCRDs=false'] }), 'CustomResourceDefinition')
        .length,
      0,
    );
  });
});
