/* eslint-disable @typescript-eslint/require-await -- in-memory fakes of async interfaces */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { providerSecretData, type SecretSource } from '../../../eso/provider-data.ts';
import { secretValue, formatFloatF } from '../../../eso/values.ts';
import { decodeValue, convertKey } from '../../../eso/strategies.ts';
import { rewriteMap } from '../../../eso/rewrite.ts';
import { desiredSecret, dataHash, ANNOTATION_DATA_HASH, LABEL_MANAGED } from '../../../eso/target.ts';
import { shouldRefresh, jitteredIntervalMs, syncedResourceVersion, nextRefreshInMs } from '../../../eso/refresh.ts';
import { storeAllowsNamespace } from '../../../eso/store-conditions.ts';
import type { ExternalSecretSpec } from '../../../schemas/types.ts';

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

void describe('property extraction (ESO getSecretValue)', () => {
  const data = {
    user: 'u',
    'a.b': 'dotted',
    nested: { deep: { x: 1 }, list: ['p', 'q'] },
    n: 12.5,
    big: 1e21,
    flag: true,
    nil: null,
  };
  void test('top-level key first, then gjson paths; values as ESO prints them', () => {
    assert.equal(secretValue(data, 'user').toString(), 'u');
    assert.equal(secretValue(data, 'a.b').toString(), 'dotted');
    assert.equal(secretValue(data, 'nested.deep.x').toString(), '1');
    assert.equal(secretValue(data, 'nested.list.1').toString(), 'q');
    assert.equal(secretValue(data, 'nested.list.#').toString(), '2');
    assert.equal(secretValue(data, 'nested.deep').toString(), '{"x":1}');
    assert.equal(secretValue(data, 'n').toString(), '12.5');
    assert.equal(secretValue(data, 'big').toString(), '1000000000000000000000');
    assert.equal(secretValue(data, 'flag').toString(), 'true');
    assert.equal(secretValue(data, 'nil').toString(), '');
    assert.equal(secretValue({ b: '2', a: '<1>' }, undefined).toString(), '{"a":"\\u003c1\\u003e","b":"2"}');
    assert.throws(() => secretValue(data, 'nested.nope'), /cannot find secret data for key: "nested.nope"/);
    assert.equal(formatFloatF(1.5e-7), '0.00000015');
  });
});

void describe('decoding and conversion strategies', () => {
  void test('strict Base64 like Go, Auto falls back to the raw value', () => {
    assert.equal(decodeValue('Base64', Buffer.from('aGVsbG8=')).toString(), 'hello');
    assert.throws(() => decodeValue('Base64', Buffer.from('aGVsbG8')), /illegal base64/);
    assert.equal(decodeValue('Base64URL', Buffer.from('-_8=')).toString('hex'), 'fbff');
    assert.equal(decodeValue('Auto', Buffer.from('-_8=')).toString('hex'), 'fbff');
    assert.equal(decodeValue('Auto', Buffer.from('not base64!')).toString(), 'not base64!');
    assert.equal(decodeValue('None', Buffer.from('aGVsbG8=')).toString(), 'aGVsbG8=');
  });
  void test('key conversion Default and Unicode', () => {
    assert.equal(convertKey('Default', 'app/db password'), 'app_db_password');
    assert.equal(convertKey('Unicode', 'a/b'), 'a_U002f_b');
    assert.equal(convertKey('Default', 'ok-key_1.x'), 'ok-key_1.x');
  });
});

void describe('rewrite', () => {
  void test('regexp with Go expansion, transform template, in order', () => {
    const m = new Map([
      ['db/password', Buffer.from('p')],
      ['db/user', Buffer.from('u')],
    ]);
    const out = rewriteMap(
      [{ regexp: { source: '^db/(.*)', target: 'DB_$1' } }, { transform: { template: '{{ .value | upper }}' } }],
      m,
    );
    assert.deepEqual(str(out), { DB_PASSWORD: 'p', DB_USER: 'u' });
  });
  void test('merge strategies and conflicts', () => {
    const m = new Map([
      ['a', Buffer.from('{"x":"1"}')],
      ['b', Buffer.from('{"x":"2","y":"3"}')],
    ]);
    assert.throws(() => rewriteMap([{ merge: {} }], m), /conflicts: x/);
    assert.deepEqual(str(rewriteMap([{ merge: { conflictPolicy: 'Ignore', priority: ['a'] } }], m)), {
      x: '1',
      y: '3',
    });
    assert.deepEqual(
      JSON.parse(str(rewriteMap([{ merge: { conflictPolicy: 'Ignore', strategy: 'JSON', into: 'all' } }], m)).all!),
      { x: '2', y: '3' },
    );
  });
});

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

