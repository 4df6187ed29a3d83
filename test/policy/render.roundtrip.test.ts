// Issue #21.8(a): the policy text vaultgate writes to Vault must mean what was admitted. Object- and
// list-valued parameter constraints (`allowed_parameters = { "map" = [{"good" = "one"}] }`) used to be
// rendered as a quoted JSON string, which Vault reads as that string: the written policy then allowed
// the string and denied the object the admitted policy allowed. Rendered HCL now parses back (with the
// same parser the webhook admits raw HCL with) to exactly the rules that were rendered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { renderPolicy, type PolicyRule } from '../../policy/render.ts';
import { parsePolicyText } from '../../policy/parse.ts';

const owner = { namespace: 'orders', name: 'p', uid: 'u' };

function roundTrip(rules: PolicyRule[]): PolicyRule[] {
  const parsed = parsePolicyText(renderPolicy(rules, owner));
  assert.ok(parsed.ok, JSON.stringify(parsed));
  return parsed.rules.map((r) => r.rule as PolicyRule);
}

test('an object-valued constraint is written as an HCL object, not as a string holding JSON', () => {
  const rule: PolicyRule = {
    path: 'kv1/orders/x',
    capabilities: ['create', 'update'],
    allowedParameters: { map: [{ good: 'one' }] },
    deniedParameters: { list: [['a', 1]] },
  };
  const text = renderPolicy([rule], owner);
  assert.match(text, /"map" = \[\{"good" = "one"\}\]/);
  assert.match(text, /"list" = \[\["a", 1\]\]/);
  assert.doesNotMatch(text, /\\"good\\"/);
  const [back] = roundTrip([rule]);
  assert.deepEqual(back?.allowedParameters, { map: [{ good: 'one' }] });
  assert.deepEqual(back?.deniedParameters, { list: [['a', 1]] });
});

test('any constraint value (strings, numbers, booleans, nested lists and objects) parses back to itself', () => {
  const key = fc.string({ unit: fc.constantFrom(...'ab_-. "\\${}'.split('')), maxLength: 5 });
  const { value } = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.string({ maxLength: 6 }),
      fc.integer({ min: -1000, max: 1000 }),
      fc.boolean(),
      fc.array(tie('value'), { maxLength: 3 }),
      fc.dictionary(key, tie('value'), { maxKeys: 3 }),
    ),
  }));
  fc.assert(
    fc.property(
      fc.dictionary(
        key.filter((k) => k !== ''),
        fc.array(value, { maxLength: 3 }),
        { maxKeys: 3 },
      ),
      (allowed) => {
        const [back] = roundTrip([{ path: 'secret/data/x', capabilities: ['read'], allowedParameters: allowed }]);
        assert.deepEqual(back?.allowedParameters, JSON.parse(JSON.stringify(allowed)));
      },
    ),
    { numRuns: 500 },
  );
});
