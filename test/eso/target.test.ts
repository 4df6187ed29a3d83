import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { desiredSecret, dataHash, ANNOTATION_DATA_HASH, LABEL_MANAGED } from '../../eso/target.ts';

const str = (m: Map<string, Buffer>): Record<string, string> =>
  Object.fromEntries([...m].map(([k, v]) => [k, v.toString('utf8')]));

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
