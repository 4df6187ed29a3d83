// No secret value in an error (issue #12 item 4): every way a supported template function can fail,
// with a canary secret in every argument position, and the errors of libraries under the template
// engine (the YAML parser of templateFrom literals), must never carry the canary.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { goStringMap, renderTemplate, TemplateError } from '../../eso/template.ts';
import { desiredSecret } from '../../eso/target.ts';
import { rewriteMap } from '../../eso/rewrite.ts';
import type { ExternalSecretTarget } from '../../schemas/types.ts';
import { CANARY, CANARY_NEEDLES, CANARY_YAML, LEAK_DATA, leakCorpus } from './leak-corpus.ts';

function leaked(text: string): string | undefined {
  return CANARY_NEEDLES.find((n) => text.includes(n));
}

void describe('template errors never carry template data', () => {
  void test('the issue\'s example fails with Go\'s words, not the value', () => {
    const data = goStringMap({ token: 'abc', password: 's3cr3t-Passw0rd' });
    assert.throws(() => renderTemplate('{{ index .token .password }}', data), (e: unknown) => {
      assert.ok(e instanceof TemplateError);
      assert.match(e.message, /error calling index: cannot index slice\/array with type string/);
      assert.ok(!e.message.includes('s3cr3t'), e.message);
      return true;
    });
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

  void test('a templateFrom literal rendering to invalid YAML: the parser\'s message (which quotes the text) is not shown', () => {
    const target = { template: { templateFrom: [{ literal: 'pw: {{ .yaml }}\n' }] } } as unknown as ExternalSecretTarget;
    const data = new Map(Object.entries(LEAK_DATA).map(([k, v]) => [k, Buffer.from(v)]));
    assert.throws(() => desiredSecret(target, data), (e: unknown) => {
      assert.ok(e instanceof Error);
      assert.match(e.message, /spec\.target\.template\.templateFrom\[0\]\.literal: the rendered template is not valid YAML \(line 1, column \d+\)/);
      assert.equal(leaked(e.message), undefined, e.message);
      return true;
    });
    // Every field path and failure kind of target.template, through desiredSecret.
    for (const tpl of leakCorpus({ fillers: ['1', 'nil', '.canary'], secretArgs: ['.canary', '.yaml'] })) {
      for (const t of [{ template: { data: { k: tpl } } }, { template: { templateFrom: [{ literal: `k: ${tpl}` }] } }, { template: { templateFrom: [{ literal: tpl, target: 'Labels' }] } }]) {
        try {
          desiredSecret(t, data);
        } catch (e) {
          assert.equal(leaked((e as Error).message), undefined, `${tpl}: ${(e as Error).message}`);
        }
      }
    }
  });

  void test('rewrite operations: errors name keys, never values', () => {
    const input = new Map([['k', Buffer.from(CANARY_YAML)], ['j', Buffer.from(CANARY)]]);
    for (const op of [{ merge: {} }, { merge: { strategy: 'JSON' as const } }, { transform: { template: '{{ index .value 99 }}' } }, { regexp: { source: '(', target: 'x' } }]) {
      assert.throws(() => rewriteMap([op], input), (e: unknown) => (assert.equal(leaked((e as Error).message), undefined, (e as Error).message), true));
    }
  });
});
