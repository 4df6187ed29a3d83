// The corpus of test/golang/regexp.differential.test.ts: regexps with inputs and replacement templates,
// each asked of Go's regexp (the Go oracle) and of vaultgate's golang/regexp.ts. Hand-written cases for
// what differs between Go and JavaScript (syntax, Unicode classes, empty matches, Expand, runes beyond
// U+FFFF), the hostile ones of regexp-attacks.ts, and a generated corpus (a fixed seed).
import fc from 'fast-check';
import type { OracleRequest } from '../upstream/go-oracle.ts';
import { REGEXP_ATTACKS } from './regexp-attacks.ts';

export type RegexpCase = Extract<OracleRequest, { regexp: string }>;

const all = (regexp: string, input: string, replacement = '<$0>'): RegexpCase[] => [
  { kind: 'regexp', regexp, input, replacement },
  { kind: 'regexpLiteral', regexp, input, replacement },
  { kind: 'regexpMatch', regexp, input },
  { kind: 'regexpFind', regexp, input },
];

/** Patterns with inputs where Go's and JavaScript's regexps differ, or where a port could slip. */
export const HAND_CASES: readonly RegexpCase[] = [
  // Go's own spellings
  ...all('(?i)^team-a$', 'TEAM-A'),
  ...all('^(?P<env>dev|prod)-', 'prod-x'),
  ...all('^(?<env>dev|prod)-', 'dev-x'),
  ...all('^[[:alpha:]][[:digit:]]+$', 'a123'),
  ...all('[[:^alpha:]]+', 'ab12cd'),
  ...all('[[:word:]]+', 'a_1-b'),
  ...all('\\Aab\\z', 'ab'),
  ...all('\\Aab\\z', 'abc'),
  ...all('^\\x{41}\\x42$', 'AB'),
  ...all('\\x{1F600}', 'a😀b'),
  ...all('[]a]', ']'),
  ...all('[^]a]', ']b'),
  ...all('^\\Qa.b\\E$', 'a.b'),
  ...all('\\Qa.b', 'xa.b'),
  ...all('a(?i)b', 'aB AB'),
  ...all('(?i:A)b', 'ab aB'),
  ...all('(?U)a+', 'aaa'),
  ...all('(?U)a+?', 'aaa'),
  ...all('(?s)a.b', 'a\nb'),
  ...all('(?m)^x$', 'x\nx'),
  ...all('^x$', 'x\nx'),
  ...all('a.c', 'a\rc a\u2028c a\nc'),
  ...all('\\C', 'a'),
  // Unicode classes
  ...all('\\p{Greek}+', 'abc αβγ def'),
  ...all('\\pL+', 'héllo wörld'),
  ...all('\\PL+', 'ab12cd'),
  ...all('\\p{Han}', '漢字'),
  ...all('[\\p{Lu}\\d]+', 'aBC12d'),
  ...all('\\p{^Greek}+', 'αβabc'),
  ...all('\\pN', '٣'),
  ...all('\\d', '٣3'),
  ...all('\\w+', 'héllo'),
  ...all('\\bé', 'é aé'),
  ...all('(?i)σ', 'Σς'),
  ...all('(?i)k', 'K'),
  ...all('\\s+', 'a\u00a0b\u2003c\td'),
  // empty matches, advancement, runes beyond U+FFFF
  ...all('a*', 'baaac', '-'),
  ...all('x*', '', '-'),
  ...all('x*', '😀é', '-'),
  ...all('', 'abc', '-'),
  ...all('\\b', 'ab cd', '|'),
  ...all('(.*)', 'handle', 'acme_$1'),
  ...all('.', '😀a', '[$0]'),
  ...all('[^a]', '😀', '<$0>'),
  ...all('a|', 'bab', '-'),
  ...all('$', 'ab', '!'),
  ...all('(?:)', 'ab', '-'),
  ...all('^', 'a\nb', '>'),
  ...all('(?m)^', 'a\nb', '>'),
  ...all('(?m)$', 'a\nb\n', '<'),
  // Expand
  ...all('(a)(b)?', 'ab a', '[$1|$2|$3|${1}x|$1x|$$|$|${|${1|$-|$01|$0]'),
  ...all('(?P<first>\\w+) (?P<last>\\w+)', 'John Smith', '${last}, ${first} $last_ $first.'),
  ...all('(?P<é>a)', 'a', '[$é]'),
  ...all('(a)', 'a', '$１'),
  ...all('(a)', 'a', '${0}$00$100000000'),
  // refused by Go
  ...all('a(?=b)', 'ab'),
  ...all('(?<!a)b', 'b'),
  ...all('(a)\\1', 'aa'),
  ...all('\\y', 'y'),
  ...all('(', 'x'),
  ...all('[a-', 'a'),
  ...all('x**', 'x'),
  ...all('a{1001}', 'a'),
  ...all('(a{100}){100}', 'a'),
  ...all('(?P<n>a)(?P<n>b)', 'ab'),
  ...all('\\8', '8'),
  ...all('[z-a]', 'a'),
  ...all('(?z)a', 'a'),
  ...all('\\p{Klingon}', 'a'),
  ...all(`${'('.repeat(1000)}a${')'.repeat(1000)}`, 'a'),
  ...all(`${'(?:'.repeat(999)}a${')'.repeat(999)}`, 'a'),
];

/** The attacks of regexp-attacks.ts that are plain regexp calls: Go's answer must be what the case says. */
export const ATTACK_CASES: readonly RegexpCase[] = REGEXP_ATTACKS.flatMap((a) => (a.oracle ? [a.oracle] : []));

const TOKENS = [
  'a',
  'b',
  'ab',
  '.',
  '\\d',
  '\\w',
  '\\s',
  '\\b',
  '\\B',
  '^',
  '$',
  '(',
  ')',
  '(?:',
  '(?P<n>',
  '|',
  '*',
  '+',
  '?',
  '*?',
  '+?',
  '??',
  '{2}',
  '{1,2}',
  '{0,}',
  '[ab]',
  '[^a]',
  '[a-c]',
  '\\pL',
  '\\p{Greek}',
  '(?i)',
  '(?s)',
  '(?m)',
  '(?U)',
  'é',
  'α',
  '😀',
  '\\.',
  '\\A',
  '\\z',
  '[[:alpha:]]',
];
const INPUT_CHARS = ['a', 'b', 'c', 'A', '1', ' ', '\n', '.', 'é', 'α', 'Σ', '😀', '_'];
const TEMPLATES = ['-', '<$0>', '[$1]', '${n}', '$n|$1', '$$', '${1}x', '$'];

/** `count` generated cases (fixed seed): random patterns from Go's syntax, random short inputs. */
export function generatedCases(count: number): RegexpCase[] {
  const pattern = fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 7 }).map((t) => t.join(''));
  const input = fc.array(fc.constantFrom(...INPUT_CHARS), { maxLength: 10 }).map((c) => c.join(''));
  const kind = fc.constantFrom('regexp', 'regexpLiteral', 'regexpMatch', 'regexpFind' as const);
  const arb = fc.record({ kind, regexp: pattern, input, replacement: fc.constantFrom(...TEMPLATES) });
  return fc.sample(arb, { numRuns: count, seed: 20 });
}
