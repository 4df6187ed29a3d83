// text/template's parser: Go's parse errors for broken templates, undefined functions refused at parse
// time, and the list of functions a template calls (admission refuses templates by it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { functionsUsed, parseTemplateSet } from '../../../golang/template/parse.ts';

const parse = (src: string) => parseTemplateSet(src, 't', (f) => ['f', 'g', 'h', 'k'].includes(f));

test("broken templates fail with Go's messages and the line", () => {
  const cases: Array<[string, string]> = [
    ['{{ if }}', 'line 1: missing value for if'],
    ['\n{{ end }}', 'line 2: unexpected {{end}}'],
    ['{{ nofn 1 }}', 'line 1: function "nofn" not defined'],
    ['{{ .x', 'line 1: unclosed action'],
    ['{{ range .x }}', 'line 1: unexpected EOF'],
    ['{{ "\\z" }}', 'line 1: invalid syntax'],
  ];
  for (const [src, message] of cases) assert.throws(() => parse(src), { name: 'TemplateError', message }, src);
});

test('functionsUsed lists every function called, in nested pipelines and in defined templates', () => {
  const set = parse('{{ f (g .x) | h }}{{ define "d" }}{{ k }}{{ end }}');
  assert.deepEqual([...functionsUsed(set)].sort(), ['f', 'g', 'h', 'k']);
  assert.deepEqual(set.trees.has('d'), true);
});

test('nesting too deep for the stack is a TemplateError, not a crash', () => {
  const message = 'template nesting too deep';
  assert.throws(() => parse(`{{ f ${'('.repeat(200_000)}`), { name: 'TemplateError', message });
  assert.throws(() => parse('{{ if 1 }}'.repeat(20_000)), { name: 'TemplateError', message });
});
