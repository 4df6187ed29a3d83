// Plain values (Vault's KV data) encoded as Go's encoding/json encodes them, which ESO's output matches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goJson } from '../../golang/json.ts';

test('keys sorted at every depth, HTML and line separators escaped unless raw', () => {
  assert.equal(goJson({ b: 1, a: { d: [1], c: null } }), '{"a":{"c":null,"d":[1]},"b":1}');
  assert.equal(goJson({ html: '<a href="x">&</a>' }), '{"html":"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"}');
  assert.equal(goJson('<>', true), '"<>"');
  assert.equal(goJson('a\u2028b', true), '"a\\u2028b"');
  assert.equal(goJson(undefined), 'null');
});
