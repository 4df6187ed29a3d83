// The engine's own budgets (golang/template/exec.ts, eso/pkcs12.ts): each hostile template of
// test/eso/hostile-templates.ts that the engine can bound by itself ends in well under 2 s, in process,
// with a clear message that names no value. (The rest are bounded by the render pool's deadline:
// test/controller/reconcilers/render-pool.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { goStringMap, renderTemplate } from '../../eso/template.ts';
import { CANARY, HOSTILE_TEMPLATES, pfxWithMacIterations } from './hostile-templates.ts';

for (const c of HOSTILE_TEMPLATES.filter((h) => !h.needsDeadline)) {
  void test(`engine budget: ${c.name} ends in < 2 s with a value-free message`, () => {
    const data = goStringMap(
      Object.entries({ password: CANARY, ...c.data }).map(
        ([k, v]) => [k, typeof v === 'string' ? v : new Uint8Array(v)] as const,
      ),
    );
    const t0 = performance.now();
    let message: string | undefined;
    try {
      renderTemplate(c.template, data);
    } catch (e) {
      message = (e as Error).message;
    }
    const ms = performance.now() - t0;
    assert.ok(ms < 2000, `took ${ms.toFixed(0)} ms`);
    if (c.error) {
      assert.ok(message !== undefined, 'expected an error');
      assert.match(message, c.error);
    }
    if (message !== undefined) assert.ok(!message.includes(CANARY) && !message.includes(CANARY.slice(0, 12)), message);
  });
}

void test('PKCS#12: iteration counts real files use decode; one past the cap is refused by name without running it', () => {
  // The MAC of this file is wrong (zeros): with a count under the cap the derivation runs and the MAC check fails.
  const render = (n: number): string => {
    try {
      return renderTemplate('{{ .pfx | pkcs12key }}', goStringMap([['pfx', new Uint8Array(pfxWithMacIterations(n))]]));
    } catch (e) {
      return (e as Error).message;
    }
  };
  assert.match(render(2048), /decryption password incorrect/);
  const t0 = performance.now();
  assert.match(render(100_000), /decryption password incorrect/);
  // Two derivations here (the MAC is tried with the empty password both ways, as go-pkcs12 does).
  assert.ok(performance.now() - t0 < 2000, 'the largest count allowed derives within the render deadline');
  assert.match(render(100_001), /more than 100000 key-derivation iterations/);
});

void test('the work budget counts list copies: a few thousand appends render, 80k do not', () => {
  assert.equal(
    renderTemplate('{{ $l := list }}{{ range until 3000 }}{{ $l = append $l . }}{{ end }}{{ len $l }}', {}),
    '3000',
  );
  assert.throws(
    () => renderTemplate('{{ $l := list }}{{ range until 80000 }}{{ $l = append $l . }}{{ end }}{{ len $l }}', {}),
    /work budget/,
  );
});
