// The differential corpus: templates run through vaultgate's engine and through Go's own text/template
// with ESO's function map (the Go oracle), which must agree on output bytes and on the error class.
// Three parts: hand-written cases for the grammar and for quirks users meet (number printing, toYaml,
// argument checks), every supported function called with arguments of every Go type (generated), and
// templates generated from a small grammar with a fixed seed (the same corpus on every run).
import { SUPPORTED_TEMPLATE_FUNCTIONS } from '../../eso/function-map.ts';
import { formatGoTime } from '../../golang/time.ts';
import { GoTime } from '../../golang/values.ts';

export const CANARY = 'canary-Hx7Qp2Lm9';

/** ESO's data: map[string]string of the secret's keys (binary values included). */
export const DATA: Record<string, string> = {
  user: 'admin', password: CANARY, host: 'db.example:5432', empty: '', num: '42', float: '1.50', neg: '-7',
  json: '{"a":{"b":[1,2.5,"x",null,true]},"n":1234567,"big":1e21,"small":0.000001,"s":"<&>"}',
  yaml: 'a: 1\nb: [x, y]\nc: {d: true}\n', list: 'a,b,,c', spaced: '  padded text \n', unicode: 'héllo wörld ✓', html: '<a href="x">&</a>',
  pem: '', 'dash-key': 'v', b64: Buffer.from('hello world').toString('base64'),
  // Sprig's encryptAES "secretkey" "plaintext-7Hk", made once by the Go oracle (encryptAES draws a random IV).
  aes: 'KdtGIQVLAXWcYvTRhJ7vW4QTm1AjAg56/eAL+Q23Q/E=',
};
/** A value that is not valid UTF-8 (a binary secret): bytes must come out as they went in. */
export const BINARY_B64: Record<string, string> = { bin: Buffer.from([0xff, 0x00, 0xc3, 0x28, 0x41, 0xe2, 0x82]).toString('base64') };

