// Memory per cached object (issue #24 item 3), `npm run bench -- memory`. Each kind the controller caches is
// loaded through the real Informer (kube/informer.ts) at two sizes, from list pages parsed from JSON text as
// the apiserver sends them (shapes below: what a real apiserver stores, managedFields included). Every
// measurement is a fresh `node --expose-gc` process; heap is V8's used heap after two full GCs, before and
// after the informer synced each kind; RSS after everything. Figures: bytes per object = the slope between
// the two sizes, median of BENCH_MEMORY_RUNS runs (default 3), for each cut of the cache transform in turn.
// Timing is not measured; a busy CPU does not change these figures much.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import v8 from 'node:v8';
import {
  internStrings,
  LAST_APPLIED_ANNOTATION,
  secretDigests,
  stripBookkeeping,
  type CacheTransform,
} from '../../kube/cache-transform.ts';
import { Informer } from '../../kube/informer.ts';
import type { KubeClient } from '../../kube/kube-client.ts';
import type { KubeObject } from '../../kube/objects.ts';
import { CONFIGMAPS, NAMESPACES, SECRETS, type ResourceRef } from '../../kube/resources.ts';
import { EXTERNAL_SECRETS, SECRET_STORES } from '../../schemas/resources.ts';
import { dataHash } from '../../eso/target.ts';

const KINDS = ['ExternalSecret', 'Secret', 'SecretStore', 'ConfigMap', 'Namespace'] as const;
type Kind = (typeof KINDS)[number];
const RESOURCE: Record<Kind, ResourceRef> = {
  ExternalSecret: EXTERNAL_SECRETS,
  Secret: SECRETS,
  SecretStore: SECRET_STORES,
  ConfigMap: CONFIGMAPS,
  Namespace: NAMESPACES,
};

/** The cuts, each on top of the one before; `bookkeeping+intern` is the default transform of every informer. */
const VARIANTS = ['none', 'managedFields', 'bookkeeping', 'bookkeeping+intern', 'secret-digests'] as const;
type Variant = (typeof VARIANTS)[number];

const dropManagedFields = (o: KubeObject): KubeObject => {
  delete o.metadata.managedFields;
  return o;
};
const dropBookkeeping = (o: KubeObject): KubeObject => {
  dropManagedFields(o);
  if (o.metadata.annotations) delete o.metadata.annotations[LAST_APPLIED_ANNOTATION];
  return o;
};
const withIntern = (o: KubeObject): KubeObject => {
  dropBookkeeping(o);
  internStrings(o);
  return o;
};
function transformFor(variant: Variant, kind: Kind): CacheTransform {
  switch (variant) {
    case 'none':
      return (o) => o;
    case 'managedFields':
      return dropManagedFields; // what Cache.upsert did before the transform
    case 'bookkeeping':
      return dropBookkeeping;
    case 'bookkeeping+intern':
      return withIntern;
    case 'secret-digests':
      return kind === 'Secret' ? secretDigests(dataHash) : stripBookkeeping;
  }
}

// ---- object shapes, as a real apiserver stores them ----------------------------------------------------
const NAMESPACE_COUNT = 10;
const ns = (i: number): string => `bench-${i % NAMESPACE_COUNT}`;
const uid = (kind: string, i: number): string => {
  const h = (i * 2654435761 + kind.length * 97) >>> 0;
  return `${h.toString(16).padStart(8, '0')}-${(i & 0xffff).toString(16).padStart(4, '0')}-4${kind.length}aa-8bbb-${(h ^ 0x5bd1e995).toString(16).padStart(12, '0')}`;
};
const at = (i: number): string => new Date(Date.UTC(2026, 11, 3, 6, 0, i % 3600)).toISOString().replace('.000', '');
const hex = (seed: string, n: number): string => {
  let out = '';
  let x = [...seed].reduce((a, c) => (a * 31 + c.charCodeAt(0)) >>> 0, 7);
  while (out.length < n) {
    x = (x * 1103515245 + 12345) >>> 0;
    out += x.toString(16).padStart(8, '0');
  }
  return out.slice(0, n);
};

