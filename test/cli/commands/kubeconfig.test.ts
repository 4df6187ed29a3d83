// Where the CLI finds the cluster: --kubeconfig first, then KUBECONFIG; no cluster is a clear error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConfig } from '../../../cli/commands/kubeconfig.ts';

const dir = mkdtempSync(join(tmpdir(), 'vg-kubeconfig-'));
const config = (server: string) => `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: '${server}' } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

test('--kubeconfig wins over KUBECONFIG', () => {
  const flag = join(dir, 'flag.yaml');
  const env = join(dir, 'env.yaml');
  writeFileSync(flag, config('https://flag.example:6443'));
  writeFileSync(env, config('https://env.example:6443'));
  const saved = process.env.KUBECONFIG;
  process.env.KUBECONFIG = env;
  try {
    assert.equal(loadKubeConfig(flag).getCurrentCluster()?.server, 'https://flag.example:6443');
    assert.equal(loadKubeConfig().getCurrentCluster()?.server, 'https://env.example:6443');
  } finally {
    if (saved === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = saved;
  }
});

test('a kubeconfig without a current cluster is refused, saying how to configure one', () => {
  const empty = join(dir, 'empty.yaml');
  writeFileSync(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
  assert.throws(() => loadKubeConfig(empty), /no Kubernetes cluster configured: pass --kubeconfig, set KUBECONFIG/);
});
