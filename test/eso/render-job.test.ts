// One Secret render as plain data (what crosses to a render worker and back): the same Secret as an
// in-process render, templateFrom sources carried along, errors without values, derivePassword's keys
// counted against the job's allowance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TemplateError } from '../../golang/template/index.ts';
import { desiredFromOutcome, hasTemplate, runSecretRenderJob, secretRenderJob } from '../../eso/render-job.ts';
import { desiredSecret } from '../../eso/target.ts';
import { TemplateSourceMissingError, type TemplateSources } from '../../eso/target-template.ts';

const provider = new Map([
  ['user', Buffer.from('admin')],
  ['password', Buffer.from('pw')],
]);
const cm = new Map([['tpl', { data: new Map([['k', Buffer.from('{{ .user }}-from-cm')]]) }]]);
const sources: TemplateSources = { configMap: (n) => cm.get(n), secret: () => undefined };
const target = {
  template: {
    data: { dsn: '{{ .user }}:{{ .password }}' },
    templateFrom: [{ configMap: { name: 'tpl', items: [{ key: 'k' }] } }],
  },
};
const roundTrip = <T>(v: T): T => structuredClone(v);

test('a job run elsewhere gives the Secret an in-process render gives', () => {
  const job = roundTrip(secretRenderJob('ns', target, provider, {}, sources, 0));
  const outcome = roundTrip(runSecretRenderJob(job));
  const fromJob = desiredFromOutcome(outcome);
  const direct = desiredSecret(target, provider, {}, sources);
  assert.deepEqual(fromJob, direct);
  assert.equal(fromJob.data.get('k')?.toString(), 'admin-from-cm');
  assert.equal(hasTemplate(target), true);
  assert.equal(hasTemplate({}), false);
});

test('errors come back as messages without values; a missing source keeps its type (the ES waits for it)', () => {
  const bad = { template: { data: { x: '{{ .password | nosuch }}' } } };
  const failed = runSecretRenderJob(secretRenderJob('ns', bad, provider, {}, sources, 0));
  assert.equal(failed.ok, false);
  assert.ok(!JSON.stringify(failed).includes('"pw"') && !JSON.stringify(failed).includes('admin'));
  assert.throws(() => desiredFromOutcome(failed), TemplateError);
  const none: TemplateSources = { configMap: () => undefined, secret: () => undefined };
  const missing = runSecretRenderJob(secretRenderJob('ns', target, provider, {}, none, 0));
  assert.throws(() => desiredFromOutcome(missing), TemplateSourceMissingError);
});

test("derivePassword's new keys are counted and stop at the job's allowance (distinct users: known keys are free)", () => {
  const derive = (user: string, n: number) => ({
    template: {
      data: Object.fromEntries(
        Array.from({ length: n }, (_, i) => [`p${i}`, `{{ derivePassword 1 "long" .password "${user}${i}" "site" }}`]),
      ),
    },
  });
  const ok = runSecretRenderJob(secretRenderJob('ns', derive('a', 2), provider, {}, sources, 2));
  assert.deepEqual([ok.ok, ok.derived], [true, 2]);
  const again = runSecretRenderJob(secretRenderJob('ns', derive('a', 2), provider, {}, sources, 0));
  assert.deepEqual([again.ok, again.derived], [true, 0], 'keys derived before cost nothing');
  const over = runSecretRenderJob(secretRenderJob('ns', derive('b', 3), provider, {}, sources, 2));
  assert.equal(over.ok, false);
  assert.ok(!over.ok && /derivePassword/.test(over.error.message), JSON.stringify(over));
});
