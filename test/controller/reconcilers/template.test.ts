import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate as renderDefault, templateProblems } from '../../../eso/template.ts';
import { SUPPORTED_TEMPLATE_FUNCTIONS, TEMPLATE_FUNCTIONS } from '../../../eso/function-map.ts';

// One function map for admission and the engine (eso/template-supported.ts).
const renderTemplate = (src: string, data: Record<string, string>): string => renderDefault(src, data);
import { compileGoRegexp, replaceAllGo } from '../../../golang/regexp.ts';

const data = { user: 'admin', password: 's3cr3t', 'db-host': 'db.local', json: '{"a":{"b":"deep"},"n":3}', empty: '' };

void describe('ESO template v2 engine (Go text/template subset)', () => {
  void test('fields, literals and text', () => {
    assert.equal(
      renderTemplate('postgres://{{ .user }}:{{ .password }}@{{ index . "db-host" }}/app', data),
      'postgres://admin:s3cr3t@db.local/app',
    );
    assert.equal(renderTemplate('{{ "a\\tb" }}|{{ `raw\\n` }}|{{ 42 }}|{{ true }}', data), 'a\tb|raw\\n|42|true');
  });

  void test('pipes pass the value as the last argument', () => {
    assert.equal(renderTemplate('{{ .user | upper }}', data), 'ADMIN');
    assert.equal(renderTemplate('{{ .password | b64enc | b64dec }}', data), 's3cr3t');
    assert.equal(renderTemplate('{{ .user | printf "%s-%d" "x" }}', data), 'x-%!d(string=admin)');
    assert.equal(renderTemplate('{{ printf "%s:%05d" .user 42 }}', data), 'admin:00042');
    assert.equal(renderTemplate('{{ (.json | fromJson).a.b }}', data), 'deep');
    assert.equal(renderTemplate('{{ $j := .json | fromJson }}{{ $j.n }}', data), '3');
  });

  void test('missing keys are errors (missingkey=error), index of a missing key is not', () => {
    assert.throws(() => renderTemplate('{{ .nope }}', data), /map has no entry for key "nope"/);
    assert.equal(renderTemplate('{{ index . "nope" }}', data), ''); // map[string]string's zero value, as in ESO
    // Sprig's get takes map[string]interface{}: ESO's data (map[string]string) is refused, as in ESO.
    assert.throws(
      () => renderTemplate('{{ get . "nope" }}', data),
      /wrong type for value; expected map\[string\]interface \{\}; got map\[string\]string/,
    );
    assert.equal(renderTemplate('{{ get (dict "a" 1) "nope" | default "fallback" }}', data), 'fallback');
  });

  void test('trim markers and comments', () => {
    assert.equal(renderTemplate('a  {{- /* note */ -}}  b', data), 'ab');
    assert.equal(renderTemplate('x\n  {{- .user }}\n', data), 'xadmin\n');
    assert.equal(renderTemplate('{{-3}}', data), '-3');
  });

  void test('if / else if / else, with, range with variables, break/continue', () => {
    assert.equal(renderTemplate('{{ if .empty }}A{{ else if eq .user "admin" }}B{{ else }}C{{ end }}', data), 'B');
    assert.equal(renderTemplate('{{ with .user }}[{{ . }}]{{ else }}none{{ end }}', data), '[admin]');
    assert.equal(renderTemplate('{{ with .empty }}x{{ else }}none{{ end }}', data), 'none');
    assert.equal(renderTemplate('{{ range $k, $v := dict "b" 2 "a" 1 }}{{ $k }}={{ $v }};{{ end }}', data), 'a=1;b=2;');
    assert.equal(
      renderTemplate(
        '{{ range $i, $e := splitList "," "x,y,z" }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ $e }}{{ end }}',
        data,
      ),
      'xz',
    );
    assert.equal(
      renderTemplate('{{ range list 1 2 3 }}{{ if eq . 2 }}{{ break }}{{ end }}{{ . }}{{ end }}', data),
      '1',
    );
    assert.equal(renderTemplate('{{ range list }}x{{ else }}empty{{ end }}', data), 'empty');
    assert.equal(renderTemplate('{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}', data), '2');
    assert.equal(renderTemplate('{{ range . }}{{ $.user }}{{ break }}{{ end }}', data), 'admin');
  });

  void test('and/or short-circuit and return the deciding value', () => {
    assert.equal(renderTemplate('{{ or .empty "dflt" }}', data), 'dflt');
    assert.equal(renderTemplate('{{ and .user .password }}', data), 's3cr3t');
    assert.equal(renderTemplate('{{ or .user .nope }}', data), 'admin');
  });

  void test('Go printing of composite values and JSON like encoding/json', () => {
    assert.equal(renderTemplate('{{ list 1 "a" }}', data), '[1 a]');
    assert.equal(renderTemplate('{{ dict "b" 1 "a" "x" }}', data), 'map[a:x b:1]');
    assert.equal(renderTemplate('{{ dict "z" "<&>" "a" 1 | toJson }}', data), '{"a":1,"z":"\\u003c\\u0026\\u003e"}');
    assert.equal(renderTemplate('{{ dict "k" "v" | toYaml }}', data), 'k: v');
  });

  void test('Sprig string functions', () => {
    assert.equal(renderTemplate('{{ "hello world" | title }}', data), 'Hello World');
    assert.equal(
      renderTemplate(
        '{{ trimPrefix "db." "db.local" }}|{{ replace "." "_" "a.b.c" }}|{{ "abc" | trunc 2 }}|{{ substr 1 3 "abcd" }}',
        data,
      ),
      'local|a_b_c|ab|bc',
    );
    assert.equal(renderTemplate('{{ "a\\nb" | indent 2 }}', data), '  a\n  b');
    assert.equal(renderTemplate('{{ .user | quote }}', data), '"admin"');
    assert.equal(
      renderTemplate('{{ regexReplaceAll "(?P<first>[a-z])([a-z]*)" "ab cd" "${2}$first" }}', data),
      'ba dc',
    );
    assert.equal(renderTemplate('{{ "!!!" | b64dec }}', data), 'illegal base64 data at input byte 0');
  });

  void test('errors name the line and the problem; unsupported functions are refused before running', () => {
    assert.throws(() => renderTemplate('a\n{{ .user', data), /line 2: unclosed action/);
    assert.throws(() => renderTemplate('{{ if .user }}x', data), /line 1: unexpected EOF/);
    assert.throws(() => renderTemplate('{{ env "HOME" }}', data), /function "env" not defined/);
    assert.equal(renderTemplate('{{ define "x" }}[{{ . }}]{{ end }}{{ template "x" .user }}', data), '[admin]');
    assert.throws(() => renderTemplate('{{ .user "arg" }}', data), /user is not a method but has arguments/); // Go's words for a map field given arguments
    assert.deepEqual(templateProblems('{{ .x | env | upper }}'), ['line 1: function "env" not defined']);
    assert.throws(
      () => renderDefault('{{ now }}', data),
      /function "now" is not supported by vaultgate: its output changes on every render/,
    );
    assert.deepEqual(templateProblems('{{ .x | upper }}'), []);
  });

  void test('the default function map is exactly what admission allows, and every one of them is implemented', () => {
    for (const f of SUPPORTED_TEMPLATE_FUNCTIONS)
      assert.ok(
        TEMPLATE_FUNCTIONS.has(f) || f === 'and' || f === 'or',
        `admission allows ${f} but the engine lacks it`,
      );
    assert.deepEqual(
      templateProblems(
        SUPPORTED_TEMPLATE_FUNCTIONS.filter((f) => f !== 'and' && f !== 'or')
          .map((f) => `{{ if false }}{{ ${f} }}{{ end }}`)
          .join(''),
      ),
      [],
    );
  });

  void test('runaway output is capped', () => {
    assert.throws(() => renderTemplate('{{ range 100000 }}{{ repeat 100 "x" }}{{ end }}', data), /exceeds/);
  });
});