export const HAND_CASES: string[] = [
  // text, actions, trimming, comments
  'plain', '{{ .user }}', 'a {{- .user -}} b', 'a\n  {{- .user }}\n', '{{/* c */}}x', 'x {{- /* c */ -}} y', '{{- 3 }}', '{{-3}}', '{{ 3 -}} ', '{{ "a" }}{{ `b\\n` }}',
  '{{ .missing }}', '{{ index . "missing" }}', '{{ index . "dash-key" }}', '{{ .user.x }}', '{{ $.user }}', '{{ . }}', '{{ printf "%v" . }}',
  // numbers as Go prints them
  '{{ 1 }} {{ 1.0 }} {{ 1e6 }} {{ 1234567.0 }} {{ 100000.0 }} {{ 0.0001 }} {{ 0.00001 }} {{ -0.0 }} {{ 0x1F }} {{ 0o17 }} {{ 017 }} {{ 0b101 }} {{ 1_000 }} {{ \'a\' }}',
  '{{ (fromJson .json).n }} {{ (fromJson .json).big }} {{ (fromJson .json).small }} {{ (fromJson .json).a }}', '{{ fromJson .json }}',
  '{{ 9223372036854775807 }}', '{{ 9223372036854775808 }}', '{{ 1e400 }}', '{{ 0x1p-2 }}', '{{ 1i }}',
  // pipelines, variables, control
  '{{ .user | printf "%s-%s" "x" }}', '{{ $x := 1 }}{{ $x }}', '{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}', '{{ $x }}', '{{ $x = 1 }}',
  '{{ if .user }}y{{ else }}n{{ end }}', '{{ if .empty }}y{{ else if .user }}z{{ end }}', '{{ with .user }}[{{ . }}]{{ else }}none{{ end }}', '{{ with .empty }}x{{ else with .user }}{{ . }}{{ end }}',
  '{{ range $k, $v := . }}{{ $k }}={{ len $v }};{{ end }}', '{{ range . }}{{ . | len }}{{ end }}', '{{ range $i, $e := splitList "," .list }}{{ $i }}:{{ $e }} {{ end }}',
  '{{ range 3 }}{{ . }}{{ end }}', '{{ range $i, $e := 3 }}{{ end }}', '{{ range list }}x{{ else }}empty{{ end }}', '{{ range .user }}{{ end }}',
  '{{ range list 1 2 3 4 }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ if eq . 4 }}{{ break }}{{ end }}{{ . }}{{ end }}', '{{ break }}', '{{ if true }}{{ continue }}{{ end }}',
  '{{ range $x := list 1 2 }}{{ $x }}{{ end }}{{ $x }}', '{{ range $i, $e, $f := list 1 }}{{ end }}',
  '{{ define "t" }}[{{ . }}]{{ end }}{{ template "t" .user }}', '{{ template "nope" }}', '{{ block "b" .user }}<{{ . }}>{{ end }}', '{{ define "x" }}a{{ end }}{{ define "x" }}b{{ end }}',
  '{{ define "r" }}{{ if . }}{{ . }}{{ template "r" (rest .) }}{{ end }}{{ end }}{{ template "r" (list 1 2 3) }}', '{{ define "template" }}x{{ end }}',
  '{{ and .user .empty }}|{{ or .empty .user }}|{{ and }}|{{ or .empty }}|{{ not .user }}', '{{ .user | and .empty }}',
  '{{ (.user) }}', '{{ (fromJson .json).a.b }}', '{{ ((fromJson .json).a).b }}', '{{ nil }}', '{{ . "x" }}', '{{ .user "x" }}', '{{ "x" | . }}', '{{ .user | "x" }}',
  // syntax errors
  '{{', '{{ .user', '{{ if .user }}', '{{ end }}', '{{ else }}', '{{ if }}{{ end }}', '{{}}', '{{ .user | }}', '{{ ( .user }}', '{{ .user ) }}', '{{ "unterminated }}',
  '{{ nosuchfunc }}', '{{ env "HOME" }}', '{{ 12abc }}', '{{ .a.b.c.d }}', '{{ $ }}', '{{ $.user.x }}', '{{ @ }}', '{{ 1 2 }}', '{{ .user.1 }}', '{{ "a".x }}',
  // argument count and types, as Go checks them
  '{{ printf }}', '{{ toJson }}', '{{ upper }}', '{{ upper 1 }}', '{{ upper .user .user }}', '{{ repeat "2" "x" }}', '{{ repeat 2 "x" }}', '{{ trunc (len .user) .user }}', '{{ substr 1 99 .user }}',
  '{{ indent -1 "x" }}', '{{ ternary 1 2 "true" }}', '{{ ternary 1 2 true }}', '{{ upper nil }}', '{{ index nil 1 }}', '{{ index .user 99 }}', '{{ index .user 1 }}', '{{ index (list 1) 1 }}',
  '{{ index . 1 }}', '{{ keys . }}', '{{ get . "user" }}', '{{ eq 1 "1" }}', '{{ eq 1 1.0 }}', '{{ eq (int64 1) 1 }}', '{{ eq nil nil }}', '{{ lt 1 2.0 }}', '{{ lt "a" "b" }}', '{{ eq (list) (list) }}',
  '{{ len 3 }}', '{{ len nil }}', '{{ not nil }}', '{{ slice .user 1 2 }}', '{{ call .user }}', '{{ html .html }}', '{{ js .html }}', '{{ urlquery .html }}', '{{ print 1 2 "a" 3 nil }}', '{{ println 1 "a" }}',
  // printf verbs
  '{{ printf "%d|%5d|%-5d|%05d|%x|%X|%o|%b|%c|%q|%U" 42 42 42 42 255 255 8 5 65 65 65 }}', '{{ printf "%s|%q|%x|%10s|%-10s|%.2s" .user .user .user .user .user .user }}',
  '{{ printf "%f|%.2f|%e|%g|%G|%8.3f|%v" 3.14159 3.14159 314159.0 0.000012 1e21 3.14159 2.5 }}', '{{ printf "%t|%v|%T|%T|%T" true nil 1 .user (list) }}', '{{ printf "%d" .user }}', '{{ printf "%s" 1 }}',
  '{{ printf "%!" }}', '{{ printf "%z" 1 }}', '{{ printf "%d %d" 1 }}', '{{ printf "x" 1 2 }}', '{{ printf "%v" (dict "b" 1 "a" (list 1 "x")) }}', '{{ printf "%+v %#v" (dict "a" 1) "x" }}', '{{ printf "%%|%5.1f|%+d|% d" 2.25 3 3 }}',
  // toYaml / toJson as Go prints them
  '{{ toYaml (dict "b" 1 "a" (list 1 2) "c" (dict) "d" (list) "e" nil "f" "yes" "g" "1.5" "h" "multi\\nline\\n" "i" 1.5 "j" 1234567.0 "k" true "l" "") }}',
  '{{ fromJson .json | toYaml }}', '{{ fromYaml .yaml | toJson }}', '{{ fromYaml .yaml | toYaml }}', '{{ fromYaml "- a" }}', '{{ (fromYaml "a: [") | len }}', '{{ toYaml "x: y" }}', '{{ toYaml (list "a: b" "#c" "- d" " e") }}',
  '{{ toJson (dict "s" .html "f" 1.5 "i" 3 "n" nil "l" (list) "e" (dict)) }}', '{{ toRawJson (dict "s" .html) }}', '{{ toPrettyJson (fromJson .json) }}', '{{ toJson .unicode }}', '{{ toJson (list) }}', '{{ toJson . }}',
  // Sprig strings and friends
  '{{ .spaced | trim }}|{{ trimAll " \\n" .spaced }}|{{ .unicode | upper }}|{{ .unicode | title }}|{{ "hello world-foo_bar" | title }}|{{ .user | untitle }}|{{ "Hello World" | swapcase }}',
  '{{ .unicode | nospace }}|{{ "a b\\tc" | nospace }}|{{ "hello big world" | initials }}|{{ abbrev 5 "hello world" }}|{{ abbrevboth 5 10 "1234 5678 9123" }}', '{{ .unicode | trunc 3 }}|{{ .unicode | substr 0 3 }}',
  '{{ quote .user 1 nil }}|{{ squote .user 1 nil }}|{{ cat .user 1 nil "x" }}|{{ .unicode | quote }}|{{ "a\\tb" | quote }}', '{{ "a\\nb" | indent 2 }}|{{ "a\\nb" | nindent 2 }}|{{ replace "l" "L" "hello" }}|{{ replace "" "-" "ab" }}',
  '{{ plural "one" "many" 2 }}|{{ sha1sum .user }}|{{ sha256sum .user }}|{{ adler32sum .user }}|{{ toString 1.5 }}|{{ atoi "42" }}|{{ atoi "x" }}|{{ int "0x1F" }}|{{ int "1.00" }}|{{ int64 "7" }}|{{ float64 "1.5" }}|{{ int 3.9 }}',
  '{{ split "," .list }}|{{ splitList "," .list }}|{{ splitn "," 2 .list }}|{{ splitList "" "abc" }}|{{ toStrings (list 1 nil "a") }}|{{ join "-" (list 1 nil "a") }}|{{ join "," .user }}|{{ sortAlpha (list "b" "a" 1) }}',
  '{{ until 3 }}|{{ until -2 }}|{{ untilStep 0 10 3 }}|{{ seq 3 }}|{{ seq 2 5 }}|{{ seq 5 -1 2 }}|{{ seq 0 }}', '{{ add 1 2 "3" }}|{{ sub 5 2 }}|{{ mul 2 3 4 }}|{{ div 7 2 }}|{{ mod 7 3 }}|{{ add1 1 }}|{{ max 1 5 3 }}|{{ min 4 2 }}|{{ biggest 1 9 }}',
  '{{ div 1 0 }}', '{{ addf 1.1 2.2 }}|{{ subf 1 0.3 }}|{{ mulf 1.1 3 }}|{{ divf 10 3 }}|{{ add1f 1.5 }}|{{ maxf 1 2.5 }}|{{ minf 1 2.5 }}|{{ ceil 1.2 }}|{{ floor 1.8 }}|{{ round 3.14159 2 }}|{{ round 2.5 0 }}|{{ toDecimal "0777" }}',
  '{{ default "d" .empty }}|{{ default "d" .user }}|{{ default "d" }}|{{ empty .empty }}|{{ empty 0 }}|{{ empty (dict) }}|{{ coalesce .empty 0 "x" }}|{{ all 1 "a" }}|{{ any 0 "" }}|{{ ternary "y" "n" (eq .user "admin") }}',
  '{{ b64enc .user }}|{{ b64dec .b64 }}|{{ b64dec "!!" }}|{{ b64dec "aGk" }}|{{ b32enc .user }}|{{ b32dec (b32enc .user) }}|{{ b32dec "x" }}',
  '{{ typeOf 1 }}|{{ typeOf 1.5 }}|{{ typeOf .user }}|{{ typeOf . }}|{{ typeOf (list) }}|{{ typeOf (splitList "," "a") }}|{{ typeOf (dict) }}|{{ typeOf (add 1 2) }}|{{ typeOf nil }}|{{ typeOf (until 2) }}|{{ kindOf . }}|{{ kindOf 1.5 }}|{{ kindIs "map" (dict) }}|{{ typeIs "int" 1 }}|{{ typeIsLike "int" 1 }}|{{ deepEqual (list 1) (list 1) }}',
  '{{ base "/a/b.txt" }}|{{ dir "/a/b.txt" }}|{{ clean "a//b/../c/" }}|{{ ext "x.tar.gz" }}|{{ isAbs "/x" }}|{{ osBase "a/b" }}|{{ osDir "a" }}|{{ osClean "" }}|{{ osExt "a" }}|{{ osIsAbs "a" }}',
  // lists and dicts
  '{{ list 1 "a" nil }}|{{ tuple 1 }}|{{ append (list 1) 2 }}|{{ prepend (list 1) 0 }}|{{ first (list 1 2) }}|{{ last (list 1 2) }}|{{ rest (list 1 2 3) }}|{{ initial (list 1 2 3) }}|{{ reverse (list 1 2) }}|{{ uniq (list 1 1 2) }}|{{ without (list 1 2 3) 2 }}|{{ has 2 (list 1 2) }}|{{ compact (list 0 1 "" nil "a") }}|{{ slice (list 1 2 3) 1 }}|{{ concat (list 1) (list 2 3) }}|{{ chunk 2 (list 1 2 3) }}',
  '{{ first nil }}', '{{ first .user }}', '{{ first (list) }}|{{ rest (list) }}|{{ toJson (rest (list)) }}|{{ toJson (list) }}|{{ toJson (slice (list)) }}', '{{ has 1 nil }}', '{{ slice (list 1 2) 3 }}', '{{ chunk 0 (list 1) }}', '{{ concat 1 }}',
  '{{ $d := dict "a" 1 "b" (dict "c" 2) }}{{ get $d "a" }}|{{ get $d "x" }}|{{ hasKey $d "a" }}|{{ set $d "z" 9 }}|{{ unset $d "a" }}|{{ pluck "z" $d (dict "z" 1) }}|{{ keys $d | sortAlpha }}|{{ pick $d "z" }}|{{ omit $d "z" }}|{{ dig "b" "c" "def" $d }}|{{ dig "b" "x" "def" $d }}|{{ values (dict "only" 1) }}',
  '{{ merge (dict "a" 1 "n" (dict "x" 1)) (dict "a" 2 "b" 3 "n" (dict "y" 2)) }}|{{ mergeOverwrite (dict "a" 1 "e" "") (dict "a" 2 "e" "f") }}|{{ merge (dict "e" "") (dict "e" "x") }}|{{ dict "odd" }}|{{ dict 1 2 }}|{{ deepCopy (dict "a" (list 1)) }}',
  '{{ set nil "a" 1 }}', '{{ get nil "a" }}', '{{ dig "a" "b" }}', '{{ dig "a" "d" . }}',
  // regular expressions
  '{{ regexMatch "^a" .user }}|{{ regexFind "[0-9]+" .host }}|{{ regexFindAll "[a-z]" .user 2 }}|{{ regexFindAll "x*" "axxb" -1 }}|{{ regexReplaceAll "(d)" .user "<$1>" }}|{{ regexReplaceAllLiteral "(d)" .user "$1" }}|{{ regexSplit ":" .host -1 }}|{{ regexSplit "x*" "axb" -1 }}|{{ regexQuoteMeta "a.b*c" }}',
  '{{ regexMatch "(" "x" }}', '{{ mustRegexMatch "(" "x" }}', '{{ regexFind "(" "x" }}', '{{ regexSplit "," "a,b" 0 | toJson }}', '{{ regexReplaceAll "a*" "baaac" "-" }}',
  // urls, dates without the clock, ESO's own
  '{{ urlParse "https://u:p@example.com:8443/a/b?x=1#frag" | toJson }}', '{{ urlJoin (dict "scheme" "https" "host" "h" "path" "/p" "query" "q=1") }}', '{{ urlParse "mailto:x@y" | toJson }}',
  '{{ date "2006-01-02 15:04:05 MST" 1700000000 }}|{{ dateInZone "Jan 2 2006 3:04PM -07:00" 1700000000 "America/New_York" }}|{{ htmlDate 0 }}|{{ duration "95" }}|{{ duration (int64 3600) }}|{{ durationRound "2h30m" }}|{{ durationRound "36h" }}',
  '{{ decryptAES "secretkey" .aes }}', '{{ decryptAES "wrongkey" .aes | len }}', '{{ decryptAES "k" "" }}', '{{ decryptAES "k" "!!" }}', '{{ decryptAES "k" "YWJj" }}', '{{ decryptAES "k" (b64enc "0123456789abcdef0123") }}',
  '{{ decryptAES "k" (b64enc "0123456789abcdef0123456789abcdef") }}', '{{ decryptAES .password .b64 }}', '{{ decryptAES "a-very-long-password-longer-than-32-bytes!" (b64enc "0123456789abcdef0123456789abcdef") }}',
  '{{ filterPEM "CERTIFICATE" .pem }}', '{{ filterPEM "CERTIFICATE" "junk" }}', '{{ jwkPublicKeyPem "{}" }}', '{{ hello }}', '{{ fail "stop" }}',
];

