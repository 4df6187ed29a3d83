// Differential test of vaultgate's template engine against Go's own text/template with ESO v0.16.2's
// function map (the Go oracle, test/upstream/go-oracle/): over the corpus of test/eso/template-corpus.ts
// (hand-written cases, every supported function with arguments of every Go type, and a generated
// grammar corpus), the same output bytes and the same error class (parse or exec), and no secret value
// in any of vaultgate's error messages. All cases go to one oracle process.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { askGo, ensureGoOracle, type OracleAnswer } from '../upstream/go-oracle.ts';
import { goStringMap, renderTemplateBytes, TemplateError } from '../../eso/template.ts';
import { SUPPORTED_TEMPLATE_FUNCTIONS } from '../../eso/function-map.ts';
import {
  BINARY_B64,
  CANARY,
  DATA,
  HAND_CASES,
  LATEST_FUNCTION_CASES,
  generatedCalls,
  grammarCorpus,
} from './template-corpus.ts';

/**
 * Where vaultgate differs from ESO on purpose (README, ESO section): a date function given something
 * other than a time makes Go read the clock (vaultgate refuses); complex constants are refused; integer
 * literals beyond 2^53 lose precision (JavaScript numbers).
 */
function documentedDifference(template: string, ours: Outcome): boolean {
  if (ours.error?.includes('does not read the clock')) return true;
  if (ours.error?.includes('complex number constants are not supported')) return true;
  return /\b\d{16,}\b/.test(template);
}

interface Outcome {
  bytes?: Buffer;
  phase?: 'parse' | 'exec';
  error?: string;
}

const data = goStringMap([
  ...Object.entries(DATA),
  ...Object.entries(BINARY_B64).map(([k, v]) => [k, Buffer.from(v, 'base64')] as const),
]);

function ours(template: string): Outcome {
  try {
    return { bytes: renderTemplateBytes(template, data) };
  } catch (e) {
    if (!(e instanceof TemplateError)) return { error: `not a TemplateError: ${String(e)}` };
    return { phase: e.phase, error: e.message };
  }
}

function agree(go: OracleAnswer, us: Outcome): boolean {
  if (go.errorClass) return us.phase === (go.errorClass === 'panic' ? 'exec' : go.errorClass);
  return us.bytes !== undefined && us.bytes.equals(Buffer.from(go.outputB64 ?? '', 'base64'));
}

function compare(
  cases: readonly string[],
  answers: readonly OracleAnswer[],
): { differ: string[]; leaks: string[]; failures: number } {
  const differ: string[] = [];
  const leaks: string[] = [];
  let failures = 0;
  cases.forEach((t, i) => {
    const go = answers[i]!;
    const us = ours(t);
    if (us.error !== undefined) {
      failures++;
      if (us.error.includes(CANARY) || us.error.includes('Hx7Qp2Lm9')) leaks.push(`${t} → ${us.error}`);
    }
    if (!agree(go, us) && !documentedDifference(t, us)) {
      differ.push(
        `${t}\n   go: ${go.errorClass ?? ''} ${go.error ?? JSON.stringify(Buffer.from(go.outputB64 ?? '', 'base64').toString('utf8'))}\n   vaultgate: ${us.phase ?? ''} ${us.error ?? JSON.stringify(us.bytes?.toString('utf8'))}`,
      );
    }
  });
  return { differ, leaks, failures };
}

const ask = (cases: readonly string[]): Promise<OracleAnswer[]> =>
  askGo(cases.map((template) => ({ kind: 'template' as const, template, data: DATA, dataB64: BINARY_B64 })));

