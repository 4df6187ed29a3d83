// text/template's builtin functions (eq, lt, index, len, html, js, urlquery, and, or …) as Go defines them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goEq, goLt, queryEscape } from '../../../golang/template/builtins.ts';
import { GoMap, GoNum, goString } from '../../../golang/values.ts';
import { render } from './render.ts';

test('eq compares basic kinds, any of several; int and float do not compare', () => {
  assert.equal(goEq('a', 'b', 'a'), true);
  assert.equal(goEq(1, new GoNum('int64', 1)), true, 'int and int64 are both integers');
  assert.throws(() => goEq(1, new GoNum('float64', 1)), /incompatible types for comparison: int and float64/);
  assert.equal(goEq(null, null), true);
  assert.throws(() => goLt(true, false), /invalid type for comparison/);
  assert.equal(goLt('a', 'b'), true);
});

test('index, len, and/or short-circuit, not', () => {
  const dot = new GoMap([
    ['m', new GoMap([['k', 'v']])],
    ['l', ['x', 'y']],
  ]);
  assert.equal(render('{{ index .m "k" }} {{ index .l 1 }} {{ len .l }}', dot), 'v y 2');
  assert.throws(() => render('{{ index .l 5 }}', dot), /error calling index: index out of range/);
  assert.equal(render('{{ or "" "b" }} {{ and 1 0 }} {{ not "" }}', dot), 'b 0 true');
});

test('html, js and urlquery escape as Go does', () => {
  assert.equal(render(`{{ html "<a href='x'>&" }}`), '&lt;a href=&#39;x&#39;&gt;&amp;');
  assert.equal(render(`{{ js "it's <b>" }}`), "it\\'s \\u003Cb\\u003E");
  assert.equal(queryEscape(goString('a b&c/é')), 'a+b%26c%2F%C3%A9');
});
