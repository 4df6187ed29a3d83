// No secret value in an error (issue #12 item 4): every way a supported template function can fail,
// with a canary secret in every argument position, and the errors of libraries under the template
// engine (the YAML parser of templateFrom literals), must never carry the canary.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { goStringMap, renderTemplate, TemplateError } from '../../eso/template.ts';
import { desiredSecret } from '../../eso/target.ts';
import { rewriteMap } from '../../eso/rewrite.ts';
import type { ExternalSecretTarget } from '../../schemas/types.ts';
import {
  CANARY,
  CANARY_NEEDLES,
  CANARY_TOKENS,
  CANARY_TRANSFORMS,
  CANARY_YAML,
  LEAK_DATA,
  leakCorpus,
  renderedTextShapes,
} from './leak-corpus.ts';
import { canaryLeaks } from './canary-variants.ts';

/** The canary in any form (upper/lower, reversed, split and joined, base64, hex, quoted, truncated). */
function leaked(text: string): string | undefined {
  return CANARY_NEEDLES.find((n) => text.includes(n)) ?? canaryLeaks(text, CANARY_TOKENS)[0];
}

void describe('template errors never carry template data', () => {
  void test("the issue's example fails with Go's words, not the value", () => {
    const data = goStringMap({ token: 'abc', password: 's3cr3t-Passw0rd' });
    assert.throws(
      () => renderTemplate('{{ index .token .password }}', data),
      (e: unknown) => {
        assert.ok(e instanceof TemplateError);
        assert.match(e.message, /error calling index: cannot index slice\/array with type string/);
        assert.ok(!e.message.includes('s3cr3t'), e.message);
        return true;
      },
    );
  });

  void test('corpus: every supported function, canary in every argument position, every failure', () => {
    const corpus = leakCorpus();
    let failures = 0;
    const leaks: string[] = [];
    for (const tpl of corpus) {
      try {
        renderTemplate(tpl, goStringMap({ ...LEAK_DATA }));
      } catch (e) {
        failures++;
        assert.ok(e instanceof TemplateError, `${tpl}: ${String(e)} is not a TemplateError`);
        const hit = leaked(e.message);
        if (hit) leaks.push(`${tpl} → ${e.message}`);
      }
    }
    assert.deepEqual(leaks, []);
    assert.ok(corpus.length > 20000 && failures > 10000, `corpus ${corpus.length}, failures ${failures}`);
  });

  void test("a templateFrom literal rendering to invalid YAML: the parser's message (which quotes the text) is not shown", () => {
    const target = {
      template: { templateFrom: [{ literal: 'pw: {{ .yaml }}\n' }] },
    } as unknown as ExternalSecretTarget;
    const data = new Map(Object.entries(LEAK_DATA).map(([k, v]) => [k, Buffer.from(v)]));
    assert.throws(
      () => desiredSecret(target, data),
      (e: unknown) => {
        assert.ok(e instanceof Error);
        assert.match(
          e.message,
          /spec\.target\.template\.templateFrom\[0\]\.literal: the rendered template is not valid YAML; the rendered text and the error's position in it are not shown/,
        );
        assert.equal(leaked(e.message), undefined, e.message);
        return true;
      },
    );
    // Every field path and failure kind of target.template, through desiredSecret.
    for (const tpl of leakCorpus({ fillers: ['1', 'nil', '.canary'], secretArgs: ['.canary', '.yaml'] })) {
      for (const t of [
        { template: { data: { k: tpl } } },
        { template: { templateFrom: [{ literal: `k: ${tpl}` }] } },
        { template: { templateFrom: [{ literal: tpl, target: 'Labels' }] } },
      ]) {
        try {
          desiredSecret(t, data);
        } catch (e) {
          assert.equal(leaked((e as Error).message), undefined, `${tpl}: ${(e as Error).message}`);
        }
      }
    }
  });

  // Issue #21 item 3: `{{ .password | upper }}: [1]` put the upper-cased value into the Ready condition
  // (the KeysAndValues key quoted), `splitList "" | join "."` the exact bytes dotted, a YAML alias its
  // name, a YAML error the column (the length of what came before) and `fail` the value's length.
  void test('a transformed secret in rendered text that fails to parse: no form of it, no length, no position', () => {
    const other = { canary: 'other-Bw5Hc1', yaml: 'o: [unclosed "Pk7"', json: '{"o":"Nm2"}', int: '7' };
    const asData = (d: Record<string, string>) => new Map(Object.entries(d).map(([k, v]) => [k, Buffer.from(v)]));
    const leaks: string[] = [];
    const differ: string[] = [];
    let failures = 0;
    for (const t of CANARY_TRANSFORMS) {
      for (const shape of renderedTextShapes(t)) {
        for (const target of [
          { templateFrom: [{ literal: shape }] },
          { templateFrom: [{ literal: shape, target: 'Annotations' }] },
          { data: { k: shape } },
        ]) {
          const message = (data: Map<string, Buffer>): string | undefined => {
            try {
              desiredSecret({ template: target }, data);
              return undefined;
            } catch (e) {
              return (e as Error).message;
            }
          };
          const m = message(asData(LEAK_DATA));
          if (m === undefined) continue;
          failures++;
          const hit = leaked(m);
          if (hit) leaks.push(`${JSON.stringify(shape)} → ${m} [${hit}]`);
          // The same message for a secret of another length and content: nothing in it depends on the value.
          const n = message(asData(other));
          if (n !== m) differ.push(`${JSON.stringify(shape)}:\n  ${m}\n  ${n ?? '(no error)'}`);
        }
      }
    }
    assert.deepEqual(leaks, []);
    assert.deepEqual(differ, []);
    assert.ok(failures > 300, `${failures} failures`);
  });

  void test('rewrite operations: errors name keys, never values', () => {
    const input = new Map([
      ['k', Buffer.from(CANARY_YAML)],
      ['j', Buffer.from(CANARY)],
    ]);
    for (const op of [
      { merge: {} },
      { merge: { strategy: 'JSON' as const } },
      { transform: { template: '{{ index .value 99 }}' } },
      { regexp: { source: '(', target: 'x' } },
    ]) {
      assert.throws(
        () => rewriteMap([op], input),
        (e: unknown) => (assert.equal(leaked((e as Error).message), undefined, (e as Error).message), true),
      );
    }
  });
});
