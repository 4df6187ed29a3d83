// The controller's render path (controller/reconcilers/render-pool.ts): tenant templates rendered in worker threads
// with a deadline and a heap limit. Every hostile template of test/eso/hostile-templates.ts ends in
// under 2 s (plus the round trip) with a result or a value-free error naming the field; while one
// namespace's render is hostile another namespace's renders promptly and the event loop keeps ticking.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { RenderLimitError, RenderPool } from '../../../controller/reconcilers/render-pool.ts';
import { TemplateError } from '../../../golang/template/index.ts';
import { CANARY, HOSTILE_TEMPLATES } from '../../eso/hostile-templates.ts';
import { NamespaceKeyBudgets } from '../../../golang/sprig/password.ts';

const SLACK_MS = 600; // the round trip and a loaded CI machine's timer slip
const dataOf = (extra: Record<string, string | Buffer> = {}): Map<string, Buffer> =>
  new Map(
    Object.entries({ password: CANARY, ...extra }).map(([k, v]) => [
      k,
      typeof v === 'string' ? Buffer.from(v, 'utf8') : v,
    ]),
  );
const targetOf = (tpl: string): { template: { data: Record<string, string> } } => ({
  template: { data: { out: tpl } },
});

/** One long call (see the corpus): neither the budgets nor the engine's own deadline stop it; the pool kills the worker. */
const SLOW = HOSTILE_TEMPLATES.find((h) => h.name.startsWith('uniq of 200,000'))!.template;
const slowData = (): Map<string, Buffer> => dataOf();

