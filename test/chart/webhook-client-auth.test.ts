// The chart's side of "the audit trail records what the apiserver sent, and only that": the webhook can
// require the apiserver's client certificate (webhook.clientAuth → --client-ca-file, the CA mounted from
// a ConfigMap), and the NetworkPolicy, when on, admits only the apiserver's CIDRs and the metrics
// scraper. Rendered with helm when it is built; the schema checks run without it.
/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment --
   rendered manifests are untyped YAML that these checks walk field by field */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { CHART_DIR, helm, helmSkip, one, ofKind, render, type Obj } from './render.ts';

const skip = helmSkip();
const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

const webhookContainer = (objs: Obj[]): Obj =>
  one(objs, 'Deployment', '-webhook').spec.template.spec.containers[0] as Obj;
const webhookPod = (objs: Obj[]): Obj => one(objs, 'Deployment', '-webhook').spec.template.spec as Obj;

void describe('chart values schema: client auth and network policy', () => {
  const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as object;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const defaults = parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as Record<
    string,
    Record<string, unknown>
  >;
  const errors = (over: { webhook?: Record<string, unknown>; networkPolicy?: Record<string, unknown> }): string => {
    const v = {
      ...defaults,
      webhook: { ...defaults.webhook, ...over.webhook },
      networkPolicy: { ...defaults.networkPolicy, ...over.networkPolicy },
    };
    return validate(v) ? '' : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`).join('; ');
  };

  void test('the defaults are valid: client auth off, network policy off', () => {
    assert.equal(errors({}), '');
    assert.equal((defaults.webhook!.clientAuth as { enabled: boolean }).enabled, false);
  });
  void test('client auth on needs a CA (inline PEM or an existing ConfigMap)', () => {
    assert.match(
      errors({ webhook: { clientAuth: { enabled: true, caCert: '', existingConfigMap: '', key: 'ca.crt' } } }),
      /\/webhook\/clientAuth/,
    );
    assert.equal(
      errors({ webhook: { clientAuth: { enabled: true, caCert: CA_PEM, existingConfigMap: '', key: 'ca.crt' } } }),
      '',
    );
    assert.equal(
      errors({
        webhook: {
          clientAuth: { enabled: true, caCert: '', existingConfigMap: 'apiserver-webhook-client-ca', key: 'ca.crt' },
        },
      }),
      '',
    );
    assert.match(
      errors({ webhook: { clientAuth: { enabled: true, caCert: 'not a pem', existingConfigMap: '', key: 'ca.crt' } } }),
      /\/webhook\/clientAuth\/caCert must match pattern/,
    );
  });
  void test("network policy on needs the apiserver's CIDRs, as CIDRs", () => {
    assert.match(
      errors({ networkPolicy: { enabled: true } }),
      /\/networkPolicy\/apiserverCIDRs must NOT have fewer than 1 items/,
    );
    assert.match(
      errors({ networkPolicy: { enabled: true, apiserverCIDRs: ['10.0.0.1'] } }),
      /\/networkPolicy\/apiserverCIDRs\/0 must match pattern/,
    );
    assert.equal(errors({ networkPolicy: { enabled: true, apiserverCIDRs: ['10.0.0.1/32', 'fd00::/64'] } }), '');
  });
});

void describe('chart rendered: client auth and network policy', { skip }, () => {
  void test('by default the webhook asks for no client certificate', () => {
    const objs = render();
    assert.ok(!(webhookContainer(objs).args as string[]).some((a) => a.startsWith('--client-ca-file')));
    assert.ok(!(webhookPod(objs).volumes as Obj[]).some((v) => v.name === 'client-ca'));
    assert.equal(ofKind(objs, 'NetworkPolicy').length, 0);
  });

  void test('webhook.clientAuth with an inline CA: a ConfigMap holds it, mounted read-only, passed as --client-ca-file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'vaultgate-chart-'));
    const file = join(dir, 'values.yaml');
    writeFileSync(file, stringify({ webhook: { clientAuth: { enabled: true, caCert: CA_PEM } } }));
    const r = helm(['template', 'rel', CHART_DIR, '--namespace', 'vaultgate', '-f', file]);
    rmSync(dir, { recursive: true, force: true });
    assert.equal(r.status, 0, r.stderr);
    const objs = parseAllDocuments(r.stdout)
      .map((d) => d.toJS() as Obj | null)
      .filter((o): o is Obj => !!o);
    const cm = one(objs, 'ConfigMap', '-webhook-client-ca');
    assert.equal(String(cm.data['ca.crt']).trim(), CA_PEM.trim());
    const c = webhookContainer(objs);
    assert.ok((c.args as string[]).includes('--client-ca-file=/var/run/vaultgate/client-ca/ca.crt'));
    // the accepted subject is pinned by default (issue #21 item 4)
    assert.deepEqual(
      (c.args as string[]).filter((a) => a.startsWith('--client-subject')),
      ['--client-subject=kube-apiserver-webhook-client'],
    );
    assert.deepEqual(
      (c.volumeMounts as Obj[]).find((m) => m.name === 'client-ca'),
      { name: 'client-ca', mountPath: '/var/run/vaultgate/client-ca', readOnly: true },
    );
    const vol = (webhookPod(objs).volumes as Obj[]).find((v) => v.name === 'client-ca');
    assert.deepEqual(vol?.configMap, { name: cm.metadata.name, items: [{ key: 'ca.crt', path: 'ca.crt' }] });
  });

  void test('webhook.clientAuth with an existing ConfigMap: no ConfigMap rendered, that one mounted', () => {
    const objs = render({
      set: [
        'webhook.clientAuth.enabled=true',
        'webhook.clientAuth.existingConfigMap=apiserver-client-ca',
        'webhook.clientAuth.key=bundle.pem',
      ],
    });
    assert.ok(!ofKind(objs, 'ConfigMap').some((c) => String(c.metadata.name).endsWith('-client-ca')));
    const vol = (webhookPod(objs).volumes as Obj[]).find((v) => v.name === 'client-ca');
    assert.deepEqual(vol?.configMap, { name: 'apiserver-client-ca', items: [{ key: 'bundle.pem', path: 'ca.crt' }] });
  });

  void test('webhook.clientAuth.subjects: each accepted subject is a --client-subject', () => {
    const objs = render({
      set: [
        'webhook.clientAuth.enabled=true',
        'webhook.clientAuth.existingConfigMap=apiserver-client-ca',
        'webhook.clientAuth.subjects={apiserver-a,apiserver-b}',
      ],
    });
    assert.deepEqual(
      (webhookContainer(objs).args as string[]).filter((a) => a.startsWith('--client-subject')),
      ['--client-subject=apiserver-a', '--client-subject=apiserver-b'],
    );
  });

  void test('/metrics is on a port of its own: --metrics-port, a "metrics" container and Service port, the ServiceMonitor scrapes it over HTTP', () => {
    const objs = render({ set: ['metrics.serviceMonitor.enabled=true'] });
    const c = webhookContainer(objs);
    assert.ok((c.args as string[]).includes('--metrics-port=8081'));
    assert.deepEqual(
      (c.ports as Obj[]).map((p): unknown[] => [p.name, p.containerPort]),
      [
        ['https', 8443],
        ['metrics', 8081],
      ],
    );
    const svc = one(objs, 'Service', '-webhook');
    assert.deepEqual(
      (svc.spec.ports as Obj[]).map((p): unknown[] => [p.name, p.targetPort]),
      [
        ['https', 'https'],
        ['metrics', 'metrics'],
      ],
    );
    const sm = ofKind(objs, 'ServiceMonitor').find((o) => String(o.metadata.name).endsWith('-webhook'));
    assert.deepEqual(sm?.spec.endpoints, [{ port: 'metrics', path: '/metrics', interval: '30s' }]);
  });

  void test('the webhook NetworkPolicy admits only the apiserver CIDRs to the admission port, and the metrics scraper only to the metrics port', () => {
    const objs = render({
      set: ['networkPolicy.enabled=true', 'networkPolicy.apiserverCIDRs={10.1.0.10/32,10.1.0.11/32}'],
    });
    const np = one(objs, 'NetworkPolicy', '-webhook');
    const ingress = np.spec.ingress as Obj[];
    assert.ok(
      ingress.every((rule) => Array.isArray(rule.from) && rule.from.length > 0),
      'no rule open to every source',
    );
    assert.deepEqual(ingress[0]!.from, [{ ipBlock: { cidr: '10.1.0.10/32' } }, { ipBlock: { cidr: '10.1.0.11/32' } }]);
    assert.deepEqual(ingress[0]!.ports, [{ port: 8443, protocol: 'TCP' }]);
    assert.deepEqual(ingress[1]!.from, [
      { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
    ]);
    assert.deepEqual(
      ingress[1]!.ports,
      [{ port: 8081, protocol: 'TCP' }],
      'the scraper cannot reach the admission port',
    );
    assert.equal(ingress.length, 2);
  });

  void test('network policy on without the apiserver CIDRs, or client auth without a CA: helm refuses with the reason', () => {
    const np = helm(['template', 'rel', CHART_DIR, '--set', 'networkPolicy.enabled=true']);
    assert.notEqual(np.status, 0);
    assert.match(np.stderr, /apiserverCIDRs/);
    const ca = helm(['template', 'rel', CHART_DIR, '--set', 'webhook.clientAuth.enabled=true']);
    assert.notEqual(ca.status, 0);
    assert.match(ca.stderr, /clientAuth/);
  });
});
