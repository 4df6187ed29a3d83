import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { secretValue, formatFloatF } from '../../eso/values.ts';

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
