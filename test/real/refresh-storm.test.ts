// A forced refresh on the real kube-apiserver and OpenBao (issue #24): `kubectl annotate --all
// external-secrets.io/force-sync=…` on 200 ExternalSecrets whose Vault data did not change. The writes are
// counted by the apiserver itself (apiserver_request_total): one status write per ExternalSecret and no
// Secret write (#24.4). The ordering under a storm (#24.2) is measured by `npm run bench -- peer`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPeerStack, type PeerStack } from '../harness/peer-stack.ts';
import { baoSkipReason, realTier } from '../harness/real-tier.ts';
import { waitFor } from '../harness/wait.ts';
import { requireEso } from '../upstream/eso.ts';
import { apiserverWrites, delta } from '../bench/apiserver-writes.ts';

const tier = await realTier();
const skip = tier.skip || baoSkipReason();
if (!skip) requireEso();

const NAMESPACES = ['storm-0', 'storm-1'];
const PER_NAMESPACE = 100;
const PATHS = 10;
const valueOf = (e: number): string => `pw-${e % PATHS}`;

async function must(stack: PeerStack, method: string, path: string, body?: unknown): Promise<void> {
  const res = await stack.cp.request(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${res.text.slice(0, 300)}`);
}

function externalSecret(name: string, e: number): object {
  return {
    apiVersion: 'external-secrets.io/v1',
    kind: 'ExternalSecret',
    metadata: { name },
    spec: {
      secretStoreRef: { name: 'vault', kind: 'SecretStore' },
      refreshInterval: '1h',
      data: [{ secretKey: 'password', remoteRef: { key: `storm/app-${e % PATHS}`, property: 'password' } }],
    },
  };
}

/** status.syncedResourceVersion of every ExternalSecret (all namespaces). */
async function syncedVersions(stack: PeerStack): Promise<Map<string, string>> {
  const res = await stack.cp.request('GET', '/apis/external-secrets.io/v1/externalsecrets');
  const items =
    (
      res.body as {
        items?: Array<{ metadata: { name: string; namespace: string }; status?: { syncedResourceVersion?: string } }>;
      }
    ).items ?? [];
  return new Map(
    items.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.status?.syncedResourceVersion ?? '']),
  );
}

async function secretPassword(stack: PeerStack, ns: string, name: string): Promise<string | undefined> {
  const res = await stack.cp.request('GET', `/api/v1/namespaces/${ns}/secrets/${name}`);
  const b64 = (res.body as { data?: Record<string, string> } | undefined)?.data?.password;
  return res.status === 200 && b64 !== undefined ? Buffer.from(b64, 'base64').toString('utf8') : undefined;
}

async function forceSyncAll(stack: PeerStack, value: string): Promise<void> {
  await Promise.all(
    NAMESPACES.map((ns) =>
      stack.cp.kubectl([
        'annotate',
        '--overwrite',
        '-n',
        ns,
        'externalsecrets',
        '--all',
        `external-secrets.io/force-sync=${value}`,
      ]),
    ),
  );
}

async function allRefreshed(stack: PeerStack, before: Map<string, string>): Promise<void> {
  await waitFor(
    async () => {
      const now = await syncedVersions(stack);
      return [...before].every(([k, v]) => (now.get(k) ?? v) !== v) ? true : undefined;
    },
    { what: 'every ExternalSecret refreshed', timeoutMs: 300_000, intervalMs: 500 },
  );
}

/** Waits until the apiserver counts no new write for `quietMs`. */
async function quiet(stack: PeerStack, quietMs = 3000): Promise<void> {
  let last = JSON.stringify(await apiserverWrites(stack.cp));
  let since = Date.now();
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && Date.now() - since < quietMs) {
    await new Promise((r) => setTimeout(r, 250));
    const now = JSON.stringify(await apiserverWrites(stack.cp));
    if (now !== last) {
      last = now;
      since = Date.now();
    }
  }
}

void describe('forced refresh storm on the real apiserver and OpenBao (issue #24)', { skip }, () => {
  let stack: PeerStack;

  before(async () => {
    stack = await startPeerStack({ log: () => undefined });
    await stack.vault('PUT', 'sys/policies/acl/storm-read', {
      policy: 'path "secret/data/storm/*" { capabilities = ["read"] }\n',
    });
    await stack.vault('POST', 'auth/kubernetes/role/storm', {
      bound_service_account_names: ['reader'],
      bound_service_account_namespaces: NAMESPACES,
      token_policies: ['storm-read'],
      token_ttl: '1h',
    });
    for (let p = 0; p < PATHS; p++)
      await stack.vault('POST', `secret/data/storm/app-${p}`, { data: { password: valueOf(p) } });
    for (const ns of NAMESPACES) {
      await must(stack, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      await must(stack, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'reader' },
      });
      await must(stack, 'POST', `/apis/external-secrets.io/v1/namespaces/${ns}/secretstores`, {
        apiVersion: 'external-secrets.io/v1',
        kind: 'SecretStore',
        metadata: { name: 'vault' },
        spec: {
          controller: 'storm',
          provider: {
            vault: {
              server: stack.bao.addr,
              path: 'secret',
              version: 'v2',
              auth: { kubernetes: { mountPath: 'kubernetes', role: 'storm', serviceAccountRef: { name: 'reader' } } },
            },
          },
        },
      });
    }
    await stack.startVaultgate({ controllerClass: 'storm' });
    for (const ns of NAMESPACES) {
      for (let e = 0; e < PER_NAMESPACE; e++)
        await must(
          stack,
          'POST',
          `/apis/external-secrets.io/v1/namespaces/${ns}/externalsecrets`,
          externalSecret(`es-${e}`, e),
        );
    }
    await waitFor(
      async () => {
        const v = await syncedVersions(stack);
        return v.size === NAMESPACES.length * PER_NAMESPACE && [...v.values()].every((s) => s !== '')
          ? true
          : undefined;
      },
      { what: 'the first sync', timeoutMs: 300_000, intervalMs: 500 },
    );
    await quiet(stack);
  });
  after(async () => {
    await stack?.stop();
  });

  test('a forced refresh with unchanged Vault data: one status write per ExternalSecret, no Secret write', async () => {
    const before = await syncedVersions(stack);
    const from = await apiserverWrites(stack.cp);
    await forceSyncAll(stack, 'unchanged-1');
    await allRefreshed(stack, before);
    await quiet(stack);
    const writes = delta(from, await apiserverWrites(stack.cp));
    delete writes.externalsecrets; // kubectl annotate's own PATCHes
    delete writes.tokenreviews; // OpenBao's, for a login
    delete writes.leases; // the kube-apiserver's own identity lease (the controller runs without leader election)
    assert.deepEqual(writes, { 'externalsecrets/status': NAMESPACES.length * PER_NAMESPACE });
    assert.equal(await secretPassword(stack, 'storm-1', 'es-17'), valueOf(17));
  });
});
