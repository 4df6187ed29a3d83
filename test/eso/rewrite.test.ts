import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { rewriteMap } from '../../eso/rewrite.ts';

const str = (m: Map<string, Buffer>): Record<string, string> =>
  Object.fromEntries([...m].map(([k, v]) => [k, v.toString('utf8')]));

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
