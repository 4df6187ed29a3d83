// ESO's PushSecret rules over the data (eso/push.ts): which pushes a spec plans for a store, the bytes
// each sends, and what a push or a deletion does to the remote secret — never touching one that
// external-secrets does not manage, or that another PushSecret pushed last.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MANAGED_BY_KEY,
  MANAGED_BY_VALUE,
  PUSHED_BY_KEY,
  plannedPushes,
  pushValue,
  remoteAfterDelete,
  remoteAfterPush,
  reverseKeys,
  type StoreIdentity,
} from '../../eso/push.ts';

const store: StoreIdentity = { kind: 'SecretStore', name: 'vault', labels: { tier: 'prod' } };
const source = new Map([
  ['db-user', Buffer.from('app')],
  ['db-pass', Buffer.from('pw')],
  ['other', Buffer.from('x')],
]);
const ref = (remoteKey: string, secretKey?: string, property?: string) => ({
  match: {
    ...(secretKey !== undefined ? { secretKey } : {}),
    remoteRef: { remoteKey, ...(property ? { property } : {}) },
  },
});
const managed = (data: Record<string, unknown>, by = 'ns/ps') => ({
  data,
  customMetadata: { [MANAGED_BY_KEY]: MANAGED_BY_VALUE, [PUSHED_BY_KEY]: by },
});

test('dataTo: one push per matched key (rewritten), for stores it selects; an explicit data entry wins', () => {
  const pushes = plannedPushes(
    {
      dataTo: [
        {
          storeRef: { labelSelector: { matchLabels: { tier: 'prod' } } },
          match: { regexp: '^db-' },
          rewrite: [{ regexp: { source: '^db-', target: 'app/' } }],
        },
      ],
      data: [ref('explicit/pass', 'db-pass')],
    },
    source,
    store,
  );
  assert.deepEqual(
    pushes.map((p) => [p.data.match.secretKey, p.data.match.remoteRef.remoteKey]),
    [
      ['db-user', 'app/user'],
      ['db-pass', 'explicit/pass'],
    ],
  );
  const elsewhere = plannedPushes({ dataTo: [{ storeRef: { name: 'other-store' } }] }, source, store);
  assert.deepEqual(elsewhere, [], 'a dataTo naming another store pushes nothing here');
});

test('dataTo refusals name the entry and key: a collision, an empty key, remoteKey with rewrite', () => {
  const collide = { storeRef: { name: 'vault' }, rewrite: [{ regexp: { source: '.*', target: 'same' } }] };
  assert.throws(() => plannedPushes({ dataTo: [collide] }, source, store), /dataTo\[0\]: duplicate remote key "same"/);
  const empty = { storeRef: { name: 'vault' }, rewrite: [{ regexp: { source: '.*', target: '' } }] };
  assert.throws(() => plannedPushes({ dataTo: [empty] }, source, store), /dataTo\[0\]: empty remote key/);
  const both = { storeRef: { name: 'vault' }, remoteKey: 'b', rewrite: [{ regexp: { source: 'a', target: 'b' } }] };
  assert.throws(() => plannedPushes({ dataTo: [both] }, source, store), /mutually exclusive/);
});

test('the value pushed: one key, or the whole Secret as JSON; a missing key names the key only', () => {
  assert.equal(pushValue({ data: ref('r', 'db-user') }, source).toString(), 'app');
  assert.equal(pushValue({ data: ref('r') }, source).toString(), '{"db-pass":"pw","db-user":"app","other":"x"}');
  assert.throws(() => pushValue({ data: ref('r', 'nope') }, source), { message: 'secret key nope does not exist' });
  const unicode = new Map([['a_U002e_b', Buffer.from('v')]]);
  assert.deepEqual([...reverseKeys('ReverseUnicode', unicode).keys()], ['a.b']);
});

test('a push writes only a managed (or absent) secret, and not at all when it already holds the value', () => {
  const push = ref('r', 'db-pass', 'password');
  assert.deepEqual(remoteAfterPush({}, push, Buffer.from('pw')), { password: 'pw' });
  assert.deepEqual(remoteAfterPush(managed({ user: 'u' }), push, Buffer.from('pw')), { user: 'u', password: 'pw' });
  assert.equal(remoteAfterPush(managed({ password: 'pw' }), push, Buffer.from('pw')), undefined, 'no write');
  assert.throws(
    () => remoteAfterPush({ data: { password: 'theirs' } }, push, Buffer.from('pw')),
    /secret not managed by external-secrets/,
  );
  assert.throws(() => remoteAfterPush({}, ref('r'), Buffer.from('not json')), /invalid JSON format/);
});

test('a deletion removes only what this PushSecret pushed: one property, or the whole secret', () => {
  const push = ref('r', 'db-pass', 'password');
  assert.deepEqual(remoteAfterDelete(managed({ password: 'pw', user: 'u' }), push, 'ns/ps'), { keep: { user: 'u' } });
  assert.deepEqual(remoteAfterDelete(managed({ password: 'pw' }), push, 'ns/ps'), { delete: true });
  assert.equal(
    remoteAfterDelete(managed({ password: 'pw' }, 'ns/other'), push, 'ns/ps'),
    undefined,
    'pushed by another',
  );
  assert.equal(remoteAfterDelete({ data: { password: 'pw' } }, push, 'ns/ps'), undefined, 'not managed');
  assert.equal(remoteAfterDelete({}, push, 'ns/ps'), undefined, 'already gone');
});