void describe('Go regexps (re2js)', () => {
  void test('named groups, leading flags and Expand semantics', () => {
    assert.equal(replaceAllGo(compileGoRegexp('(?i)^FOO_(?P<rest>.*)'), 'foo_bar', 'x-${rest}'), 'x-bar');
    // Go takes the longest name: "$1x" is the (missing) group "1x", so it expands to nothing.
    assert.equal(replaceAllGo(compileGoRegexp('(a)'), 'a', '$1x|${1}x|$$'), '|ax|$');
    assert.equal(replaceAllGo(compileGoRegexp('[[:digit:]]+'), 'a12b3', '#'), 'a#b#');
    assert.equal(replaceAllGo(compileGoRegexp('\\Qa.b\\E'), 'a.b axb', 'L'), 'L axb');
    assert.equal(replaceAllGo(compileGoRegexp('(?U)a+'), 'aaa', '-'), '---', 'the ungreedy flag, as in Go');
    // Go skips an empty match abutting the previous one; JS's String.replace does not (ESO rewrite bug).
    assert.equal(replaceAllGo(compileGoRegexp('(.*)'), 'handle', 'acme_$1'), 'acme_handle');
    assert.equal(replaceAllGo(compileGoRegexp('a*'), 'baaac', '-'), '-b-c-');
    assert.equal(replaceAllGo(compileGoRegexp('x*'), '', '-'), '-');
  });
});
