// A process opens its signed trail from a local key file or from the cluster (key Secret created on first
// start, JWKS published), writing to stdout and, when asked, to a file that verifies with that key.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAuditTrail } from '../../trail/open.ts';
import { auditVaultWrite } from '../../trail/events.ts';
import {
  DEFAULT_JWKS_CONFIGMAP,
  DEFAULT_KEY_SECRET,
  JWKS_CONFIGMAP_FIELD,
  generateAuditKey,
  mergeJwks,
  parseJwks,
  privateKeyPem,
} from '../../trail/keys.ts';
import { verifyAuditFiles } from '../../trail/verify.ts';
import { CONFIGMAPS, NAMESPACES, SECRETS } from '../../kube/resources.ts';
import { FakeKubeClient } from '../sim/kube-fake-client.ts';

const dir = mkdtempSync(join(tmpdir(), 'vaultgate-trail-open-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const record = auditVaultWrite({
  action: 'update',
  object: 'policy',
  vaultName: 'vaultgate.ns.p',
  reason: 'spec changed',
});

/** Run `fn` while catching the trail's JSON lines on stdout (anything else passes through). */
async function withStdout(fn: () => Promise<void>): Promise<string[]> {
  const lines: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk: string | Uint8Array, ...rest: never[]) => {
    const text = String(chunk);
    if (text.startsWith('{')) {
      lines.push(...text.trimEnd().split('\n'));
      return true;
    }
    return write(chunk, ...rest);
  };
  try {
    await fn();
  } finally {
    process.stdout.write = write;
  }
  return lines;
}

test('without a key file or a cluster namespace, opening fails naming both flags', async () => {
  await assert.rejects(
    openAuditTrail({ replica: 'r0' }),
    /needs a key: --audit-key-file, or a cluster connection and --audit-namespace/,
  );
  await assert.rejects(openAuditTrail({ replica: 'r0', namespace: 'vaultgate' }), /--audit-namespace/);
});

test('a key file: records go to stdout and to the file, and the file verifies with that key', async () => {
  const key = await generateAuditKey();
  const keyFile = join(dir, 'key.pem');
  writeFileSync(keyFile, privateKeyPem(key));
  const file = join(dir, 'trail.log');
  const stdout = await withStdout(async () => {
    const trail = await openAuditTrail({ replica: 'r0', keyFile, file, fsync: true });
    await trail.append(record);
    await trail.close();
  });
  const text = readFileSync(file, 'utf8');
  assert.ok(stdout.length >= 1);
  for (const line of stdout) assert.ok(text.includes(line), 'stdout and file carry the same records');
  const report = await verifyAuditFiles([{ name: file, text }], mergeJwks(undefined, key.publicJwk));
  assert.equal(report.ok, true, JSON.stringify(report.issues));
  assert.ok(report.records >= 1);
});

test('a cluster: the key is created in a Secret once and its public half published in the JWKS ConfigMap', async () => {
  const client = new FakeKubeClient();
  await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'vaultgate' } });
  const kids: string[] = [];
  await withStdout(async () => {
    for (const replica of ['r0', 'r1']) {
      const trail = await openAuditTrail({ replica, namespace: 'vaultgate' }, client);
      await trail.append(record);
      await trail.close();
    }
  });
  const secret = await client.get(SECRETS, DEFAULT_KEY_SECRET, 'vaultgate');
  assert.ok(secret, 'key Secret created');
  const cm = await client.get<{
    apiVersion: string;
    kind: string;
    metadata: { name: string };
    data?: Record<string, string>;
  }>(CONFIGMAPS, DEFAULT_JWKS_CONFIGMAP, 'vaultgate');
  const jwks = parseJwks(cm?.data?.[JWKS_CONFIGMAP_FIELD] ?? '');
  for (const k of jwks.keys) kids.push(String(k.kid));
  assert.equal(kids.length, 1, "the second replica reused the first one's key");
});