function externalSecret(i: number): KubeObject {
  const spec = {
    secretStoreRef: { name: 'vault', kind: 'SecretStore' },
    refreshInterval: '1h',
    target: { name: `es-${i}`, creationPolicy: 'Owner', deletionPolicy: 'Retain' },
    data: [
      {
        secretKey: 'username',
        remoteRef: {
          key: `${ns(i)}/app-${i % 100}`,
          property: 'username',
          conversionStrategy: 'Default',
          decodingStrategy: 'None',
          metadataPolicy: 'None',
        },
      },
      {
        secretKey: 'password',
        remoteRef: {
          key: `${ns(i)}/app-${i % 100}`,
          property: 'password',
          conversionStrategy: 'Default',
          decodingStrategy: 'None',
          metadataPolicy: 'None',
        },
      },
    ],
  };
  const applied = {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { annotations: {}, name: `es-${i}`, namespace: ns(i) },
    spec: {
      secretStoreRef: spec.secretStoreRef,
      refreshInterval: '1h',
      data: spec.data.map((d) => ({
        secretKey: d.secretKey,
        remoteRef: { key: d.remoteRef.key, property: d.remoteRef.property },
      })),
    },
  };
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: {
      name: `es-${i}`,
      namespace: ns(i),
      uid: uid('es', i),
      resourceVersion: String(100_000 + i * 3),
      generation: 1,
      creationTimestamp: at(i),
      annotations: { [LAST_APPLIED_ANNOTATION]: `${JSON.stringify(applied)}\n` },
      managedFields: [
        {
          manager: 'kubectl-client-side-apply',
          operation: 'Update',
          apiVersion: 'external-secrets.io/v1',
          time: at(i),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:annotations': { '.': {}, [`f:${LAST_APPLIED_ANNOTATION}`]: {} } },
            'f:spec': {
              '.': {},
              'f:data': {},
              'f:refreshInterval': {},
              'f:secretStoreRef': { '.': {}, 'f:kind': {}, 'f:name': {} },
            },
          },
        },
        {
          manager: 'vaultgate',
          operation: 'Apply',
          apiVersion: 'external-secrets.io/v1',
          time: at(i + 1),
          fieldsType: 'FieldsV1',
          subresource: 'status',
          fieldsV1: {
            'f:status': {
              'f:binding': { 'f:name': {} },
              'f:conditions': {
                'k:{"type":"Ready"}': {
                  '.': {},
                  'f:lastTransitionTime': {},
                  'f:message': {},
                  'f:reason': {},
                  'f:status': {},
                  'f:type': {},
                },
              },
              'f:refreshTime': {},
              'f:syncedResourceVersion': {},
            },
          },
        },
      ],
    },
    spec,
    status: {
      binding: { name: `es-${i}` },
      refreshTime: at(i + 1),
      syncedResourceVersion: `1-${hex(`srv${i}`, 56)}`,
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'SecretSynced',
          message: 'secret synced',
          lastTransitionTime: at(i + 1),
        },
      ],
    },
  };
}

function secret(i: number): KubeObject {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const data = { username: b64(`user-${i % 100}-${hex(`u${i}`, 8)}`), password: b64(hex(`p${i}`, 32)) };
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: {
      name: `es-${i}`,
      namespace: ns(i),
      uid: uid('secret', i),
      resourceVersion: String(100_001 + i * 3),
      creationTimestamp: at(i + 1),
      labels: {
        'reconcile.external-secrets.io/managed': 'true',
        'reconcile.external-secrets.io/created-by': hex(`cb${i}`, 56),
      },
      annotations: { 'reconcile.external-secrets.io/data-hash': dataHash(data) },
      ownerReferences: [
        {
          apiVersion: 'external-secrets.io/v1',
          kind: 'ExternalSecret',
          name: `es-${i}`,
          uid: uid('es', i),
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      managedFields: [
        {
          manager: 'vaultgate',
          operation: 'Update',
          apiVersion: 'v1',
          time: at(i + 1),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:data': { '.': {}, 'f:password': {}, 'f:username': {} },
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:reconcile.external-secrets.io/data-hash': {} },
              'f:labels': {
                '.': {},
                'f:reconcile.external-secrets.io/created-by': {},
                'f:reconcile.external-secrets.io/managed': {},
              },
              'f:ownerReferences': { '.': {}, [`k:{"uid":"${uid('es', i)}"}`]: {} },
            },
            'f:type': {},
          },
        },
      ],
    },
    data,
  };
}

