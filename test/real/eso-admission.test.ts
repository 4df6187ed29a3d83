// Side by side with the real ESO, at admission (real tier): every manifest of test/eso/corpus/admission.yaml
// is applied with `kubectl apply --dry-run=server` to a real apiserver holding ESO's own CRDs with ESO's
// own webhook (`eso webhook` v0.16.2, built from its Go module) registered, and decided by vaultgate's
// admission core. What ESO refuses, vaultgate refuses; what ESO admits, vaultgate admits, or refuses only
// with a rule listed in VAULTGATE_STRICTER (each a documented, deliberate difference: see the README).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { startControlPlane, type ControlPlane } from '../harness/control-plane.ts';
import { installEsoCrds, startEsoWebhook } from '../harness/eso.ts';
import { ProcessGroup } from '../harness/processes.ts';
import { realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';
import { defaultContext } from '../../webhook/admission/context.ts';
import type { KubeObject } from '../../webhook/admission/kinds.ts';
import type { AdmissionRequest } from '../../webhook/admission/types.ts';
import { decideSync, defaultRegistry } from '../../webhook/review/review.ts';

const tier = await realTier();
const ROOT = new URL('../../', import.meta.url).pathname;

/**
 * Rules by which vaultgate refuses a manifest ESO admits, and why. Each is deliberate: ESO would accept
 * the object and fail (or do something unsafe) at sync time, or vaultgate does not implement the feature
 * and says so by name instead of ignoring it.
 */
export const VAULTGATE_STRICTER: Record<string, string> = {
  'eso.es.template-unsupported':
    'a template action or function vaultgate does not render yet is refused by name, not rendered differently',
  'eso.es.template-syntax':
    'a template Go cannot parse: ESO admits it and fails at every sync; vaultgate refuses it at apply',
  'eso.es.regexp': 'a regexp Go cannot compile: ESO admits it and fails at every sync; vaultgate refuses it at apply',
  'eso.es.unsupported': 'an ESO feature vaultgate does not implement yet, refused by name rather than ignored',
  'eso.store.auth-unsupported': 'a Vault auth method vaultgate does not implement yet, refused by name',
};

interface Verdict {
  allowed: boolean;
  message: string;
  rules: string[];
}

/** The corpus, plus the ESO-style fixtures and examples the fast tier already checks. */
const CORPUS = [
  'test/eso/corpus/admission.yaml',
  'test/eso/fixtures/externalsecrets.yaml',
  'test/eso/fixtures/secretstores.yaml',
  'test/eso/fixtures/clustersecretstores.yaml',
  'examples/eso-externalsecret.yaml',
  'examples/eso-secretstore.yaml',
  'examples/eso-clustersecretstore.yaml',
];
const docs = (): KubeObject[] =>
  CORPUS.flatMap((f) =>
    parseAllDocuments(readFileSync(join(ROOT, f), 'utf8'))
      .map((d) => d.toJS() as KubeObject | null)
      .filter(
        (o): o is KubeObject => typeof o?.apiVersion === 'string' && o.apiVersion.startsWith('external-secrets.io/'),
      ),
  );

function vaultgateVerdict(obj: KubeObject): Verdict {
  const kind = String(obj.kind);
  const namespaced = kind !== 'ClusterSecretStore';
  const req: AdmissionRequest = {
    uid: 'diff',
    operation: 'CREATE',
    userInfo: { username: 'alice' },
    kind: { group: 'external-secrets.io', version: 'v1', kind },
    resource: { group: 'external-secrets.io', version: 'v1', resource: `${kind.toLowerCase()}s` },
    ...(namespaced ? { namespace: (obj.metadata as { namespace?: string }).namespace ?? 'default' } : {}),
    name: String((obj.metadata as { name?: string }).name),
    object: obj,
  };
  const ctx = defaultContext();
  const { mutation, validation, object } = decideSync(req, ctx);
  const handler = defaultRegistry().get(req.kind)!;
  const denyRules = handler
    .validate(object ?? obj, undefined, ctx, req)
    .filter((f) => f.severity === 'deny')
    .map((f) => f.rule);
  const allowed = mutation.response.allowed && validation.response.allowed;
  return {
    allowed,
    message: validation.response.status?.message ?? mutation.response.status?.message ?? '',
    rules: [...new Set(denyRules)],
  };
}

void describe(
  'ESO side by side at admission: the same manifests through ESO v0.16.2 and through vaultgate',
  { skip: tier.skip },
  () => {
    let cp: ControlPlane;
    let procs: ProcessGroup;
    const results: Array<{ name: string; eso: Verdict; vaultgate: Verdict }> = [];

    before(async () => {
      cp = await startControlPlane();
      procs = new ProcessGroup(mkdtempSync(join(tmpdir(), 'vaultgate-eso-webhook-')));
      await installEsoCrds(cp, procs.dir);
      const webhook = await startEsoWebhook(procs, cp);

      const hook = (kind: string, resource: string) => ({
        name: `${resource}.eso.test`,
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        failurePolicy: 'Fail',
        clientConfig: {
          url: `${webhook.url}/validate-external-secrets-io-v1-${kind}`,
          caBundle: Buffer.from(webhook.caPem).toString('base64'),
        },
        rules: [
          {
            apiGroups: ['external-secrets.io'],
            apiVersions: ['v1'],
            operations: ['CREATE', 'UPDATE'],
            resources: [resource],
          },
        ],
      });
      await cp.apply({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'eso-webhook' },
        webhooks: [
          hook('externalsecret', 'externalsecrets'),
          hook('secretstore', 'secretstores'),
          hook('clustersecretstore', 'clustersecretstores'),
        ],
      });
      // The admission plugin learns new configurations through an informer: wait until ESO answers.
      const probe = {
        apiVersion: 'external-secrets.io/v1',
        kind: 'ExternalSecret',
        metadata: { name: 'probe', namespace: 'default' },
        spec: { secretStoreRef: { name: 'x', kind: 'SecretStore' } },
      };
      await waitFor(
        async () => {
          const r = await cp.request(
            'POST',
            '/apis/external-secrets.io/v1/namespaces/default/externalsecrets?dryRun=All',
            probe,
          );
          return r.status >= 400 && r.text.includes('either data or dataFrom') ? true : undefined;
        },
        { what: "ESO's webhook in effect", timeoutMs: 30_000 },
      );

      const corpus = docs();
      const namespaces = new Set(
        corpus.map((o) => (o.metadata as { namespace?: string }).namespace).filter((n): n is string => Boolean(n)),
      );
      for (const ns of namespaces) await cp.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      for (const obj of corpus) {
        const kind = String(obj.kind);
        const name = String((obj.metadata as { name?: string }).name);
        const meta = obj.metadata as { namespace?: string };
        const manifest =
          kind === 'ClusterSecretStore' || meta.namespace
            ? obj
            : { ...obj, metadata: { ...meta, namespace: 'default' } };
        let eso: Verdict;
        try {
          await cp.kubectl(['apply', '--dry-run=server', '-f', '-'], { stdin: stringify(manifest) });
          eso = { allowed: true, message: '', rules: [] };
        } catch (err) {
          eso = {
            allowed: false,
            message: (err as Error).message
              .split('\n')
              .filter((l) => /error|denied|invalid|Unsupported/i.test(l))
              .join(' ')
              .slice(0, 400),
            rules: [],
          };
        }
        results.push({ name: `${kind}/${name}`, eso, vaultgate: vaultgateVerdict(manifest) });
      }
      console.log(
        results
          .map(
            (r) =>
              `  ${r.name.padEnd(48)} ESO ${r.eso.allowed ? 'admits ' : 'refuses'}  vaultgate ${r.vaultgate.allowed ? 'admits ' : `refuses (${r.vaultgate.rules.join(', ')})`}`,
          )
          .join('\n'),
      );
    });
    after(async () => {
      await procs?.stopAll();
      await cp?.stop();
    });

    test('the corpus was decided by both (a broken harness would pass the checks below)', () => {
      assert.ok(results.length >= 30, `${results.length} manifests`);
      assert.ok(
        results.some((r) => !r.eso.allowed) && results.some((r) => r.eso.allowed),
        'ESO both admits and refuses some',
      );
    });

    test('what ESO refuses, vaultgate refuses', () => {
      const missed = results
        .filter((r) => !r.eso.allowed && r.vaultgate.allowed)
        .map((r) => `${r.name}: ESO says ${r.eso.message}`);
      assert.deepEqual(missed, []);
    });

    test('what ESO admits, vaultgate admits, or refuses only for a documented reason', () => {
      const undocumented = results
        .filter(
          (r) =>
            r.eso.allowed && !r.vaultgate.allowed && !r.vaultgate.rules.every((rule) => rule in VAULTGATE_STRICTER),
        )
        .map((r) => `${r.name}: ${r.vaultgate.rules.join(', ')}: ${r.vaultgate.message}`);
      assert.deepEqual(undocumented, []);
    });
  },
);
