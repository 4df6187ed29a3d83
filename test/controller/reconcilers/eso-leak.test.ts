// No secret value outside Secrets (issue #12 item 4), end to end through the ExternalSecret reconciler:
// the leak corpus (test/eso/leak-corpus.ts: every supported template function failing with a canary
// secret, read from Vault, in every argument position) as target.template.data and as templateFrom
// literals; the canary must not appear in any status, Event or log line.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate, goStringMap } from '../../../eso/template.ts';
import { desiredSecret } from '../../../eso/target.ts';
import {
  CANARY_NEEDLES,
  CANARY_TOKENS,
  CANARY_TRANSFORMS,
  LEAK_DATA,
  leakCorpus,
  renderedTextShapes,
} from '../../eso/leak-corpus.ts';
import { canaryLeaks } from '../../eso/canary-variants.ts';
import { readyOf } from './harness.ts';
import { EXTERNAL_SECRETS, externalSecret, startVault, stopVault, world, type Vault } from './eso-world.ts';

let v: Vault;
void before(async () => {
  v = await startVault();
  await v.kv.write('team-a/leak', LEAK_DATA);
});
void after(() => stopVault(v));

function failing(tpl: string): boolean {
  try {
    renderTemplate(tpl, goStringMap({ ...LEAK_DATA }));
    return false;
  } catch {
    return true;
  }
}

function targetFails(target: Record<string, unknown>): boolean {
  try {
    desiredSecret(target, new Map(Object.entries(LEAK_DATA).map(([k, x]) => [k, Buffer.from(x)])));
    return false;
  } catch {
    return true;
  }
}

void describe('the canary never leaves the Secret', () => {
  void test('failing templates of every supported function: status, Events and logs stay clean', async () => {
    const corpus = leakCorpus({
      fillers: ['1', 'nil', '.canary', '(fromJson .json)'],
      secretArgs: ['.canary', '.yaml', '(fromJson .json)', '.'],
    }).filter(failing);
    const targets = [
      ...corpus.map((t) => ({ template: { data: { out: t } } })),
      // templateFrom: template errors, and rendered text that is not YAML (the yaml parser quotes it)
      ...corpus.slice(0, 200).map((t) => ({ template: { templateFrom: [{ literal: `out: ${t}` }] } })),
      { template: { templateFrom: [{ literal: 'out: {{ .yaml }}' }] } },
      { template: { templateFrom: [{ literal: '{{ .yaml }}' }] } },
      { template: { templateFrom: [{ literal: '{{ .json }}: {{ .yaml }}', target: 'Annotations' }] } },
      { template: { templateFrom: [{ literal: '{{ .canary }}' }] } },
      // Issue #21 item 3: the secret transformed (case, split and joined, encoded, quoted, truncated) into a
      // KeysAndValues key, an alias, invalid YAML, fail.
      ...CANARY_TRANSFORMS.flatMap((t) =>
        renderedTextShapes(t).flatMap((shape) => [
          { template: { templateFrom: [{ literal: shape }] } },
          { template: { data: { out: shape } } },
        ]),
      ).filter(targetFails),
    ];
    const w = await world(v);
    for (const [i, target] of targets.entries()) {
      w.kube.put(
        EXTERNAL_SECRETS,
        externalSecret(`leak-${i}`, { dataFrom: [{ extract: { key: 'team-a/leak' } }], target }),
      );
      await w.kube.reconcile(w.es, `team-a/leak-${i}`).catch(() => undefined);
    }
    const statuses = w.kube
      .cacheOf(EXTERNAL_SECRETS)
      .list()
      .map((o) => JSON.stringify(o.status));
    const failed = w.kube
      .cacheOf(EXTERNAL_SECRETS)
      .list()
      .filter((o) => readyOf(o)?.status === 'False').length;
    assert.ok(failed >= targets.length - 1, `${failed} of ${targets.length} failed`);
    const texts = {
      status: statuses.join('\n'),
      events: JSON.stringify(w.kube.events),
      logs: w.kube.logLines.join('\n'),
    };
    for (const [where, text] of Object.entries(texts)) {
      for (const needle of CANARY_NEEDLES)
        assert.ok(
          !text.includes(needle),
          `${where} leaks ${needle}: ${text
            .split('\n')
            .find((l) => l.includes(needle))
            ?.slice(0, 400)}`,
        );
      const forms = canaryLeaks(text, CANARY_TOKENS);
      assert.deepEqual(
        forms,
        [],
        `${where} leaks the canary as ${forms[0]}: ${text
          .split('\n')
          .find((l) => canaryLeaks(l, CANARY_TOKENS).length > 0)
          ?.slice(0, 400)}`,
      );
      // A length or a position in rendered text depends on the value: no message says "N bytes" or "column N".
      assert.doesNotMatch(text, /\d+ bytes|column \d+/, where);
    }
    // The messages still say what went wrong, with the field path.
    assert.match(
      texts.status,
      /spec\.target\.template\.data\[\\"out\\"\]: line 1: error calling index: cannot index slice\/array with type string/,
    );
    assert.match(
      texts.status,
      /spec\.target\.template\.templateFrom\[0\]\.literal: the rendered template is not valid YAML/,
    );
  });
});
