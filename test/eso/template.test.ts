// The Go text/template lexer and the subset checker shared by admission and the controller's engine.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkTemplate, lexTemplate } from '../../webhook/rules/eso/template-check.ts';
import { SUPPORTED_TEMPLATE_FUNCTIONS, isSupportedTemplateFunction } from '../../webhook/rules/eso/template-subset.ts';

const kinds = (src: string) => checkTemplate(src).map((i) => i.kind);

void describe('lexTemplate', () => {
  void test('splits text and actions and applies {{- -}} trimming as Go does', () => {
    const { tokens, error } = lexTemplate('a \n {{- .user -}} \n b');
    assert.equal(error, undefined);
    assert.deepEqual(tokens.map((t) => [t.type, t.value]), [['text', 'a'], ['leftDelim', '{{- '], ['field', '.user'], ['rightDelim', ' -}}'], ['text', 'b']]);
  });

  void test('reads strings, raw strings, chars, numbers, fields, pipes and parentheses', () => {
    const { tokens } = lexTemplate('{{ (index . "db-pass") | printf `%s\n` | trunc -3 | eq \'x\' 0x1F 1.5 true nil }}');
    assert.deepEqual(tokens.filter((t) => !['leftDelim', 'rightDelim'].includes(t.type)).map((t) => t.type), [
      'leftParen', 'identifier', 'dot', 'string', 'rightParen', 'pipe', 'identifier', 'rawString', 'pipe',
      'identifier', 'number', 'pipe', 'identifier', 'char', 'number', 'number', 'bool', 'nil',
    ]);
  });

  void test('comments are not actions', () => {
    assert.deepEqual(lexTemplate('x{{/* a comment with }} inside */}}y').tokens.map((t) => t.value), ['x', 'y']);
    assert.deepEqual(lexTemplate('x {{- /* c */ -}} y').tokens.map((t) => t.value), ['x', 'y']);
  });

  void test('errors carry Go\'s wording and the offset', () => {
    assert.deepEqual(lexTemplate('ab{{ "x }}').error, { message: 'unterminated quoted string', pos: 5 });
    assert.equal(lexTemplate('{{ .a').error?.message, 'unclosed action');
    assert.equal(lexTemplate('{{/* open').error?.message, 'unclosed comment');
    assert.equal(lexTemplate('{{ .a ) }}').error?.message, 'unexpected right paren');
    assert.equal(lexTemplate('{{ (.a }}').error?.message, 'unclosed left paren');
    assert.equal(lexTemplate('{{ .a # }}').error?.message, 'bad character "#"');
    assert.equal(lexTemplate('{{ 12abc }}').error?.message, 'bad number syntax');
  });
});

void describe('checkTemplate', () => {
  void test('templates ESO users write every day are within the subset', () => {
    for (const src of [
      '{{ .password }}',
      '{{ .password | b64dec }}',
      '{"auths":{"{{ .registry }}":{"auth":"{{ printf "%s:%s" .user .pass | b64enc }}"}}}',
      '{{ index . "db-password" | trim }}',
      '{{ (.config | fromJson).user | default "admin" | quote }}',
      '{{ if and .a (not .b) }}x{{ else if eq .c "y" }}y{{ else }}z{{ end }}',
      'plain text without actions',
      '{{ .value | lower | replace "_" "-" | trimPrefix "app-" }}',
    ]) assert.deepEqual(checkTemplate(src), [], src);
  });

  void test('an unsupported function is reported once, with its position', () => {
    const issues = checkTemplate('{{ .a | sha256sum }}\n{{ .b | sha256sum }}');
    assert.equal(issues.length, 1);
    assert.deepEqual([issues[0]?.kind, issues[0]?.name, issues[0]?.line, issues[0]?.column], ['function', 'sha256sum', 1, 9]);
  });

  void test('actions other than if/else/end and variables are outside the subset', () => {
    assert.deepEqual(kinds('{{ range $k, $v := . }}{{ $k }}{{ end }}'), ['keyword', 'variable']);
    assert.deepEqual(kinds('{{ with .a }}{{ . }}{{ end }}'), ['keyword']);
    assert.deepEqual(kinds('{{ define "x" }}y{{ end }}{{ template "x" }}'), ['keyword', 'keyword']);
    assert.deepEqual(kinds('{{ $ }}'), ['variable']);
  });

  void test('block structure is checked', () => {
    for (const [src, message] of [
      ['{{ if .a }}x', /unexpected EOF/],
      ['x{{ end }}', /unexpected \{\{end\}\}/],
      ['{{ else }}', /unexpected \{\{else\}\}/],
      ['{{ if }}x{{ end }}', /missing value for if/],
      ['{{}}', /missing value for command/],
      ['{{ if .a }}x{{ else .b }}y{{ end }}', /unexpected token after else/],
      ['{{ .a | if }}', /unexpected <if> in command/],
    ] as const) {
      const issues = checkTemplate(src);
      assert.deepEqual(issues.map((i) => i.kind), ['syntax'], src);
      assert.match(issues[0]?.message ?? '', message, src);
    }
  });

  void test('syntax errors name line and column', () => {
    assert.match(checkTemplate('line one\nline two {{ "open }}')[0]?.message ?? '', /^template syntax error at line 2, column 13: unterminated quoted string$/);
  });
});

void describe('the subset', () => {
  void test('is small, has no duplicates and covers ESO\'s encodings; env access stays out (ESO removes it too)', () => {
    assert.equal(new Set(SUPPORTED_TEMPLATE_FUNCTIONS).size, SUPPORTED_TEMPLATE_FUNCTIONS.length);
    assert.ok(SUPPORTED_TEMPLATE_FUNCTIONS.length < 60);
    for (const f of ['b64enc', 'b64dec', 'toJson', 'fromJson', 'toString', 'printf', 'index']) assert.ok(isSupportedTemplateFunction(f), f);
    for (const f of ['env', 'expandenv', 'pkcs12key', 'rsaDecrypt', 'genPrivateKey']) assert.ok(!isSupportedTemplateFunction(f), f);
  });
});