void describe('target Secret', () => {
  const provider = new Map([
    ['user', Buffer.from('admin')],
    ['password', Buffer.from('pw')],
  ]);
  void test('no template: provider data, managed label and data hash', () => {
    const d = desiredSecret(undefined, provider);
    assert.deepEqual(str(d.data), { user: 'admin', password: 'pw' });
    assert.equal(d.labels[LABEL_MANAGED], 'true');
    assert.equal(d.annotations[ANNOTATION_DATA_HASH], dataHash(provider));
  });
  void test('template Replace vs Merge, metadata, templateFrom literal', () => {
    const replace = desiredSecret(
      {
        template: {
          type: 'kubernetes.io/basic-auth',
          data: { dsn: '{{ .user }}:{{ .password }}' },
          metadata: { labels: { app: 'x' } },
        },
      },
      provider,
    );
    assert.deepEqual(str(replace.data), { dsn: 'admin:pw' });
    assert.equal(replace.type, 'kubernetes.io/basic-auth');
    assert.equal(replace.labels.app, 'x');
    const merge = desiredSecret(
      {
        template: {
          mergePolicy: 'Merge',
          data: { dsn: '{{ .user }}' },
          templateFrom: [{ literal: 'extra: "{{ .password | upper }}"' }],
        },
      },
      provider,
    );
    assert.deepEqual(str(merge.data), { user: 'admin', password: 'pw', dsn: 'admin', extra: 'PW' });
  });
  void test('template errors name the field, never the data', () => {
    assert.throws(
      () => desiredSecret({ template: { data: { x: '{{ .missing }}' } } }, provider),
      (e: Error) => e.message.includes('spec.target.template.data["x"]') && !e.message.includes('admin'),
    );
  });
  void test('hash is order independent and sees any change', () => {
    assert.equal(
      dataHash(
        new Map([
          ['a', Buffer.from('1')],
          ['b', Buffer.from('2')],
        ]),
      ),
      dataHash(
        new Map([
          ['b', Buffer.from('2')],
          ['a', Buffer.from('1')],
        ]),
      ),
    );
    assert.notEqual(dataHash(new Map([['a', Buffer.from('1')]])), dataHash(new Map([['a', Buffer.from('2')]])));
    assert.equal(dataHash(new Map([['a', Buffer.from('1')]])), dataHash({ a: Buffer.from('1').toString('base64') }));
  });
});

void describe('refresh scheduling', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  const base = { uid: 'u-1', generation: 2, refreshInterval: '1h' };
  const rv = syncedResourceVersion(2);
  void test('never synced → refresh; fresh sync → not; after the jittered interval → refresh', () => {
    assert.equal(shouldRefresh(base, now), true);
    const synced = { ...base, syncedResourceVersion: rv, refreshTime: new Date(now - 60_000).toISOString() };
    assert.equal(shouldRefresh(synced, now), false);
    const interval = jitteredIntervalMs(base);
    assert.equal(shouldRefresh(synced, now - 60_000 + interval + 1), true);
    assert.equal(nextRefreshInMs(synced, now), interval - 60_000);
  });
  void test('spec or annotation change (force-sync) → refresh, whatever the policy', () => {
    const synced = { ...base, syncedResourceVersion: rv, refreshTime: new Date(now).toISOString() };
    assert.equal(shouldRefresh({ ...synced, generation: 3 }, now), true);
    assert.equal(shouldRefresh({ ...synced, annotations: { 'external-secrets.io/force-sync': '1' } }, now), true);
    assert.equal(
      shouldRefresh(
        { ...synced, refreshPolicy: 'OnChange', annotations: { 'external-secrets.io/force-sync': '1' } },
        now,
      ),
      true,
    );
    assert.equal(shouldRefresh({ ...synced, refreshPolicy: 'CreatedOnce', generation: 3 }, now), false);
    assert.equal(shouldRefresh({ ...synced, refreshPolicy: 'OnChange' }, now + 10 * 3_600_000), false);
    assert.equal(shouldRefresh({ ...synced, refreshInterval: '0s' }, now + 10 * 3_600_000), false);
  });
  void test('jitter stays within ±10% and spreads 1,000 objects over the window', () => {
    const seconds = new Set<number>();
    for (let i = 0; i < 1000; i++) {
      const ms = jitteredIntervalMs({ uid: `uid-${i}`, refreshInterval: '1h' });
      assert.ok(ms >= 3_240_000 && ms <= 3_960_000);
      seconds.add(Math.floor(ms / 1000));
    }
    assert.ok(seconds.size > 500, `only ${seconds.size} distinct seconds`);
    assert.equal(
      jitteredIntervalMs({ uid: 'same', refreshInterval: '1h' }),
      jitteredIntervalMs({ uid: 'same', refreshInterval: '1h' }),
    );
  });
});

void describe('ClusterSecretStore conditions', () => {
  void test('no conditions → everyone; any matching condition → allowed', () => {
    assert.equal(storeAllowsNamespace(undefined, 'x', {}), true);
    const conds = [
      { namespaces: ['team-a'] },
      { namespaceRegexes: ['^prod-'] },
      { namespaceSelector: { matchLabels: { tier: 'gold' } } },
    ];
    assert.equal(storeAllowsNamespace(conds, 'team-a', {}), true);
    assert.equal(storeAllowsNamespace(conds, 'prod-1', {}), true);
    assert.equal(storeAllowsNamespace(conds, 'dev', { tier: 'gold' }), true);
    assert.equal(storeAllowsNamespace(conds, 'dev', { tier: 'silver' }), false);
    assert.equal(storeAllowsNamespace(conds, 'dev', undefined), false);
    assert.equal(
      storeAllowsNamespace(
        [{ namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] } }],
        'x',
        { env: 'dev' },
      ),
      true,
    );
  });
});