/** Arguments of every Go type a template can produce (the secret among them). */
const VALUES = ['"x"', '""', '"3"', '1', '0', '-1', '2.5', 'true', 'nil', '.user', '.password', '.empty', '(list 1 "a")', '(list)', '(dict "k" "v")', '.', '(splitList "," "a,b")', '(fromJson .json)', '(int64 2)'];
/** Functions whose result depends on Go's random map order when a map has several keys. */
const MAP_ORDER = new Set(['keys', 'values']);
/** Functions that mutate their argument: fine for Go, but a shared literal argument makes no difference here. */
const SKIP_GENERATED = new Set([...MAP_ORDER, 'fail', 'call', 'dig']);

/** Every supported function with 0–2 arguments drawn from VALUES (plus a piped form). */
export function generatedCalls(): string[] {
  const out: string[] = [];
  for (const fn of SUPPORTED_TEMPLATE_FUNCTIONS) {
    if (SKIP_GENERATED.has(fn)) continue;
    out.push(`{{ ${fn} }}`);
    for (const a of VALUES) {
      out.push(`{{ ${fn} ${a} }}`);
      out.push(`{{ ${a} | ${fn} }}`);
    }
    for (const [i, a] of VALUES.entries()) {
      for (const b of VALUES.slice(i % 3, VALUES.length).filter((_, j) => (j + i) % 3 === 0)) out.push(`{{ ${fn} ${a} ${b} }}`);
    }
    out.push(`{{ ${fn} 1 "x" "y" }}`, `{{ ${fn} "x" 1 "y" }}`, `{{ ${fn} 2 1 "hello" }}`);
  }
  return out;
}

