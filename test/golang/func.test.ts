import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FuncError, fail, fixed, variadic } from '../../golang/func.ts';
import { TemplateError } from '../../golang/errors.ts';

test('a declared function carries its Go signature for the call checks, and its body', () => {
  const upper = fixed(['string'], (s) => s.toUpperCase());
  assert.deepEqual(upper.params, ['string']);
  assert.equal(upper.variadic, undefined);
  assert.equal((upper.fn as (s: string) => string)('a'), 'A');
  const join = variadic(['string'], 'string', (sep, ...parts) => parts.join(sep));
  assert.deepEqual(join.params, ['string']);
  assert.equal(join.variadic, 'string');
  assert.equal((join.fn as (...a: string[]) => string)('-', 'a', 'b'), 'a-b');
});

test("a function's failure is a template error with the message given", () => {
  assert.throws(
    () => fail('invalid base64'),
    (err: unknown) => err instanceof FuncError && err instanceof TemplateError && err.message === 'invalid base64',
  );
});
