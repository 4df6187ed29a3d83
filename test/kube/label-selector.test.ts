// metav1.LabelSelector as apimachinery matches and validates it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectorMatches, selectorProblems } from '../../kube/label-selector.ts';

const labels = { team: 'a', tier: 'prod' };

test('matchLabels and every operator; an empty or absent selector matches everything', () => {
  assert.equal(selectorMatches(undefined, labels), true);
  assert.equal(selectorMatches({}, undefined), true);
  assert.equal(selectorMatches({ matchLabels: { team: 'a' } }, labels), true);
  assert.equal(selectorMatches({ matchLabels: { team: 'b' } }, labels), false);
  const expr = (operator: string, values?: string[]) => ({ matchExpressions: [{ key: 'tier', operator, values }] });
  assert.equal(selectorMatches(expr('In', ['prod', 'dev']), labels), true);
  assert.equal(selectorMatches(expr('In', ['dev']), labels), false);
  assert.equal(selectorMatches(expr('NotIn', ['prod']), labels), false);
  assert.equal(selectorMatches(expr('NotIn', ['prod']), {}), true, 'NotIn holds for a missing label');
  assert.equal(selectorMatches(expr('Exists'), labels), true);
  assert.equal(selectorMatches(expr('DoesNotExist'), labels), false);
  assert.equal(selectorMatches(expr('Gt', ['1']), labels), false, 'an unknown operator selects nothing');
});

test('problems apimachinery refuses name the field', () => {
  assert.deepEqual(
    selectorProblems({
      matchExpressions: [
        { key: 'a', operator: 'Exists' },
        { key: 'b', operator: 'In' },
      ],
    }),
    [{ field: 'matchExpressions[1].values', message: 'operator In needs at least one value' }],
  );
  assert.deepEqual(selectorProblems({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }), [
    { field: 'matchExpressions[0].values', message: 'operator Exists takes no values' },
  ]);
});
