// encoding/json and sigs.k8s.io/yaml as ESO's toJson / toYaml write template values: Go's types decide
// how a number prints, map keys come sorted, and HTML characters are escaped unless asked not to be.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonFloat, toGoJson, toGoYaml } from '../../golang/marshal.ts';
import { GoMap, GoNum } from '../../golang/values.ts';

test('a float64 prints as encoding/json prints it: integral without ".0", exponent from 1e21', () => {
  assert.equal(jsonFloat(1234567), '1234567');
  assert.equal(jsonFloat(1e21), '1e+21');
  assert.equal(jsonFloat(0.000001), '0.000001');
  assert.equal(jsonFloat(1e-7), '1e-7');
  assert.equal(toGoJson(new GoNum('float64', 2.5)), '2.5');
});

test('maps in key order, bytes as base64, HTML escaped by default', () => {
  const m = new GoMap([
    ['z', '<b>&'],
    ['a', new Uint8Array([104, 105])],
  ]);
  assert.equal(toGoJson(m), '{"a":"aGk=","z":"\\u003cb\\u003e\\u0026"}');
  assert.equal(toGoJson(m, { escapeHTML: false }), '{"a":"aGk=","z":"<b>&"}');
  assert.equal(toGoJson([1, null], { indent: '  ' }), '[\n  1,\n  null\n]');
});

test('YAML as sigs.k8s.io/yaml writes it: sorted keys, strings that read as other types quoted', () => {
  const m = new GoMap([
    ['b', 'true'],
    ['a', new GoMap([['n', 1]])],
  ]);
  // YAML 1.1 reads a bare n as false, so the key "n" is quoted as go-yaml quotes it.
  assert.equal(toGoYaml(m), 'a:\n  "n": 1\nb: "true"');
});