void describe('vaultgate renders templates as ESO does (Go oracle)', () => {
  // The first run builds the oracle (go build, module downloads): minutes on a cold cache.
  void before(
    async () => {
      await ensureGoOracle();
    },
    { timeout: 900_000 },
  );

  void test('hand-written cases: grammar, number printing, toYaml/toJson, argument checks, every family', async () => {
    const answers = await ask(HAND_CASES);
    const { differ, leaks } = compare(HAND_CASES, answers);
    assert.deepEqual(differ, []);
    assert.deepEqual(leaks, []);
    // The examples, spelled out: Go's number formatting and Go's argument errors.
    assert.equal(ours('{{ (fromJson .json).n }}').bytes?.toString(), '1.234567e+06');
    assert.equal(ours('{{ printf }}').phase, 'exec');
    assert.equal(ours('{{ toJson }}').phase, 'exec');
  });

  void test('every supported function with arguments of every Go type, direct and piped', async () => {
    const cases = generatedCalls();
    const answers = await ask(cases);
    const { differ, leaks, failures } = compare(cases, answers);
    assert.deepEqual(differ.slice(0, 20), [], `${differ.length} of ${cases.length} differ`);
    assert.deepEqual(leaks.slice(0, 5), []);
    const called = new Set(cases.map((c) => /^\{\{ (?:\S+ \| )?(\w+)/.exec(c)?.[1]));
    const missing = SUPPORTED_TEMPLATE_FUNCTIONS.filter(
      (f) => !called.has(f) && !['keys', 'values', 'fail', 'call', 'dig'].includes(f),
    );
    assert.deepEqual(missing, []);
    assert.ok(cases.length > 20_000 && failures > 5_000, `${cases.length} cases, ${failures} failures`);
  });

  void test('the Sprig functions ported last, each with its own corpus: same bytes or same error class', async () => {
    const names = Object.keys(LATEST_FUNCTION_CASES);
    const cases = names.flatMap((f) => LATEST_FUNCTION_CASES[f]!);
    const answers = await ask(cases);
    const { differ, leaks } = compare(cases, answers);
    assert.deepEqual(differ.slice(0, 20), [], `${differ.length} of ${cases.length} differ`);
    assert.deepEqual(leaks, []);
    for (const f of names) {
      assert.ok(SUPPORTED_TEMPLATE_FUNCTIONS.includes(f), `${f} is rendered`);
      const own = LATEST_FUNCTION_CASES[f]!;
      assert.ok(own.length >= 20, `${f}: ${own.length} cases`);
      // Each function's corpus renders real output where Go does, not only errors.
      const rendered = own.filter((t) => !answers[cases.indexOf(t)]!.errorClass).length;
      assert.ok(rendered >= 5 && rendered < own.length, `${f}: ${rendered} of ${own.length} render in Go`);
    }
  });

  void test('a generated grammar corpus: nested if/range/with, variables, break/continue, trimming', async () => {
    const cases = grammarCorpus(1500);
    const answers = await ask(cases);
    const { differ, leaks } = compare(cases, answers);
    assert.deepEqual(differ.slice(0, 10), [], `${differ.length} of ${cases.length} differ`);
    assert.deepEqual(leaks, []);
    // The corpus exercises both outcomes, not only errors.
    const ok = answers.filter((a) => !a.errorClass).length;
    assert.ok(ok > 300 && ok < cases.length - 100, `${ok} of ${cases.length} render`);
  });

  void test('binary data comes out byte for byte (b64dec of a keystore, a non-UTF-8 value)', async () => {
    const cases = [
      '{{ .bin }}',
      '{{ .bin | b64enc }}',
      '{{ .bin | b64enc | b64dec }}',
      '{{ .bin | len }}',
      '{{ index .bin 0 }}',
      '{{ .bin | quote }}',
      '{{ .bin | upper }}',
      '{{ .bin | toJson }}',
      '{{ .bin | printf "%x" }}',
      '{{ "\\xff" }}',
    ];
    const answers = await ask(cases);
    assert.deepEqual(compare(cases, answers).differ, []);
    assert.deepEqual(ours('{{ .bin }}').bytes, Buffer.from(BINARY_B64.bin!, 'base64'));
  });
});

void describe("ESO's own functions on real key material (Go oracle)", () => {
  void before(
    async () => {
      await ensureGoOracle();
    },
    { timeout: 900_000 },
  );

  void test("filterPEM, filterCertChain, jwkPublicKeyPem, jwkPrivateKeyPem give Go's bytes or Go's error class", async () => {
    const { pkiData } = await import('./template-pki.ts');
    const { data: pki, cases } = await pkiData();
    const answers = await askGo(cases.map((template) => ({ kind: 'template' as const, template, data: pki })));
    const m = goStringMap(Object.entries(pki));
    const differ: string[] = [];
    cases.forEach((t, i) => {
      let us: Outcome;
      try {
        us = { bytes: renderTemplateBytes(t, m) };
      } catch (e) {
        us = { phase: (e as TemplateError).phase, error: String(e) };
      }
      if (!agree(answers[i]!, us))
        differ.push(
          `${t}\n   go: ${answers[i]!.errorClass ?? ''} ${answers[i]!.error ?? Buffer.from(answers[i]!.outputB64 ?? '', 'base64').toString()}\n   vaultgate: ${us.phase ?? ''} ${us.error ?? us.bytes?.toString()}`,
        );
    });
    assert.deepEqual(differ, []);
    assert.ok(
      answers.filter((a) => !a.errorClass && (a.output ?? '') !== '').length > 20,
      'the corpus renders real output, not only errors',
    );
  });
});

/** Renders every case over binary `data` with vaultgate and with Go: the cases that differ, and how many rendered. */
async function compareBytes(
  cases: readonly string[],
  data: Record<string, string>,
): Promise<{ answers: OracleAnswer[]; differ: string[]; rendered: number }> {
  const answers = await askGo(cases.map((template) => ({ kind: 'template' as const, template, data })));
  const m = goStringMap(Object.entries(data));
  const differ: string[] = [];
  let rendered = 0;
  cases.forEach((t, i) => {
    let us: Outcome;
    try {
      us = { bytes: renderTemplateBytes(t, m) };
    } catch (e) {
      us = { phase: (e as TemplateError).phase, error: String(e) };
    }
    if (us.bytes) rendered++;
    if (!agree(answers[i]!, us))
      differ.push(
        `${t}\n   go: ${answers[i]!.errorClass ?? ''} ${
          answers[i]!.error ??
          Buffer.from(answers[i]!.outputB64 ?? '', 'base64')
            .toString()
            .slice(0, 80)
        }\n   vaultgate: ${us.phase ?? ''} ${us.error ?? us.bytes?.toString().slice(0, 80)}`,
      );
  });
  return { answers, differ, rendered };
}

void describe("Sprig's buildCustomCert on real key material (Go oracle)", () => {
  void before(
    async () => {
      await ensureGoOracle();
    },
    { timeout: 900_000 },
  );

  void test("buildCustomCert: Go's bytes or Go's error class for certificates and keys of every type (PKCS#8, PKCS#1, SEC 1, DSA, ones Go rejects)", async () => {
    const { customCertData } = await import('./template-pki.ts');
    const { data, cases } = await customCertData();
    const { differ, rendered } = await compareBytes(cases, data);
    assert.deepEqual(differ, []);
    assert.ok(rendered >= 30 && rendered < cases.length - 50, `${rendered} of ${cases.length} rendered`);
  });
});

void describe("PKCS#12 as ESO decodes it (Go oracle; files from go-pkcs12's own encoders)", () => {
  void before(
    async () => {
      await ensureGoOracle();
    },
    { timeout: 900_000 },
  );

  void test("pkcs12key/pkcs12cert(Pass): Go's bytes or Go's error class, for every go-pkcs12 encoder (RC2, 3DES, AES)", async () => {
    const { pkcs12Data } = await import('./template-pki.ts');
    const { data, cases } = await pkcs12Data((reqs) => askGo(reqs));
    const { answers, differ, rendered } = await compareBytes(cases, data);
    assert.deepEqual(differ, []);
    assert.equal(rendered, answers.filter((a) => !a.errorClass).length, 'renders exactly where Go renders');
    assert.ok(rendered >= 20, `${rendered} of ${cases.length} rendered`);
  });
});
