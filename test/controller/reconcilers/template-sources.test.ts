// templateFrom with ConfigMap and Secret sources through the ExternalSecret reconciler: rendered from
// the sources as they are now, re-rendered when one changes even though no refresh is due, and a
// missing source waits with Ready False (TemplateSourceNotFound), never writing a half-rendered Secret.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIGMAPS, SECRETS } from '../../../kube/resources.ts';
import { EXTERNAL_SECRETS } from '../../../schemas/resources.ts';
import { readyOf } from './harness.ts';
import { externalSecret, secretData, startVault, stopVault, world, type Vault } from './eso-world.ts';

let v: Vault;
void before(async () => {
  v = await startVault();
  await v.kv.write('team-a/db', { user: 'app', password: 'pw-Qm38vR' });
});
void after(() => stopVault(v));

const configMap = (data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'db-templates', namespace: 'team-a' },
  data,
});

void describe('templateFrom ConfigMap and Secret sources', () => {
  void test('rendered from the sources, re-rendered when a source changes, waiting while one is missing', async () => {
    const w = await world(v);
    w.kube.put(
      EXTERNAL_SECRETS,
      externalSecret('db', {
        dataFrom: [{ extract: { key: 'team-a/db' } }],
        target: {
          template: {
            templateFrom: [
              {
                configMap: {
                  name: 'db-templates',
                  items: [{ key: 'dsn' }, { key: 'extra.yaml', templateAs: 'KeysAndValues' }],
                },
              },
              { secret: { name: 'db-label', items: [{ key: 'team' }] }, target: 'Labels' },
            ],
          },
        },
      }),
    );
    // Neither source exists yet: Ready False, no Secret.
    await w.kube.reconcile(w.es, 'team-a/db');
    let es = w.kube.getObj(EXTERNAL_SECRETS, 'team-a/db');
    assert.equal(readyOf(es)?.status, 'False');
    assert.equal(readyOf(es)?.reason, 'TemplateSourceNotFound');
    assert.match(readyOf(es)?.message ?? '', /templateFrom\[0\]\.configMap: ConfigMap "db-templates" not found/);
    assert.equal(w.kube.getObj(SECRETS, 'team-a/db'), undefined);

    w.kube.put(
      CONFIGMAPS,
      configMap({ dsn: 'postgres://{{ .user }}:{{ .password }}@db/app', 'extra.yaml': 'user: "{{ .user | upper }}"' }),
    );
    w.kube.put(SECRETS, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db-label', namespace: 'team-a' },
      data: { team: Buffer.from('{{ .user }}-team').toString('base64') },
    });
    await w.kube.reconcile(w.es, 'team-a/db');
    es = w.kube.getObj(EXTERNAL_SECRETS, 'team-a/db');
    assert.equal(readyOf(es)?.status, 'True', readyOf(es)?.message);
    assert.deepEqual(secretData(w, 'team-a/db'), { dsn: 'postgres://app:pw-Qm38vR@db/app', user: 'APP' });
    assert.equal((w.kube.getObj(SECRETS, 'team-a/db')?.metadata.labels ?? {}).team, 'app-team');

    // The ConfigMap changes: the next reconcile (the watch enqueues it) re-renders although no refresh is due.
    w.kube.put(CONFIGMAPS, configMap({ dsn: 'mysql://{{ .user }}@db', 'extra.yaml': 'user: "{{ .user }}"' }));
    await w.kube.reconcile(w.es, 'team-a/db');
    assert.deepEqual(secretData(w, 'team-a/db'), { dsn: 'mysql://app@db', user: 'app' });

    // Unchanged sources: a second reconcile writes nothing (level-triggered, idempotent).
    const rv = w.kube.getObj(SECRETS, 'team-a/db')?.metadata.resourceVersion;
    await w.kube.reconcile(w.es, 'team-a/db');
    assert.equal(w.kube.getObj(SECRETS, 'team-a/db')?.metadata.resourceVersion, rv);

    // A key that disappears from the ConfigMap: Ready False naming it; the Secret keeps its last good data.
    w.kube.put(CONFIGMAPS, configMap({ 'extra.yaml': 'user: x' }));
    await w.kube.reconcile(w.es, 'team-a/db');
    es = w.kube.getObj(EXTERNAL_SECRETS, 'team-a/db');
    assert.equal(readyOf(es)?.reason, 'TemplateSourceNotFound');
    assert.match(readyOf(es)?.message ?? '', /items\[0\]\.key: ConfigMap "db-templates" has no key "dsn"/);
    assert.deepEqual(secretData(w, 'team-a/db'), { dsn: 'mysql://app@db', user: 'app' });
    // No status, Event or log carries a value.
    const texts =
      JSON.stringify(
        w.kube
          .cacheOf(EXTERNAL_SECRETS)
          .list()
          .map((o) => o.status),
      ) +
      JSON.stringify(w.kube.events) +
      w.kube.logLines.join('\n');
    assert.ok(!texts.includes('pw-Qm38vR'));
  });
});
