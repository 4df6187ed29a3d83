// Differential test of vaultgate's regexps (golang/regexp.ts, re2js) against Go's regexp package (the Go
// oracle, test/upstream/go-oracle/): ReplaceAllString (Expand), ReplaceAllLiteralString, MatchString and
// FindString over the corpus of regexp-corpus.ts give the same text, and a pattern Go refuses is
// refused with Go's message. The template functions (regexFind & co.) are also compared on bytes that are
// not UTF-8, which only a template can carry.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { askGo, ensureGoOracle, type OracleAnswer } from '../upstream/go-oracle.ts';
import { parseGoRegexp, replaceAllGo, replaceAllLiteralStringGo } from '../../golang/regexp.ts';
import { goStringMap, renderTemplateBytes } from '../../eso/template.ts';
import { goString } from '../../golang/values.ts';
import { ATTACK_CASES, generatedCases, HAND_CASES, type RegexpCase } from './regexp-corpus.ts';

type Outcome = { output: string } | { error: string };

const text = (goStr: string): string => Buffer.from(goStr, 'latin1').toString('utf8');

/** What vaultgate gives for one case. */
function ours(c: RegexpCase): Outcome {
  const r = parseGoRegexp(c.regexp);
  if (!r.ok) return { error: r.error };
  const re = r.regexp;
  switch (c.kind) {
    case 'regexpMatch':
      return { output: String(re.test(c.input)) };
    case 'regexpFind': {
      const s = goString(c.input);
      const m = re.findAllIndexGo(s, 1)[0];
      return { output: m ? text(s.slice(m[0], m[1])) : '' };
    }
    case 'regexpLiteral':
      return { output: text(replaceAllLiteralStringGo(re, goString(c.input), goString(c.replacement ?? ''))) };
    default:
      return { output: replaceAllGo(re, c.input, c.replacement ?? '') };
  }
}

/**
 * Where vaultgate differs from Go on purpose or by re2js (README, "Regexps"): a capture group name used
 * twice is refused (Go accepts it; RE2 in C++ refuses it, and re2js follows C++).
 */
function documentedDifference(us: Outcome): boolean {
  return 'error' in us && us.error.startsWith('error parsing regexp: duplicate capture group name: ');
}

/** The cases where vaultgate and Go differ, described. */
function differences(cases: readonly RegexpCase[], answers: readonly OracleAnswer[]): string[] {
  const out: string[] = [];
  cases.forEach((c, i) => {
    const go = answers[i]!;
    const us = ours(c);
    if (documentedDifference(us)) return;
    const goText = go.errorClass ? `error ${go.error ?? ''}` : (go.output ?? '');
    const usText = 'error' in us ? `error ${us.error}` : us.output;
    if (goText !== usText)
      out.push(
        `${c.kind} ${JSON.stringify(c.regexp)} on ${JSON.stringify(c.input)}${c.replacement !== undefined ? ` with ${JSON.stringify(c.replacement)}` : ''}\n   go:        ${goText}\n   vaultgate: ${usText}`,
      );
  });
  return out;
}

void describe("vaultgate's regexps are Go's (Go oracle)", () => {
  void before(
    async () => {
      await ensureGoOracle();
    },
    { timeout: 900_000 },
  );

  void test("hand-written cases: Go's syntax, Unicode classes such as \\p{Greek}, empty matches, Expand, Go's errors", async () => {
    const answers = await askGo(HAND_CASES);
    assert.deepEqual(differences(HAND_CASES, answers), []);
    // The one documented difference: Go accepts a capture name used twice.
    const twice = HAND_CASES.findIndex((c) => c.regexp === '(?P<n>a)(?P<n>b)' && c.kind === 'regexpFind');
    assert.equal(answers[twice]!.output, 'ab');
    assert.deepEqual(ours(HAND_CASES[twice]!), { error: 'error parsing regexp: duplicate capture group name: `n`' });
    // The corpus is not only errors, nor only matches.
    const compiled = answers.filter((a) => !a.errorClass).length;
    assert.ok(compiled > 200 && compiled < HAND_CASES.length - 40, `${compiled} of ${HAND_CASES.length} compile in Go`);
    const greek = HAND_CASES.findIndex((c) => c.regexp === '\\p{Greek}+' && c.kind === 'regexpFind');
    assert.equal(answers[greek]!.output, 'αβγ');
  });

  void test("the hostile patterns of regexp-attacks.ts give Go's answers", async () => {
    const answers = await askGo(ATTACK_CASES);
    assert.deepEqual(differences(ATTACK_CASES, answers), []);
  });

  void test("a generated corpus (fixed seed): same text, same refusals with Go's message", async () => {
    const cases = generatedCases(6000);
    const answers = await askGo(cases);
    const differ = differences(cases, answers);
    assert.deepEqual(differ.slice(0, 20), [], `${differ.length} of ${cases.length} differ`);
    const compiled = answers.filter((a) => !a.errorClass).length;
    assert.ok(compiled > 1500 && compiled < cases.length - 500, `${compiled} of ${cases.length} compile in Go`);
  });

  void test("template functions on bytes that are not UTF-8, and the pattern's own UTF-8", async () => {
    const cases = [
      '{{ regexFind "." "\\xff" | printf "%q" }}',
      '{{ range regexFindAll "." "a\\xffé" -1 }}{{ printf "%q" . }}{{ end }}',
      '{{ regexReplaceAll "" "\\xffa" "-" | printf "%q" }}',
      '{{ regexReplaceAll "(.)" "\\xfe\\xff" "<$1>" | printf "%q" }}',
      '{{ range regexSplit "" "a\\xffb" -1 }}{{ printf "%q" . }}{{ end }}',
      '{{ regexMatch "^.$" "\\xff" }}',
      '{{ regexMatch "\\xff" "\\xff" }}',
      '{{ mustRegexMatch "\\xff" "x" }}',
      '{{ regexFind "\\\\x{FFFD}" "\\xff" | printf "%q" }}',
      '{{ regexFindAll "a*" "baaac" -1 | toJson }}',
      '{{ regexFindAll "z" "abc" -1 | toJson }}',
      '{{ regexFindAll "a" "aaa" 0 | toJson }}',
      '{{ regexSplit "a" "" -1 | toJson }}',
      '{{ regexSplit "" "" -1 | toJson }}',
      '{{ regexSplit "x*" "axb" 2 | toJson }}',
      '{{ regexReplaceAllLiteral "a" "aa" "$1$$" }}',
      '{{ regexReplaceAll "(?P<v>a)" "aa" "${v}$v_" }}',
      '{{ regexQuoteMeta "a.b*c\\xff$" | printf "%q" }}',
      '{{ regexFind "(" "x" }}',
      '{{ mustRegexFind "(" "x" }}',
      '{{ regexMatch "(" "x" }}',
      '{{ mustRegexMatch "(" "x" }}',
    ];
    const answers = await askGo(cases.map((template) => ({ kind: 'template' as const, template })));
    const differ: string[] = [];
    cases.forEach((t, i) => {
      const go = answers[i]!;
      let us: string;
      try {
        us = renderTemplateBytes(t, goStringMap([])).toString('latin1');
      } catch {
        us = 'error';
      }
      const goText = go.errorClass ? 'error' : Buffer.from(go.outputB64 ?? '', 'base64').toString('latin1');
      if (us !== goText) differ.push(`${t}\n   go: ${goText}\n   vaultgate: ${us}`);
    });
    assert.deepEqual(differ, []);
  });
});