/** A deterministic pseudo-random generator (mulberry32), so the grammar corpus is the same on every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Templates from a small grammar: nested control structures, pipelines, variables, trim markers. */
export function grammarCorpus(count: number, seed = 13): string[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const fns = ['upper', 'lower', 'trim', 'quote', 'len', 'b64enc', 'toJson', 'printf "%v"', 'default "d"', 'trunc 3', 'title', 'toString', 'not', 'typeOf', 'first', 'sha1sum'];
  const operands = ['.user', '.empty', '.num', '$', '.', '$v', '$k', '"lit"', '1', '2.5', 'nil', 'true', '(list 1 2)', '(dict "a" .user)', '(fromJson .json).a', '.missing', '(index . "dash-key")'];
  const pipeline = (depth: number): string => {
    let p = pick(operands);
    if (depth > 0 && r() < 0.3) p = `(${pipeline(depth - 1)})`;
    const n = Math.floor(r() * 3);
    for (let i = 0; i < n; i++) p += ` | ${pick(fns)}`;
    if (r() < 0.2) p = `${pick(['eq', 'ne', 'lt', 'and', 'or'])} ${p} ${pick(operands)}`;
    return p;
  };
  const trimL = (): string => (r() < 0.2 ? '{{- ' : '{{ ');
  const trimR = (): string => (r() < 0.2 ? ' -}}' : ' }}');
  const block = (depth: number, inRange: boolean): string => {
    const parts: string[] = [];
    const n = 1 + Math.floor(r() * 3);
    for (let i = 0; i < n; i++) {
      const k = r();
      if (depth > 0 && k < 0.15) parts.push(`${trimL()}if ${pipeline(1)}${trimR()}${block(depth - 1, inRange)}${r() < 0.5 ? `{{ else }}${block(depth - 1, inRange)}` : ''}{{ end }}`);
      else if (depth > 0 && k < 0.3) parts.push(`{{ range $k, $v := ${pick(['.', '(list 1 "a" nil)', '(dict "x" 1 "y" .user)', '2', '.user', '(splitList "," .list)'])} }}${block(depth - 1, true)}{{ else }}none{{ end }}`);
      else if (depth > 0 && k < 0.4) parts.push(`{{ with ${pipeline(1)} }}${block(depth - 1, inRange)}{{ end }}`);
      else if (k < 0.5) parts.push(`{{ $v := ${pipeline(1)} }}`);
      else if (inRange && k < 0.55) parts.push(pick(['{{ break }}', '{{ continue }}']));
      else if (k < 0.7) parts.push(pick([' text ', '\n', '  ', 'x']));
      else parts.push(`${trimL()}${pipeline(2)}${trimR()}`);
    }
    return parts.join('');
  };
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(`{{ $k := "k0" }}{{ $v := .user }}${block(3, false)}`);
  return out;
}

/** A Go template string literal for a JS string: bytes ≥ 0x80 of `bytes` as \xNN, text as UTF-8. */
const lit = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n').replace(/\t/g, '\\t')}"`;

/** Inputs for xstrings' case functions: its own samples, connectors, numbers, punctuation, Unicode, bad UTF-8. */
const CASE_INPUTS = [
  '', '_', '__', '-', ' ', '  ', '_-_', 'a', 'A', 'aB', 'Ab', 'AB', 'ABc', 'aBC', 'FirstName', 'HTTPServer', 'NoHTTPS', 'GO_PATH', 'GO PATH', 'GO-PATH',
  'http2xx', 'HTTP20xOK', 'Duration2m3s', 'Bld4Floor3rd', 'some_words', 'http_server', 'no_https', '_complex__case_', 'some words', 'GOLANG_IS_GREAT',
  'a-b_c d', '  leading', 'trailing  ', 'with  double  spaces', '--dashes--', 'a__b', 'camelCaseString', 'PascalCaseString', 'snake_case_string', 'kebab-case-string',
  'abc123def', '123abc', 'ABC123', 'a1B2c3', '1_2-3 4', 'x.y.z', 'foo.Bar', 'foo!!bar', '$var', '@Home', 'a+b=c', 'v1.2.3', 'IPv4Address', 'userID', 'ID', 'iOS',
  'a\tb\nc', '\u00a0nbsp', 'em\u2003space', 'héllo wörld ✓', 'ÉCOLE_Normale', 'İstanbul', 'straße', 'ǅungla', 'ΣΑΣ σας', 'ᾳ', 'ﬀoo', 'Ⅻroman', '½half', 'x²y',
  '中文Title', 'Title中文', '日本語テキスト', 'emoji😀Face', 'Ωmega_Δelta', 'ÀÉÎ', 'àéî_ÀÉÎ',
];
/** Inputs with bytes that are not UTF-8 (template escapes, written as such). */
const CASE_BYTES = ['"\\xff"', '"a\\xffb"', '"\\xffA"', '"A\\xff"', '"ab\\xff\\xfe"', '"\\xef\\xbf\\xbd"', '"a\\xef\\xbf\\xbdB"', '"_\\xff_"', '"HTTP\\xffServer"', '"1\\xff2"', '"-\\xff"', '"\\xff-"', '"\\xc3"'];
const CASE_DATA = ['.user', '.unicode', '.bin', '.empty', '.spaced', '.json', '.host', '.list', '.html', '.password', '.dash-key'];

const WRAP_TEXTS = [
  '', 'a', ' ', '   ', 'hello world', '  lead', 'trail  ', 'a b c d e', 'supercalifragilistic word', 'one two three four five six', 'http://example.com/a/very/long/url and more',
  'word  double  spaces', 'héllo wörld ✓ ü', 'x\ny z', 'ab cd', 'abcdef ghij', ' a', 'a ', 'averyveryverylongword', 'short then averyveryverylongword then short',
];

