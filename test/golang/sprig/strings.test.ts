// Sprig's string functions; each expected result is what ESO's Sprig (v3.3.0, xstrings 1.5.0) gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toCamelCase, toKebabCase, toSnakeCase, wrapCustom } from '../../../golang/sprig/strings.ts';
import { sprig } from './sprig.ts';

test('case conversions as Sprig (xstrings) converts', () => {
  assert.equal(toCamelCase('http_server'), 'httpServer', 'xstrings 1.5 keeps the first letter as written');
  assert.equal(toSnakeCase('FirstName'), 'first_name');
  assert.equal(toKebabCase('FirstName'), 'first-name');
  assert.equal(sprig('{{ title "hello world" }}|{{ untitle "Hello World" }}'), 'Hello World|hello world');
  assert.equal(sprig('{{ swapcase "This Is A.Test" }}'), 'tHIS iS a.tEST');
  assert.equal(sprig('{{ initials "First Try" }}'), 'FT');
});

test('trimming, cutting and repeating', () => {
  assert.equal(sprig('{{ abbrev 5 "hello world" }}'), 'he...');
  assert.equal(sprig('{{ trunc 5 "hello world" }}|{{ trunc -5 "hello world" }}'), 'hello|world');
  assert.equal(sprig('{{ substr 0 5 "hello world" }}'), 'hello');
  assert.equal(sprig('{{ trimAll "$" "$5.00$" }}|{{ trim "  a  " }}'), '5.00|a');
  assert.equal(sprig('{{ nospace "h e l l o" }}|{{ repeat 3 "ab" }}'), 'hello|ababab');
  assert.equal(sprig('{{ indent 2 "a\\nb" }}'), '  a\n  b');
});

test('split gives a map of _0, _1 …; wrap breaks at spaces', () => {
  assert.equal(sprig('{{ $p := split "$" "foo$bar$baz" }}{{ $p._0 }} {{ $p._2 }}'), 'foo baz');
  assert.equal(sprig('{{ splitList "," "a,b" }}'), '[a b]');
  assert.equal(wrapCustom('Hello World', 5, '\n', false), 'Hello\nWorld');
  assert.equal(sprig('{{ wrapWith 5 "\\t" "Hello World" }}'), 'Hello\tWorld');
});
