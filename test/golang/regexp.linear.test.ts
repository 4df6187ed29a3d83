// Tenant regexps run in linear time (issue #20): every hostile pattern of regexp-attacks.ts, through the
// template functions, rewrite, find.name.regexp, PushSecret's selectors and a store's namespaceRegexes,
// ends well under a second with Go's answer. The cases run in a child process that reports each call's
// own time; a case still running after CASE_DEADLINE_MS is a failure (a backtracking engine takes
// seconds to hours on them), and the child is killed and restarted after it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REGEXP_ATTACKS } from './regexp-attacks.ts';
import { goStringMap, renderTemplate, TemplateError } from '../../eso/template.ts';
import { MAX_MATCH_WORK } from '../../golang/regexp.ts';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'regexp-attacks.ts');
/** How long one call may take: RE2 needs milliseconds; the bound leaves room for a loaded CI machine. */
const CALL_LIMIT_MS = 500;
/** When a case that has not answered is given up (the child's start-up is not counted). */
const CASE_DEADLINE_MS = 5_000;

interface Report {
  ms?: number;
  result?: string;
  timedOut?: boolean;
}

/** Runs the cases from `from` on; stops at the first that passes its deadline. */
function runFrom(from: number, reports: Map<number, Report>): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, String(from)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let timer: NodeJS.Timeout | undefined;
    let current = from;
    let buffered = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = JSON.parse(buffered.slice(0, nl)) as {
          start?: number;
          done?: number;
          ms?: number;
          result?: string;
        };
        buffered = buffered.slice(nl + 1);
        if (line.start !== undefined) {
          current = line.start;
          clearTimeout(timer);
          timer = setTimeout(() => {
            reports.set(current, { timedOut: true });
            child.kill('SIGKILL');
          }, CASE_DEADLINE_MS);
        } else if (line.done !== undefined) {
          clearTimeout(timer);
          reports.set(line.done, { ms: line.ms!, result: line.result! });
        }
      }
    });
    child.once('error', reject);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(reports.get(current)?.timedOut ? current + 1 : REGEXP_ATTACKS.length);
    });
  });
}

void describe('tenant regexps run in linear time (RE2)', () => {
  void test("each hostile pattern ends well under a second with Go's answer", { timeout: 120_000 }, async () => {
    const reports = new Map<number, Report>();
    for (let next = 0; next < REGEXP_ATTACKS.length;) next = await runFrom(next, reports);
    const failures: string[] = [];
    REGEXP_ATTACKS.forEach((c, i) => {
      const r = reports.get(i);
      if (!r) failures.push(`${c.name}: no answer`);
      else if (r.timedOut) failures.push(`${c.name}: still running after ${CASE_DEADLINE_MS} ms`);
      else if (r.ms! > CALL_LIMIT_MS) failures.push(`${c.name}: ${r.ms} ms`);
      else if (r.result !== c.go)
        failures.push(`${c.name}: ${JSON.stringify(r.result)}, Go gives ${JSON.stringify(c.go)}`);
    });
    assert.deepEqual(failures, []);
  });
});

void describe("a regexp call's work is bounded (program size × input bytes)", () => {
  void test('a large expression over a large value fails fast with a message that names the bound, not the sizes', () => {
    const big = 'a'.repeat(99_999) + 'z';
    const t0 = performance.now();
    let error: unknown;
    try {
      renderTemplate('{{ regexFind "(?:a|b|c|d|e|f|g|h|i|j){1000}" .big }}', goStringMap({ big }));
    } catch (e) {
      error = e;
    }
    assert.ok(performance.now() - t0 < CALL_LIMIT_MS, `${performance.now() - t0} ms`);
    assert.ok(error instanceof TemplateError, String(error));
    assert.match(
      error.message,
      new RegExp(
        `error calling regexFind: regexp: the input is too large for this expression: vaultgate bounds one call's work \\(the expression's program size × the input's bytes\\) at ${MAX_MATCH_WORK}`,
      ),
    );
    assert.doesNotMatch(error.message, /\b(100000|99999|1002)\b/, "neither the value's length nor the pattern's size");
    // The same expression over a value within the bound runs, as Go would.
    assert.equal(
      renderTemplate('{{ regexFind "(?:a|b|c|d|e|f|g|h|i|j){1000}" .big }}', goStringMap({ big: 'a'.repeat(5000) })),
      'a'.repeat(1000),
    );
  });
});
