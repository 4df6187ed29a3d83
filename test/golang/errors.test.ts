import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TemplateError, TemplateExecError } from '../../golang/errors.ts';

test('a template error says its phase: parse (template.Parse) or exec (template.Execute)', () => {
  const p = new TemplateError('template: t:1: unexpected "}"');
  const e = new TemplateExecError('template: t:1:2: executing "t" at <.x>: nil pointer');
  assert.equal(p.phase, 'parse');
  assert.equal(e.phase, 'exec');
  assert.ok(e instanceof TemplateError, 'an exec error is a template error');
});

test('every template error keeps the name TemplateError (what callers trust as a value-free message)', () => {
  assert.equal(new TemplateError('m').name, 'TemplateError');
  assert.equal(new TemplateExecError('m').name, 'TemplateError');
  assert.equal(new TemplateExecError('no such key').message, 'no such key');
});
