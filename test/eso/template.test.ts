// Admission's template check (eso/template.ts checkTemplate): the controller's parser, so what
// admission admits the controller renders, and what it refuses names the reason.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkTemplate } from '../../eso/template.ts';
import { lexTemplate } from '../../golang/template/lex.ts';
import {
  REFUSED_TEMPLATE_FUNCTIONS,
  SUPPORTED_TEMPLATE_FUNCTIONS,
  isSupportedTemplateFunction,
} from '../../eso/function-map.ts';

const kinds = (src: string) => checkTemplate(src).map((i) => i.kind);

void describe("lexTemplate (Go's lex.go)", () => {
  void test('applies {{- -}} trimming and drops comments as Go does', () => {
    const items = lexTemplate('a \n {{- .user -}} \n b{{/* c */}}');
    assert.deepEqual(
      items.map((t) => [t.typ, t.val]),
      [
        ['text', 'a'],
        ['leftDelim', '{{'],
        ['field', '.user'],
        ['rightDelim', '}}'],
        ['text', 'b'],
        ['eof', ''],
      ],
    );
  });
  void test("errors carry Go's wording", () => {
    const last = (src: string) => lexTemplate(src).at(-1);
    assert.equal(last('ab{{ "x }}')?.val, 'unterminated quoted string');
    assert.equal(last('{{ .a')?.val, 'unclosed action');
    assert.equal(last('{{/* open')?.val, 'unclosed comment');
    assert.equal(last('{{ .a ) }}')?.val, 'unexpected right paren');
    assert.equal(last('{{ (.a }}')?.val, 'unclosed left paren');
  });
});

void describe('checkTemplate', () => {
  void test('templates ESO users write every day are admitted, range/with/variables/define included', () => {
    for (const src of [
      '{{ .password }}',
      '{{ .password | b64dec }}',
      '{"auths":{"{{ .registry }}":{"auth":"{{ printf "%s:%s" .user .pass | b64enc }}"}}}',
      '{{ range $k, $v := . }}{{ $k }}={{ $v }}\n{{ end }}',
      '{{ with .config | fromJson }}{{ .user | default "admin" | quote }}{{ end }}',
      '{{ define "dsn" }}postgres://{{ .user }}@{{ .host }}{{ end }}{{ template "dsn" . }}',
      '{{ if and .a (not .b) }}x{{ else if eq .c "y" }}y{{ else }}z{{ end }}',
      '{{ .cert | filterPEM "CERTIFICATE" }}',
      '{{ dict "a" .user | toYaml }}',
      '{{ range $i, $e := list 1 2 }}{{ if eq $i 1 }}{{ break }}{{ end }}{{ end }}',
    ])
      assert.deepEqual(checkTemplate(src), [], src);
  });

  void test('a refused function is named once with its reason', () => {
    const issues = checkTemplate('{{ now }}{{ now | date "2006" }}{{ getHostByName "x" }}');
    assert.deepEqual(
      issues.map((i) => i.name),
      ['now', 'getHostByName'],
    );
    assert.match(issues[0]!.message, /"now" is not supported by vaultgate: its output changes on every render/);
    assert.match(issues[1]!.message, /DNS lookup/);
  });

  void test("unknown functions and Go syntax errors are refused with Go's words and the line", () => {
    for (const [src, message] of [
      ['{{ env "HOME" }}', /line 1: function "env" not defined/],
      ['{{ getSecretKey "a" "b" }}', /function "getSecretKey" not defined/],
      ['a\n{{ if .a }}x', /line 2: unexpected EOF/],
      ['x{{ end }}', /unexpected \{\{end\}\}/],
      ['{{ if }}x{{ end }}', /missing value for if/],
      ['{{}}', /missing value for command/],
      ['{{ break }}', /\{\{break\}\} outside \{\{range\}\}/],
      ['{{ $x }}', /undefined variable "\$x"/],
      ['{{ .a | "x" }}', /non executable command in pipeline stage 2/],
      ['{{ define "a" }}1{{ end }}{{ define "a" }}2{{ end }}', /multiple definition of template "a"/],
    ] as const) {
      const issues = checkTemplate(src);
      assert.deepEqual(kinds(src), ['syntax'], src);
      assert.match(issues[0]?.message ?? '', message, src);
    }
  });

  void test('a syntax error never quotes a string literal (it may be a secret)', () => {
    const issues = checkTemplate('{{ "s3cr3t-literal" | "s3cr3t-literal" }}{{ if `s3cr3t-literal` }}');
    assert.equal(issues.length, 1);
    assert.ok(!issues[0]!.message.includes('s3cr3t'), issues[0]!.message);
  });
});

void describe('the function list', () => {
  void test("covers ESO's engine; env stays out (ESO removes it) and every refusal has a reason", () => {
    assert.equal(new Set(SUPPORTED_TEMPLATE_FUNCTIONS).size, SUPPORTED_TEMPLATE_FUNCTIONS.length);
    assert.ok(SUPPORTED_TEMPLATE_FUNCTIONS.length > 180, String(SUPPORTED_TEMPLATE_FUNCTIONS.length));
    for (const f of [
      'b64enc',
      'toJson',
      'fromYaml',
      'toYaml',
      'filterPEM',
      'filterCertChain',
      'jwkPublicKeyPem',
      'dig',
      'merge',
      'regexReplaceAll',
      'range' === 'range' ? 'index' : 'x',
    ])
      assert.ok(isSupportedTemplateFunction(f), f);
    for (const f of ['env', 'expandenv', 'now', 'getHostByName', 'genPrivateKey'])
      assert.ok(!isSupportedTemplateFunction(f), f);
    for (const [f, why] of REFUSED_TEMPLATE_FUNCTIONS) assert.ok(why.length > 20 && !isSupportedTemplateFunction(f), f);
  });
});
