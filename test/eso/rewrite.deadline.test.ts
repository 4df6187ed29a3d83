// Rewrite transforms render on the controller's thread (key names): a hostile one stops at a short
// deadline (eso/rewrite.ts IN_PROCESS_DEADLINE_MS) with a message, instead of holding the event loop.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rewriteMap } from '../../eso/rewrite.ts';
import { HOSTILE_TEMPLATES } from './hostile-templates.ts';

void test('a rewrite transform looping over costly calls stops at 250 ms with a message naming the operation', () => {
  const loop = HOSTILE_TEMPLATES.find((h) => h.name.startsWith('deepCopy of a 2,000-deep dict'))!.template;
  const t0 = performance.now();
  assert.throws(
    () =>
      rewriteMap(
        [{ transform: { template: loop } }],
        new Map([
          ['a', Buffer.from('x')],
          ['b', Buffer.from('y')],
        ]),
      ),
    (err: Error) => {
      assert.equal(err.message, 'failed rewrite operation[0]: line 1: template rendering exceeded 250ms');
      return true;
    },
  );
  assert.ok(performance.now() - t0 < 1000, `took ${(performance.now() - t0).toFixed(0)} ms`);
  assert.deepEqual(
    [...rewriteMap([{ transform: { template: '{{ .value | upper }}' } }], new Map([['a', Buffer.from('x')]])).keys()],
    ['A'],
  );
});