function secretStore(i: number): KubeObject {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'SecretStore',
    metadata: {
      name: `vault-${i}`,
      namespace: ns(i),
      uid: uid('store', i),
      resourceVersion: String(50_000 + i),
      generation: 1,
      creationTimestamp: at(i),
      managedFields: [
        {
          manager: 'kubectl-create',
          operation: 'Update',
          apiVersion: 'external-secrets.io/v1',
          time: at(i),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:spec': {
              '.': {},
              'f:provider': {
                '.': {},
                'f:vault': {
                  '.': {},
                  'f:auth': {
                    '.': {},
                    'f:kubernetes': {
                      '.': {},
                      'f:mountPath': {},
                      'f:role': {},
                      'f:serviceAccountRef': { '.': {}, 'f:name': {} },
                    },
                  },
                  'f:path': {},
                  'f:server': {},
                  'f:version': {},
                },
              },
            },
          },
        },
        {
          manager: 'vaultgate',
          operation: 'Apply',
          apiVersion: 'external-secrets.io/v1',
          time: at(i),
          fieldsType: 'FieldsV1',
          subresource: 'status',
          fieldsV1: {
            'f:status': {
              'f:capabilities': {},
              'f:conditions': {
                'k:{"type":"Ready"}': {
                  '.': {},
                  'f:lastTransitionTime': {},
                  'f:message': {},
                  'f:reason': {},
                  'f:status': {},
                  'f:type': {},
                },
              },
            },
          },
        },
      ],
    },
    spec: {
      provider: {
        vault: {
          server: 'https://openbao.vault.svc:8200',
          path: 'secret',
          version: 'v2',
          auth: { kubernetes: { mountPath: 'kubernetes', role: ns(i), serviceAccountRef: { name: 'eso-reader' } } },
        },
      },
    },
    status: {
      capabilities: 'ReadWrite',
      conditions: [
        { type: 'Ready', status: 'True', reason: 'Valid', message: 'store validated', lastTransitionTime: at(i) },
      ],
    },
  };
}

const CA = `-----BEGIN CERTIFICATE-----\n${Array.from({ length: 17 }, (_, l) => Buffer.from(hex(`ca${l}`, 48), 'hex').toString('base64')).join('\n')}\n-----END CERTIFICATE-----\n`;
function configMap(i: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'kube-root-ca.crt',
      namespace: `bench-ns-${i}`,
      uid: uid('cm', i),
      resourceVersion: String(10_000 + i),
      creationTimestamp: at(i),
      annotations: {
        'kubernetes.io/description':
          'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
      },
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: at(i),
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:data': { '.': {}, 'f:ca.crt': {} },
            'f:metadata': { 'f:annotations': { '.': {}, 'f:kubernetes.io/description': {} } },
          },
        },
      ],
    },
    data: { 'ca.crt': CA },
  };
}

function namespace(i: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: `bench-ns-${i}`,
      uid: uid('ns', i),
      resourceVersion: String(1000 + i),
      creationTimestamp: at(i),
      labels: { 'kubernetes.io/metadata.name': `bench-ns-${i}`, team: `team-${i % 10}` },
      managedFields: [
        {
          manager: 'kubectl-create',
          operation: 'Update',
          apiVersion: 'v1',
          time: at(i),
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {}, 'f:team': {} } } },
        },
      ],
    },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

const MAKE: Record<Kind, (i: number) => KubeObject> = {
  ExternalSecret: externalSecret,
  Secret: secret,
  SecretStore: secretStore,
  ConfigMap: configMap,
  Namespace: namespace,
};

