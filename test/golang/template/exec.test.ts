// Executing a parsed template as Go's text/template does: pipelines, range/with/else, variables, define
// and template, missing keys, and errors that name the place and the type but never a value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TemplateExecError } from '../../../golang/errors.ts';
import { fail, fixed } from '../../../golang/func.ts';
import { withRenderDeadline } from '../../../golang/template/exec.ts';
import { GoMap } from '../../../golang/values.ts';
import { render } from './render.ts';

const dot = new GoMap([
  ['user', 'app'],
  ['hosts', ['a', 'b']],
  ['port', 5432],
  ['nested', new GoMap([['k', 'v']])],
]);

test('fields, pipelines, range with index, with/else and variables', () => {
  assert.equal(render('{{ .user }}@{{ .nested.k }}', dot), 'app@v');
  assert.equal(render('{{ range $i, $h := .hosts }}{{ $i }}={{ $h }};{{ end }}', dot), '0=a;1=b;');
  assert.equal(
    render('{{ with .nested.k }}{{ . }}{{ else }}no{{ end }}|{{ with "" }}yes{{ else }}no{{ end }}', dot),
    'v|no',
  );
  assert.equal(render('{{ $x := .user }}{{ $x = "other" }}{{ $x }}', dot), 'other');
  assert.equal(render('{{ range .hosts }}{{ if eq . "b" }}{{ break }}{{ end }}{{ . }}{{ end }}', dot), 'a');
  assert.equal(render('{{ define "t2" }}[{{ . }}]{{ end }}{{ template "t2" .port }}', dot), '[5432]');
});

test('a missing map key is an error naming the key (missingkey=error, as ESO runs templates)', () => {
  assert.throws(
    () => render('{{ .nope }}', dot),
    (e: Error) => e instanceof TemplateExecError && /"nope"/.test(e.message),
  );
  assert.throws(() => render('{{ .user.x }}', dot), TemplateExecError);
});

test("a function's error names the function and not the argument", () => {
  const secret = 's3cr3t-value';
  const funcs = { check: fixed(['string'], () => fail('refused')) };
  assert.throws(
    () => render('{{ check .pw }}', new GoMap([['pw', secret]]), funcs),
    (e: Error) => /error calling check: refused/.test(e.message) && !e.message.includes(secret),
  );
  assert.throws(() => render('{{ check 1 }}', null, funcs), /expected string; found 1/);
});

test('a render past its deadline stops with an error instead of running on', () => {
  assert.throws(
    () =>
      withRenderDeadline(20, 'test render', () =>
        render('{{ range $i := until }}{{ end }}', null, {
          until: fixed([], () => Array.from({ length: 1e6 }, (_, i) => i)),
        }),
      ),
    /exceeded test render/,
  );
});
