// text/template's lexer: actions, trim markers and comments, as Go's lex.go splits them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lexTemplate } from '../../../golang/template/lex.ts';

const kinds = (src: string): string[] => lexTemplate(src).map((i) => `${i.typ}:${i.val}`);

test('an action is split into fields, pipes, identifiers and literals; trim markers eat the spaces', () => {
  assert.deepEqual(kinds('a {{- .x | f 1 "s" -}} b'), [
    'text:a',
    'leftDelim:{{',
    'field:.x',
    'space: ',
    'pipe:|',
    'space: ',
    'identifier:f',
    'space: ',
    'number:1',
    'space: ',
    'string:"s"',
    'rightDelim:}}',
    'text:b',
    'eof:',
  ]);
});

test('comments vanish, lines are counted, and an unclosed action is an error item', () => {
  assert.deepEqual(kinds('x{{/* note */}}y'), ['text:x', 'text:y', 'eof:']);
  const items = lexTemplate('one\ntwo\n{{ .z }}');
  assert.equal(items.find((i) => i.typ === 'field')?.line, 3);
  assert.equal(lexTemplate('{{ .x').at(-1)?.typ, 'error');
});
