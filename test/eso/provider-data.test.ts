/* eslint-disable @typescript-eslint/require-await -- in-memory fakes of async interfaces */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { providerSecretData, type SecretSource } from '../../eso/provider-data.ts';
import type { ExternalSecretSpec } from '../../schemas/types.ts';

/** A KV v2 mount in memory: key → data, key → custom_metadata. */
function memorySource(
  secrets: Record<string, Record<string, unknown>>,
  meta: Record<string, Record<string, string>> = {},
): SecretSource & { reads: string[] } {
  const reads: string[] = [];
  return {
    kvVersion: 2,
    reads,
    async read(key) {
      reads.push(key);
      return secrets[key];
    },
    async readMetadata(key) {
      return secrets[key] ? (meta[key] ?? {}) : undefined;
    },
    async list(path) {
      const names = new Set<string>();
      for (const k of Object.keys(secrets)) {
        if (!k.startsWith(path)) continue;
        const rest = k.slice(path.length);
        const slash = rest.indexOf('/');
        names.add(slash < 0 ? rest : rest.slice(0, slash + 1));
      }
      return names.size ? [...names] : undefined;
    },
  };
}

const str = (m: Map<string, Buffer>): Record<string, string> =>
  Object.fromEntries([...m].map(([k, v]) => [k, v.toString('utf8')]));

void describe('provider data assembly', () => {
  const src = memorySource(
    {
      'app/db': { user: 'admin', password: 'pw' },
      'app/api': { token: 'dG9r' },
      'other/x': { k: 'v' },
    },
    { 'app/db': { team: 'a' }, 'app/api': { team: 'b' } },
  );
  const sourceFor = async () => src;

  void test('dataFrom in order, data[] on top', async () => {
    const spec: ExternalSecretSpec = {
      dataFrom: [{ extract: { key: 'app/db' } }, { extract: { key: 'app/api', decodingStrategy: 'Base64' } }],
      data: [{ secretKey: 'user', remoteRef: { key: 'other/x', property: 'k' } }],
    };
    const { data } = await providerSecretData(spec, sourceFor);
    assert.deepEqual(str(data), { user: 'v', password: 'pw', token: 'tok' });
  });

  void test('find by name regexp (keys converted) and by tags', async () => {
    const byName = await providerSecretData(
      { dataFrom: [{ find: { path: 'app', name: { regexp: 'db$' } } }] },
      sourceFor,
    );
    assert.deepEqual(str(byName.data), { app_db: '{"password":"pw","user":"admin"}' });
    const byTag = await providerSecretData(
      { dataFrom: [{ find: { tags: { team: 'b' } }, rewrite: [{ regexp: { source: '.*/', target: '' } }] }] },
      sourceFor,
    );
    assert.deepEqual(str(byTag.data), { api: '{"token":"dG9r"}' });
  });

  void test('a missing remote secret fails with Retain and is skipped with Delete', async () => {
    const spec: ExternalSecretSpec = { data: [{ secretKey: 'x', remoteRef: { key: 'gone' } }] };
    await assert.rejects(providerSecretData(spec, sourceFor), /secret does not exist at provider using spec.data\[0\]/);
    const r = await providerSecretData({ ...spec, target: { deletionPolicy: 'Delete' } }, sourceFor);
    assert.deepEqual(r.missing, ['spec.data[0]']);
    assert.equal(r.data.size, 0);
  });

  void test('nullBytePolicy Fail refuses values with NUL', async () => {
    const s = memorySource({ k: { v: 'AA==' } });
    await assert.rejects(
      providerSecretData(
        {
          data: [
            {
              secretKey: 'v',
              remoteRef: { key: 'k', property: 'v', decodingStrategy: 'Base64', nullBytePolicy: 'Fail' },
            },
          ],
        },
        async () => s,
      ),
      /contains null bytes/,
    );
  });
});