/** Cases for the functions rendered last (per function, so the test can count them). */
export const LATEST_FUNCTION_CASES: Record<string, string[]> = (() => {
  const out: Record<string, string[]> = {};
  for (const fn of ['snakecase', 'camelcase', 'kebabcase']) {
    out[fn] = [
      ...CASE_INPUTS.map((s) => `{{ ${fn} ${lit(s)} }}`), ...CASE_BYTES.map((s) => `{{ ${fn} ${s} | printf "%q" }}`), ...CASE_DATA.map((d) => `{{ ${fn} ${d} }}`),
      `{{ ${lit('Some Mixed_input-here')} | ${fn} }}`, `{{ ${fn} }}`, `{{ ${fn} 1 }}`, `{{ ${fn} nil }}`, `{{ ${fn} "a" "b" }}`, `{{ ${fn} (list "a") }}`, `{{ ${fn} .missing }}`,
      `{{ ${fn} (${fn} "HelloWorld_again") }}`, `{{ typeOf (${fn} "x") }}`,
    ];
  }
  const widths = [-1, 0, 1, 2, 3, 5, 10, 80];
  out.wrap = [
    ...WRAP_TEXTS.flatMap((s) => widths.map((w) => `{{ wrap ${w} ${lit(s)} | printf "%q" }}`)),
    ...CASE_DATA.map((d) => `{{ wrap 4 ${d} | printf "%q" }}`), '{{ "hello big world" | wrap 5 }}', '{{ wrap 3 "\\xff\\xfe \\xfd" | printf "%q" }}',
    '{{ wrap }}', '{{ wrap 3 }}', '{{ wrap "3" "x" }}', '{{ wrap 3 1 }}', '{{ wrap 3 nil }}', '{{ wrap 2.5 "a b" }}', '{{ wrap (int64 3) "a b" }}', '{{ wrap 3 "a" "b" }}', '{{ wrap -9223372036854775808 "a b" }}',
  ];
  const seps = ['', '<br>', '\n', '|', '✓', '  '];
  out.wrapWith = [
    ...WRAP_TEXTS.flatMap((s, i) => widths.map((w, j) => `{{ wrapWith ${w} ${lit(seps[(i + j) % seps.length]!)} ${lit(s)} | printf "%q" }}`)),
    ...CASE_DATA.map((d) => `{{ wrapWith 3 "|" ${d} | printf "%q" }}`), '{{ "hello big world" | wrapWith 5 "<br>" }}', '{{ wrapWith 2 "\\xff" "abcdef" | printf "%q" }}',
    '{{ wrapWith }}', '{{ wrapWith 3 "x" }}', '{{ wrapWith "3" "x" "y" }}', '{{ wrapWith 3 1 "y" }}', '{{ wrapWith 3 "x" nil }}', '{{ wrapWith 3 nil "y" }}', '{{ wrapWith 3 "-" "a" "b" }}',
  ];
  const constraints = [
    '', ' ', '1.2.3', '=1.2.3', 'v1.2.3', '!=1.2.3', '>1.2.3', '<1.2.3', '>=1.2.3', '=>1.2.3', '<=1.2.3', '=<1.2.3', '~1.2.3', '~>1.2.3', '^1.2.3', '1.x', '1.2.x', '*', 'x', 'X', '1.*', '1.X',
    '~1', '~1.2', '~0', '~0.0', '~0.0.0', '^0.2.3', '^0.0.3', '^0', '^0.0', '^0.x', '^1.x', '^0.0.0', '^v1.2.3', '>1.x', '>1.2.x', '<=1.x', '<=1.2.x', '!=1.x', '!=1.2.x', '!=0.0.0', '!=1.2.3-beta',
    '>=1.2.3-alpha', '<1.2.3-beta.2', '>1.2.3-beta+meta', '~1.2.3-beta', '1.2.3+meta', '<1.0.0-0', '>=0.0.0-0', '1.2 - 1.4.5', '1.2.3 - 2.3.4', '1.0 - ', '- 1.0', '1.0 -2.0', '1.0- 2.0', '1 - 2 - 3',
    '>= 1.2, < 3.0.0 || >= 4.2.3', '>=1.1 <2', '>=1.1,<2', '>=1.1 , <2', '>=1.1, ,<2', '1.2.3 || 2.x', '^1.2.3 || ~2.1', '||', '1 ||', '>= 1.2.3 || ', 'foo', '>=a', '1.2.3.4', '>== 1', '> =1', '=>1', '~>1.2',
    '1|2', '01.2.3', '1.02.3', 'x.y.z', '1.2.*', '   >=1.0   ', '\t>=1.0\n', '>=1.0\v', '>=1.0.0 <=1.0.0', 'v1.x', '1.2.3-', '1.2.3-beta.', '18446744073709551615', '18446744073709551616', '>=1.0.0-rc.1.2 <2',
  ];
  const versions = ['1.2.3', '1.2.4', '1.3.0', '1.2.2', '2.0.0', '0.2.3', '0.2.4', '0.3.0', '0.0.3', '0.0.4', '1.2.3-beta', '1.2.3-alpha', '1.2.3-beta.2', '1.2.3-beta.10', '1.2.3+meta', 'v1.2.3', '1.2', '1', '4.2.3', '3.0.0', '0.0.0', '1.0.0-0', '1.5.0-rc.1', '1.0.0-rc.1.2'];
  const badVersions = ['', 'v', '1.2.3.4', '01.2.3', '1.2.3-', '1.2.3-01', '1.2.3+', 'a.b.c', '1.2.3 ', ' 1.2.3', 'V1.2.3', '18446744073709551616.0.0', '1.2.3-beta..1', '1.2.3-be$ta', '1.2.3+me+ta', '1.2.3-ü', '1.x'];
  out.semverCompare = [
    ...constraints.flatMap((c) => versions.map((v) => `{{ semverCompare "${c}" "${v}" }}`)),
    ...badVersions.flatMap((v) => ['>=1.0', '*', '', 'foo'].map((c) => `{{ semverCompare "${c}" "${v}" }}`)),
    '{{ semverCompare ">=1.0" .num }}', '{{ semverCompare .num "1.0" }}', '{{ semverCompare .user .password }}', '{{ "1.2.3" | semverCompare "^1" }}', '{{ semverCompare }}', '{{ semverCompare "1" }}',
    '{{ semverCompare 1 "1.0" }}', '{{ semverCompare "1" 1 }}', '{{ semverCompare nil "1" }}', '{{ semverCompare "1" "1" "1" }}', '{{ if semverCompare "~1.2" "1.2.9" }}yes{{ else }}no{{ end }}',
  ];
  const sv = ['1.2.3', 'v1.2.3-beta.1+build.5', '0.0.0', 'v2', '1.2', '10.20.30-rc.1', '1.2.3+meta', '18446744073709551615.1.1', ...badVersions.slice(0, 8)];
  out.semver = [
    ...sv.map((v) => `{{ $v := semver "${v}" }}{{ $v }}|{{ $v.Major }}|{{ $v.Minor }}|{{ $v.Patch }}|{{ $v.Prerelease }}|{{ $v.Metadata }}|{{ $v.Original }}|{{ $v.String }}|{{ $v.IncPatch }}|{{ $v.IncMinor }}|{{ $v.IncMajor }}|{{ $v.Value }}`),
    ...sv.slice(0, 8).flatMap((v) => [`{{ ((semver "${v}").SetPrerelease "rc.1").String }}`, `{{ (semver "${v}").SetMetadata "" }}`, `{{ (semver "${v}").IncPatch.IncPatch }}`, `{{ toJson (semver "${v}") }}`, `{{ printf "%v|%s|%q" (semver "${v}") (semver "${v}") (semver "${v}") }}`]),
    ...[['1.2.3', '1.2.4'], ['1.2.3', '1.2.3'], ['1.2.3-beta', '1.2.3'], ['1.2.3-beta.2', '1.2.3-beta.10'], ['1.2.3-alpha', '1.2.3-beta'], ['1.2.3+a', '1.2.3+b'], ['2.0.0', '1.9.9'], ['1.0.0-1', '1.0.0-a'], ['1.0.0-a.1', '1.0.0-a']]
      .map(([a, b]) => `{{ $a := semver "${a}" }}{{ $b := semver "${b}" }}{{ $a.LessThan $b }}|{{ $a.LessThanEqual $b }}|{{ $a.GreaterThan $b }}|{{ $a.GreaterThanEqual $b }}|{{ $a.Equal $b }}|{{ $a.Compare $b }}|{{ $b.Compare $a }}|{{ deepEqual $a $b }}|{{ eq $a $a }}|{{ eq $a $b }}|{{ eq $a.IncMajor $b.IncMajor }}`),
    '{{ semver "1.0" | typeOf }}|{{ kindOf (semver "1.0") }}|{{ typeIsLike "semver.Version" (semver "1.0") }}|{{ typeOf (semver "1.0").IncMajor }}|{{ kindOf (semver "1.0").IncMajor }}|{{ printf "%T" (semver "1") }}',
    '{{ toYaml (semver "1.0") }}', '{{ toYaml (list "1.0.0" "1." ".5" "1.5" "_1" "1_0.5" "1.2.3" "-.5" "+1.5e3" ".5e" "1e5" ".1.2" "1.e5" (semver "2.0").IncMinor) }}', '{{ toJson (list (semver "1.0") (dict "v" (semver "2.0-rc.1"))) }}', '{{ toJson (semver "1.0").IncMajor }}', '{{ toString (semver "1.0") }}|{{ quote (semver "1.0") }}|{{ cat (semver "1.0") "x" }}',
    '{{ empty (semver "0.0.0") }}|{{ if semver "0.0.0" }}t{{ end }}|{{ default "d" (semver "1.0") }}', '{{ (semver "1.2.3").Major | add1 }}|{{ add (semver "1.2.3").Minor 1 }}|{{ eq (semver "1.2.3").Major 1 }}',
    '{{ deepEqual (semver "1.0") (semver "1.0.0") }}|{{ deepEqual (semver "1.0") (semver "1.0") }}|{{ eq (semver "1.0") (semver "1.0") }}|{{ eq (semver "1.0").IncMajor (semver "1.0").IncMajor }}',
    '{{ (semver "1.0").Equal nil }}', '{{ (semver "1.0").LessThan nil }}', '{{ (semver "1.0").Compare nil }}', '{{ (semver "1.0").LessThan }}', '{{ (semver "1.0").LessThan "1.0" }}', '{{ (semver "1.0").LessThan (semver "1.0").IncMajor }}',
    '{{ (semver "1.0").Major 1 }}', '{{ (semver "1.0").Nope }}', '{{ (semver "1.0").major }}', '{{ (semver "1.0").SetPrerelease "01" }}', '{{ (semver "1.0").SetPrerelease "a..b" }}', '{{ (semver "1.0").SetMetadata "a$" }}', '{{ (semver "1.0").SetPrerelease 1 }}',
    '{{ (semver "1.0").MarshalJSON }}', '{{ (semver "1.0").MarshalText }}', '{{ (semver "1.0").IncMajor.Original }}', '{{ (semver "1.0").IncMajor.LessThan (semver "2.0") }}', '{{ $v := semver "1.5.0" }}{{ if $v.GreaterThan (semver "1.2") }}newer{{ end }}',
    '{{ semver }}', '{{ semver 1 }}', '{{ semver nil }}', '{{ semver "1" "2" }}', '{{ semver .num }}', '{{ semver .password }}', '{{ .num | semver }}', '{{ (semver .num).Major }}', '{{ semver (list 1) }}', '{{ len (semver "1.0") }}', '{{ index (semver "1.0") 0 }}',
  ];
  // toDate / mustToDate: Go's layouts and custom ones, values formatted from sample times, then broken.
  const layouts = [
    'Mon Jan _2 15:04:05 2006', 'Mon Jan _2 15:04:05 MST 2006', 'Mon Jan 02 15:04:05 -0700 2006', '02 Jan 06 15:04 MST', '02 Jan 06 15:04 -0700', 'Monday, 02-Jan-06 15:04:05 MST',
    'Mon, 02 Jan 2006 15:04:05 MST', 'Mon, 02 Jan 2006 15:04:05 -0700', '2006-01-02T15:04:05Z07:00', '2006-01-02T15:04:05.999999999Z07:00', '3:04PM', 'Jan _2 15:04:05', 'Jan _2 15:04:05.000',
    'Jan _2 15:04:05.000000', 'Jan _2 15:04:05.000000000', '2006-01-02 15:04:05', '2006-01-02', '15:04:05', '2006-01-02 15:04:05.000', '02/01/06', '1/2/2006 3:04:05 PM', 'Monday, January 2, 2006',
    '2006-002', '2006 __2 15h', 'Z0700', '-07', '-070000', '-07:00:00', 'Z07', 'Z070000', 'Z07:00:00', '2006-01-02T15:04:05,000', '15:04:05.999', '3pm', 'Jan', 'January 2006', '_2 Jan', '20060102150405',
    '2006-01-02 MST', '06', '060102', '2006-01-02 15:04:05.999999999 -0700 MST', '', 'literal text', '2006-01-02 Z07:00',
  ];
  const at = (iso: string, nanos: number, zone: { name: string; offsetSeconds: number }): GoTime => new GoTime(Date.parse(iso), zone, nanos);
  const samples = [
    at('2024-02-29T13:04:05.123Z', 456789, { name: 'UTC', offsetSeconds: 0 }), at('1999-12-31T18:29:59.000Z', 0, { name: 'IST', offsetSeconds: 19800 }),
    at('2000-01-01T00:00:00.000Z', 0, { name: 'UTC', offsetSeconds: 0 }), at('2068-07-04T12:00:00.000Z', 0, { name: 'GMT', offsetSeconds: 0 }), at('1970-01-01T08:00:00.500Z', 0, { name: 'PST', offsetSeconds: -28800 }),
  ];
  const datesFor = (l: string): string[] => {
    const base = samples.map((t) => formatGoTime(t, l));
    const v = base[0]!;
    return [...new Set([...base, '', v.toLowerCase(), v.toUpperCase(), `${v} `, ` ${v}`, v.slice(0, -1), `${v}x`])];
  };
  out.toDate = [
    ...layouts.flatMap((l) => datesFor(l).map((v) => `{{ toDate ${lit(l)} ${lit(v)} }}`)),
    ...[
      ['2006-01-02', '2023-02-29'], ['2006-01-02', '2024-13-01'], ['2006-01-02', '2024-00-10'], ['2006-01-02', '2024-01-32'], ['2006-01-02', '2024-1-2'], ['2006-1-2', '2024-1-2'], ['15:04:05', '24:00:00'],
      ['15:04:05', '23:60:00'], ['15:04:05', '23:59:60'], ['15:04:05', '1:2:3'], ['3:04:05 PM', '12:00:00 AM'], ['3:04:05 PM', '12:00:00 PM'], ['3:04:05 PM', '13:00:00 PM'], ['3:04:05 pm', '1:00:00 PM'],
      ['2006-002', '2024-060'], ['2006-002', '2023-060'], ['2006-002', '2024-366'], ['2006-002', '2023-366'], ['2006-002', '2024-000'], ['2006-01-002', '2024-03-061'], ['2006-01-002', '2024-02-061'], ['2006-01-02-002', '2024-03-01-061'],
      ['2006-01-02 MST', '2024-01-02 UTC'], ['2006-01-02 MST', '2024-01-02 GMT'], ['2006-01-02 MST', '2024-01-02 GMT+3'], ['2006-01-02 MST', '2024-01-02 GMT-11'], ['2006-01-02 MST', '2024-01-02 GMT+24'],
      ['2006-01-02 MST', '2024-01-02 CEST'], ['2006-01-02 MST', '2024-01-02 ChST'], ['2006-01-02 MST', '2024-01-02 WITA'], ['2006-01-02 MST', '2024-01-02 +05'], ['2006-01-02 MST', '2024-01-02 -0330'],
      ['2006-01-02 MST', '2024-01-02 AB'], ['2006-01-02 MST', '2024-01-02 ABCDEF'], ['2006-01-02 MST', '2024-01-02 ABCDE'], ['2006-01-02 MST', '2024-01-02 Z'], ['2006-01-02 -0700 MST', '2024-01-02 +0100 CET'],
      ['2006-01-02 -0700 MST', '2024-01-02 +0000 UTC'], ['2006-01-02 -0700 MST', '2024-01-02 +0000 GMT'], ['2006-01-02 -0700', '2024-01-02 +0000'], ['2006-01-02 -0700', '2024-01-02 +2500'], ['2006-01-02 -0700', '2024-01-02 +0061'],
      ['2006-01-02 -0700', '2024-01-02 *0100'], ['2006-01-02 -07:00', '2024-01-02 +01-00'], ['2006-01-02 Z07:00', '2024-01-02 Z'], ['2006-01-02 Z07:00', '2024-01-02 z'], ['2006-01-02 -07:00:00', '2024-01-02 +01:30:15'],
      ['2006-01-02T15:04:05Z07:00', '2024-01-02T03:04:05.123456789123Z'], ['2006-01-02T15:04:05Z07:00', '2024-01-02T03:04:05,5+01:00'], ['2006-01-02T15:04:05Z07:00', '2024-01-02T24:04:05Z'], ['2006-01-02T15:04:05Z07:00', '2024-01-02T03:04:05+24:00'],
      ['15:04:05.000', '10:11:12.3'], ['15:04:05.000', '10:11:12,345'], ['15:04:05.000', '10:11:12.3456'], ['15:04:05.999', '10:11:12'], ['15:04:05.999', '10:11:12.'], ['15:04:05', '10:11:12.999999999999'], ['15:04:05.0', '10:11:12.-1'],
      ['06', '69'], ['06', '68'], ['06', '-1'], ['06', '+9'], ['2006', '-123'], ['2006', '+123'], ['2006', '0000'], ['2006', '99999'], ['Jan 2', 'jan 2'], ['Jan 2', 'JANUARY 2'], ['January 2', 'Janu 2'], ['Mon 2', 'Tue 2'], ['Monday 2', 'Tues 2'],
      ['_2', ' 7'], ['_2', '7'], ['_2', '  7'], ['02', '7'], ['__2', '  7'], ['002', '7'], ['Jan_2', 'Jan_2'], ['2006 Janx', '2024 Janx'], ['Janx', 'Janx'], ['Monx', 'Monx'], ['x 2006', 'x  2024'], ['a  b', 'a b'], ['a b', 'a  b'], ['a b', 'ab'],
      ['é 2006', 'é 2024'], ['2006-01-02', '２０２４-01-02'],
    ].map(([l, v]) => `{{ toDate ${lit(l!)} ${lit(v!)} }}`),
    '{{ toDate "2006-01-02" "2024-05-06" | date "Jan 2, 2006 at 3:04pm (MST)" }}', '{{ toDate "2006-01-02 15:04 -0700" "2024-05-06 10:00 +0530" | date "2006-01-02 15:04 -07:00" }}', '{{ toDate "2006-01-02" "2024-05-06" | unixEpoch }}',
    '{{ (toDate "2006-01-02" "2024-05-06").Unix }}', '{{ toDate "2006-01-02" "2024-05-06" | dateModify "-24h" }}', '{{ toDate "2006-01-02" "2024-05-06" | toJson }}', '{{ toDate "2006-01-02 -0700" "2024-05-06 -0130" | toJson }}',
    '{{ toDate "2006-01-02" "x" | toJson }}', '{{ toDate "2006-01-02" "2024-05-06" | toYaml }}', '{{ toDate "15:04 MST" "10:00 XYZ" | toYaml }}', '{{ typeOf (toDate "2006" "2024") }}|{{ kindOf (toDate "2006" "2024") }}', '{{ empty (toDate "2006" "x") }}',
    '{{ eq (toDate "2006" "2024") (toDate "2006" "2024") }}', '{{ eq (toDate "2006 -07" "2024 +01") (toDate "2006 -07" "2024 +01") }}', '{{ toDate "2006-01-02" "2024-05-06" | htmlDate }}', '{{ toDate "2006-01-02" "2024-05-06" | dateInZone "2006-01-02 15:04 MST" "Asia/Tokyo" }}',
    '{{ printf "%v|%s" (toDate "2006" "2024") (toDate "2006" "2024") }}', '{{ toDate .user .password }}', '{{ toDate "2006" .num }}', '{{ .num | toDate "06" }}', '{{ toDate }}', '{{ toDate "2006" }}', '{{ toDate 2006 "2024" }}', '{{ toDate "2006" 2024 }}',
    '{{ toDate nil "2024" }}', '{{ toDate "2006" "2024" "x" }}',
    // time.Time's methods on the result
    ...['2024-03-01 23:04:05.120 -0130', '2023-12-31 00:00:00.000 +0000', '0004-02-29 12:00:00.999 +1400', '1969-12-31 23:59:59.001 -0000', 'bad'].map((v) => `{{ $t := toDate "2006-01-02 15:04:05.000 -0700" "${v}" }}{{ $t.Year }}|{{ $t.Day }}|{{ $t.Hour }}|{{ $t.Minute }}|{{ $t.Second }}|{{ $t.Nanosecond }}|{{ $t.YearDay }}|{{ $t.IsZero }}|{{ $t.String }}|{{ $t.UTC }}|{{ $t.Local }}|{{ $t.Format "Jan 2 15:04:05.999 MST" }}|{{ $t.Unix }}|{{ $t.UnixMilli }}|{{ $t.AddDate 0 1 30 }}|{{ $t.AddDate -1 -2 -31 }}|{{ $t.Equal $t.UTC }}|{{ $t.Before ($t.AddDate 0 0 1) }}|{{ $t.After $t }}`),
    '{{ (toDate "2006" "2024").Format }}', '{{ (toDate "2006" "2024").Format 1 }}', '{{ (toDate "2006" "2024").Year 1 }}', '{{ (toDate "2006" "2024").AddDate 1 }}', '{{ (toDate "2006" "2024").AddDate 1 2 "3" }}', '{{ (toDate "2006" "2024").Equal 1 }}',
    '{{ $t := toDate "2006-01-02" "0001-01-01" }}{{ $t.AddDate -1 0 0 }}|{{ $t.AddDate -2 0 0 | date "06 2006" }}|{{ $t.AddDate -1001 0 0 }}|{{ $t.AddDate -102 0 0 | date "06" }}|{{ $t.AddDate -13 0 0 }}|{{ $t.AddDate -150 0 0 }}',
    '{{ (toDate "2006" "2024").Equal nil }}', '{{ (toDate "2006" "2024").nope }}', '{{ (toDate "2006-01-02" "2024-02-29").AddDate 1 0 0 }}', '{{ ((toDate "2006" "2024") | dateModify "1h").Hour }}', '{{ toDate "2006-01-02" "2024-05-06" | date "2006-01-02" | toDate "2006-01-02" }}',
  ];
  out.mustToDate = [
    ...layouts.slice(0, 24).flatMap((l) => datesFor(l).slice(0, 4).map((v) => `{{ mustToDate ${lit(l)} ${lit(v)} }}`)),
    '{{ mustToDate "2006-01-02" "2023-02-29" }}', '{{ mustToDate "2006-01-02" "2024-02-29" }}', '{{ mustToDate "15:04" "25:00" }}', '{{ mustToDate "2006-01-02" "2024-01-02 extra" }}', '{{ mustToDate "2006-002" "2023-366" }}',
    '{{ mustToDate "2006-01-02 MST" "2024-01-02 GMT+3" | date "15:04 MST" }}', '{{ mustToDate "2006-01-02" "2024-05-06" | unixEpoch }}', '{{ mustToDate "" "" }}', '{{ mustToDate "" "x" }}', '{{ mustToDate .user .password }}',
    '{{ mustToDate }}', '{{ mustToDate "2006" }}', '{{ mustToDate 1 "2024" }}', '{{ mustToDate "2006" nil }}', '{{ "2024" | mustToDate "2006" }}', '{{ typeOf (mustToDate "2006" "2024") }}',
  ];
  // derivePassword: scrypt costs ~0.1 s a call, so a few dozen cases.
  out.derivePassword = [
    ...['maximum', 'long', 'medium', 'short', 'basic', 'pin'].flatMap((t, i) => [`{{ derivePassword ${i} "${t}" "password" "user" "example.com" }}`, `{{ derivePassword 4294967295 "${t}" "pässwörd ✓" "üser" "site" }}`]),
    '{{ derivePassword 1 "long" "" "" "" }}', '{{ derivePassword 0 "long" "password" "user" "example.com" }}', '{{ derivePassword 4294967296 "long" "password" "user" "example.com" }}', '{{ derivePassword 0x10 "pin" "p" "u" "s" }}',
    '{{ derivePassword 1 "long" .password .user .host }}', '{{ derivePassword 2 "long" .password .user .host }}', '{{ derivePassword 1 "long" .password .user .unicode }}', '{{ derivePassword 1 "basic" .bin .bin .bin | printf "%q" }}',
    '{{ derivePassword 1 "nope" "p" "u" "s" }}', '{{ derivePassword 1 "" "p" "u" "s" }}', '{{ derivePassword 1 "Long" "p" "u" "s" }}', '{{ derivePassword 1 "constructor" "p" "u" "s" }}', '{{ "s" | derivePassword 1 "long" "p" "u" }}',
    '{{ derivePassword -1 "pin" "p" "u" "s" }}', '{{ derivePassword 1.5 "pin" "p" "u" "s" }}', '{{ derivePassword "1" "pin" "p" "u" "s" }}', '{{ derivePassword (int64 1) "pin" "p" "u" "s" }}', '{{ derivePassword .num "pin" "p" "u" "s" }}',
    '{{ derivePassword nil "pin" "p" "u" "s" }}', '{{ derivePassword 1 "pin" "p" "u" 1 }}', '{{ derivePassword 1 "pin" "p" "u" }}', '{{ derivePassword 1 "pin" "p" "u" "s" "x" }}', '{{ 1 | derivePassword "pin" "p" "u" "s" }}', '{{ derivePassword }}',
    '{{ len (derivePassword 1 "maximum" "p" "u" "s") }}',
  ];
  return out;
})();
