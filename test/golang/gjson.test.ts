// ESO's remoteRef.property path syntax (tidwall/gjson) over a KV secret's data, with gjson's String().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gjsonGet } from '../../golang/gjson.ts';

const data = {
  db: { user: 'app', port: 5432, tls: true, 'host.name': 'pg' },
  hosts: [{ name: 'a' }, { name: 'b' }],
  empty: null,
};

test('dotted keys, escaped dots, array indexes and # (length, projection)', () => {
  assert.deepEqual(gjsonGet(data, 'db.user'), { exists: true, text: 'app' });
  assert.equal(gjsonGet(data, 'db.host\\.name').text, 'pg');
  assert.equal(gjsonGet(data, 'hosts.1.name').text, 'b');
  assert.equal(gjsonGet(data, 'hosts.#').text, '2');
  assert.equal(gjsonGet(data, 'hosts.#.name').text, '["a","b"]');
});

test('numbers and bools as JSON text, objects compact, null empty; a missing path does not exist', () => {
  assert.equal(gjsonGet(data, 'db.port').text, '5432');
  assert.equal(gjsonGet(data, 'db.tls').text, 'true');
  assert.equal(gjsonGet(data, 'hosts.0').text, '{"name":"a"}');
  assert.equal(gjsonGet(data, 'empty').text, '');
  assert.equal(gjsonGet(data, 'db.password').exists, false);
  assert.equal(gjsonGet(data, 'hosts.7').exists, false);
});

test('wildcards match the first key in order', () => {
  assert.equal(gjsonGet(data, 'db.us*').text, 'app');
  assert.equal(gjsonGet(data, 'db.p?rt').text, '5432');
});