/** A list/watch client serving `n` objects of a kind: each page parsed from its JSON text, as off the wire. */
function listClient(kind: Kind, n: number): Pick<KubeClient, 'list' | 'watch'> {
  return {
    list: (_res, opts = {}) => {
      const from = Number(opts.continue ?? 0);
      const to = Math.min(n, from + (opts.limit ?? 500));
      // A list's items carry no apiVersion/kind on a real apiserver (HttpKubeClient puts them back).
      const text = JSON.stringify({ items: Array.from({ length: to - from }, (_, k) => MAKE[kind](from + k)) });
      return Promise.resolve({
        items: (JSON.parse(text) as { items: never[] }).items,
        resourceVersion: '999999',
        continue: to < n ? String(to) : undefined,
      });
    },
    watch: (_res, opts = {}) => ({
      [Symbol.asyncIterator]: () => ({
        next: () =>
          new Promise((resolve) =>
            opts.signal?.addEventListener('abort', () => resolve({ done: true, value: undefined }), { once: true }),
          ),
      }),
    }),
  };
}

function heapUsed(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  gc();
  gc();
  return v8.getHeapStatistics().used_heap_size;
}

/** In the child: load `n` objects of every kind under `variant`; heap bytes held per kind, and RSS. */
async function measureChild(variant: Variant, n: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const keep: Informer[] = [];
  for (const kind of KINDS) {
    const before = heapUsed();
    const inf = new Informer(listClient(kind, n), {
      resource: RESOURCE[kind],
      resyncMs: 0,
      transform: transformFor(variant, kind),
    });
    inf.start();
    await inf.waitForSync();
    out[kind] = heapUsed() - before;
    keep.push(inf);
  }
  out.rss = process.memoryUsage().rss;
  out.objects = keep.reduce((s, i) => s + i.cache.size, 0);
  for (const inf of keep) await inf.stop();
  return out;
}

const run = promisify(execFile);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchMemory(): Promise<Record<string, number | string>> {
  const sizes = [1000, 10_000] as const;
  const runs = Number(process.env.BENCH_MEMORY_RUNS ?? 3);
  const self = fileURLToPath(import.meta.url);
  const figures: Record<string, number | string> = { sizes: sizes.join(' and '), runs };
  const perObject: Record<Variant, Record<string, number>> = {} as Record<Variant, Record<string, number>>;
  for (const variant of VARIANTS) {
    const at: Record<number, Record<string, number>[]> = {};
    for (const n of sizes) {
      at[n] = [];
      for (let r = 0; r < runs; r++) {
        const { stdout } = await run(
          process.execPath,
          ['--expose-gc', '--import', 'tsx', self, 'child', variant, String(n)],
          { maxBuffer: 1 << 20 },
        );
        at[n].push(JSON.parse(stdout) as Record<string, number>);
      }
    }
    const slope = (field: string): number =>
      (median(at[sizes[1]]!.map((m) => m[field]!)) - median(at[sizes[0]]!.map((m) => m[field]!))) /
      (sizes[1] - sizes[0]);
    perObject[variant] = Object.fromEntries([...KINDS, 'rss'].map((k) => [k, slope(k)]));
  }
  for (const variant of VARIANTS) {
    const p = perObject[variant];
    for (const kind of KINDS) figures[`${variant}: heap bytes per ${kind}`] = Math.round(p[kind]!);
    figures[`${variant}: heap bytes per ExternalSecret with its Secret`] = Math.round(p.ExternalSecret! + p.Secret!);
    figures[`${variant}: RSS bytes per object of every kind (5 kinds at each size)`] = Math.round(
      p.rss! / KINDS.length,
    );
  }
  const base = perObject.managedFields;
  const last = perObject['secret-digests'];
  figures['ExternalSecret + Secret: heap before (managedFields only) → after every cut'] =
    `${Math.round(base.ExternalSecret! + base.Secret!)} → ${Math.round(last.ExternalSecret! + last.Secret!)} bytes`;
  return figures;
}

if (process.argv[2] === 'child') {
  const variant = process.argv[3] as Variant;
  if (!VARIANTS.includes(variant)) throw new Error(`unknown variant ${variant}`);
  process.stdout.write(JSON.stringify(await measureChild(variant, Number(process.argv[4]))));
}