void describe('render pool', () => {
  let pool: RenderPool;
  before(async () => {
    pool = new RenderPool({ size: 2, deadlineMs: 2000 });
    await pool.ready();
  });
  after(async () => pool.close());

  for (const c of HOSTILE_TEMPLATES) {
    void test(`hostile: ${c.name}: ends in < 2 s with a result or a value-free error, naming the field`, async () => {
      const t0 = performance.now();
      let message: string | undefined;
      try {
        await pool.desiredSecret(`ns-${c.name.length}`, targetOf(c.template), dataOf(c.data));
      } catch (e) {
        assert.ok(e instanceof TemplateError, `a TemplateError, not ${String(e)}`);
        message = e.message;
      }
      const ms = performance.now() - t0;
      assert.ok(ms < 2000 + SLACK_MS, `took ${ms.toFixed(0)} ms`);
      if (c.error) assert.match(message ?? '(rendered)', c.error);
      if (message !== undefined) {
        assert.match(message, /^spec\.target\.template\.data\["out"\]: /);
        assert.ok(!message.includes(CANARY.slice(0, 12)), message);
      }
    });
  }

  void test('a render past its deadline fails naming the field and the limit; the worker is replaced and the next render works', async () => {
    const replaced = pool.stats.replaced;
    await assert.rejects(pool.desiredSecret('slow-ns', targetOf(SLOW), slowData()), (e: Error) => {
      assert.ok(e instanceof RenderLimitError);
      assert.equal(e.message, 'spec.target.template.data["out"]: template rendering exceeded 2s');
      return true;
    });
    assert.equal(pool.stats.replaced, replaced + 1);
    await pool.ready();
    const d = await pool.desiredSecret('slow-ns', targetOf('{{ .password | upper }}'), dataOf());
    assert.equal(d.data.get('out')?.toString(), CANARY.toUpperCase());
  });

  void test('while one namespace renders a hostile template, another namespace renders promptly and the event loop keeps ticking', async () => {
    let last = performance.now();
    let worstGap = 0;
    const tick = setInterval(() => {
      const now = performance.now();
      worstGap = Math.max(worstGap, now - last);
      last = now;
    }, 10);
    try {
      const hostile = pool.desiredSecret('tenant-hostile', targetOf(SLOW), slowData()).then(
        () => 'rendered',
        (e: Error) => e.message,
      );
      // A second hostile render of the same namespace waits for the first: it cannot take the other worker.
      const hostile2 = pool.desiredSecret('tenant-hostile', targetOf(SLOW), slowData()).then(
        () => 'rendered',
        (e: Error) => e.message,
      );
      await new Promise((r) => setTimeout(r, 100));
      const times: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const d = await pool.desiredSecret('tenant-ok', targetOf('{{ .password | b64enc }}'), dataOf());
        times.push(performance.now() - t0);
        assert.equal(d.data.get('out')?.toString(), Buffer.from(CANARY).toString('base64'));
      }
      assert.ok(
        Math.max(...times) < 300,
        `the other namespace's renders took ${times.map((t) => t.toFixed(1)).join(', ')} ms`,
      );
      assert.match(await hostile, /exceeded 2s/);
      assert.match(await hostile2, /exceeded 2s/);
    } finally {
      clearInterval(tick);
    }
    assert.ok(worstGap < 150, `the event loop stalled for ${worstGap.toFixed(0)} ms`);
  });

  void test('a loop of costly calls is stopped by the engine itself just inside the deadline: a message with the line, the worker lives on', async () => {
    const replaced = pool.stats.replaced;
    const loop = HOSTILE_TEMPLATES.find((h) => h.name.startsWith('deepCopy of a 2,000-deep dict'))!.template;
    const t0 = performance.now();
    await assert.rejects(pool.desiredSecret('loop-ns', targetOf(loop), dataOf()), (e: Error) => {
      assert.equal(e.message, 'spec.target.template.data["out"]: line 1: template rendering exceeded 2s');
      return true;
    });
    assert.ok(performance.now() - t0 < 2000 + SLACK_MS);
    assert.equal(pool.stats.replaced, replaced, 'no worker was terminated');
  });

  void test('derivePassword is charged to the namespace that asked, also when its render is cut short by the deadline', async () => {
    const budgets = new NamespaceKeyBudgets(50);
    const small = new RenderPool({ size: 1, deadlineMs: 1000, budgets });
    try {
      await small.ready();
      const many =
        '{{ range $i := until 100 }}{{ derivePassword 1 "long" $.password (printf "u-%d" $i) "example.com" }}{{ end }}';
      await assert.rejects(
        small.desiredSecret('tenant-greedy', targetOf(many), dataOf()),
        /template rendering exceeded 1s/,
      );
      const left = budgets.remaining('tenant-greedy');
      assert.ok(left < 50, 'the keys derived before the deadline are charged');
      assert.equal(budgets.remaining('tenant-modest'), 50);
      await small.ready();
      const d = await small.desiredSecret(
        'tenant-modest',
        targetOf('{{ derivePassword 1 "long" .password "me" "example.com" }}'),
        dataOf(),
      );
      assert.equal(d.data.get('out')?.length, 14, 'another namespace derives from its own budget');
      assert.equal(budgets.remaining('tenant-greedy'), left);
    } finally {
      await small.close();
    }
  });

  void test('a worker that cannot start fails what waits at once and is restarted after a delay, not in a tight loop', async () => {
    const broken = new RenderPool({ size: 1, heapMb: 2 }); // too small a heap to load the engine
    try {
      const t0 = performance.now();
      await assert.rejects(
        broken.desiredSecret('ns', targetOf('{{ "x" }}'), dataOf()),
        /^.*spec\.target\.template: the template renderer could not start$/,
      );
      assert.ok(performance.now() - t0 < 5000);
      await new Promise((r) => setTimeout(r, 1500));
      assert.ok(
        broken.stats.heapLimits + broken.stats.crashes <= 3,
        `restarted ${broken.stats.replaced} times in 1.5 s`,
      );
    } finally {
      await broken.close();
    }
  });

  void test('a target without a template never reaches a worker', async () => {
    const before = pool.stats.renders;
    const d = await pool.desiredSecret('ns', undefined, dataOf());
    assert.equal(d.data.get('password')?.toString(), CANARY);
    assert.equal(pool.stats.renders, before);
  });
});
