// target.template as ESO v0.16.2 renders it (eso/target-template.ts): ESO's order (templateFrom, then
// data, then metadata labels and annotations), both scopes, all three targets, ConfigMap and Secret
// sources, and value-free errors.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  renderTargetTemplate,
  templateSourceRefs,
  TemplateSourceMissingError,
  type TemplateSources,
} from '../../eso/target-template.ts';
import { desiredSecret } from '../../eso/target.ts';
import { TemplateError } from '../../eso/template.ts';

const provider = new Map([
  ['user', Buffer.from('admin')],
  ['password', Buffer.from('s3cr3t-Kx81')],
  ['team', Buffer.from('Payments')],
]);
const text = (m: Map<string, Buffer>): Record<string, string> =>
  Object.fromEntries([...m].map(([k, v]) => [k, v.toString()]));
const sources = (
  cms: Record<string, Record<string, string>>,
  secrets: Record<string, Record<string, string>> = {},
): TemplateSources => ({
  configMap: (n) =>
    cms[n] ? { data: new Map(Object.entries(cms[n]).map(([k, v]) => [k, Buffer.from(v)])) } : undefined,
  secret: (n) =>
    secrets[n] ? { data: new Map(Object.entries(secrets[n]).map(([k, v]) => [k, Buffer.from(v)])) } : undefined,
});

void describe('renderTargetTemplate', () => {
  void test('metadata labels and annotations are rendered, not copied as {{ … }} text', () => {
    const d = desiredSecret(
      {
        template: {
          data: { u: '{{ .user }}' },
          metadata: { labels: { team: '{{ .team | lower }}' }, annotations: { owner: 'team-{{ .team }}', plain: 'x' } },
        },
      },
      provider,
    );
    assert.equal(d.labels.team, 'payments');
    assert.equal(d.annotations.owner, 'team-Payments');
    assert.equal(d.annotations.plain, 'x');
  });

  void test('ConfigMap items as Values (each value a template named by its key) and as KeysAndValues (a YAML map)', () => {
    const cm = {
      tpl: {
        dsn: 'postgres://{{ .user }}:{{ .password }}@db/app',
        'all.yaml': 'u: "{{ .user }}"\n{{ range $k, $v := . }}k-{{ $k }}: "{{ len $v }}"\n{{ end }}',
      },
    };
    const r = renderTargetTemplate(
      {
        templateFrom: [
          { configMap: { name: 'tpl', items: [{ key: 'dsn' }, { key: 'all.yaml', templateAs: 'KeysAndValues' }] } },
        ],
      },
      provider,
      sources(cm),
      new Map(),
    );
    assert.deepEqual(text(r.data), {
      dsn: 'postgres://admin:s3cr3t-Kx81@db/app',
      u: 'admin',
      'k-password': '11',
      'k-team': '8',
      'k-user': '5',
    });
  });

  void test('a Secret source, and targets Labels and Annotations', () => {
    const r = renderTargetTemplate(
      {
        templateFrom: [
          { secret: { name: 'tpl', items: [{ key: 'label' }] }, target: 'Labels' },
          { literal: 'note: "{{ .user }} at {{ .team }}"', target: 'Annotations' },
        ],
      },
      provider,
      sources({}, { tpl: { label: '{{ .team | lower }}' } }),
      new Map(),
    );
    assert.deepEqual(r.labels, { label: 'payments' });
    assert.deepEqual(r.annotations, { note: 'admin at Payments' });
  });

  void test("ESO's order: templateFrom first, template.data overrides it; later entries override earlier", () => {
    const r = renderTargetTemplate(
      { templateFrom: [{ literal: 'a: "1"\nb: "from-literal"' }, { literal: 'a: "2"' }], data: { b: 'from-data' } },
      provider,
      sources({}),
      new Map(),
    );
    assert.deepEqual(text(r.data), { a: '2', b: 'from-data' });
  });

  void test('KeysAndValues reads a map of strings as sigs.k8s.io/yaml does: scalars become Go text, a list is an error', () => {
    const r = renderTargetTemplate(
      {
        templateFrom: [
          { literal: 'port: 5432\nratio: 1.5\nbig: 1234567.0\nflag: yes\nnone:\noct: 0777\nname: "{{ .user }}"' },
        ],
      },
      provider,
      sources({}),
      new Map(),
    );
    assert.deepEqual(text(r.data), {
      port: '5432',
      ratio: '1.5',
      big: '1.234567e+06',
      flag: 'true',
      none: '',
      oct: '511',
      name: 'admin',
    });
    assert.throws(
      () => renderTargetTemplate({ templateFrom: [{ literal: 'l: [1, 2]' }] }, provider, sources({}), new Map()),
      (e: unknown) =>
        e instanceof TemplateError &&
        /templateFrom\[0\]\.literal: could not unmarshal template to 'map\[string\]\[\]byte': a value is a list, not a string \(the key is not shown: it is rendered text\)/.test(
          e.message,
        ) &&
        !e.message.includes('"l"'),
    );
  });

  void test('a missing source or key is TemplateSourceMissingError naming the field; no value in any message', () => {
    const tpl = { templateFrom: [{ configMap: { name: 'nope', items: [{ key: 'k' }] } }] };
    assert.throws(
      () => renderTargetTemplate(tpl, provider, sources({}), new Map()),
      (e: unknown) =>
        e instanceof TemplateSourceMissingError &&
        /templateFrom\[0\]\.configMap: ConfigMap "nope" not found/.test(e.message),
    );
    const tpl2 = { templateFrom: [{ configMap: { name: 'tpl', items: [{ key: 'gone' }] } }] };
    assert.throws(
      () => renderTargetTemplate(tpl2, provider, sources({ tpl: { k: 'x' } }), new Map()),
      /items\[0\]\.key: ConfigMap "tpl" has no key "gone"/,
    );
    for (const bad of ['{{ index .password 99 }}', 'x: {{ .password }}: y', '{{ .password | fail }}']) {
      assert.throws(
        () =>
          renderTargetTemplate(
            { templateFrom: [{ configMap: { name: 't', items: [{ key: 'k', templateAs: 'KeysAndValues' }] } }] },
            provider,
            sources({ t: { k: bad } }),
            new Map(),
          ),
        (e: unknown) =>
          e instanceof Error &&
          !e.message.includes('s3cr3t') &&
          /templateFrom\[0\]\.configMap\.items\[0\]/.test(e.message),
      );
    }
  });

  void test('binary provider data survives a template byte for byte', () => {
    const bin = Buffer.from([0xff, 0x00, 0xfe, 0x41]);
    const r = renderTargetTemplate(
      { data: { ks: '{{ .bin }}', b64: '{{ .bin | b64enc }}' } },
      new Map([['bin', bin]]),
      sources({}),
      new Map(),
    );
    assert.deepEqual(r.data.get('ks'), bin);
    assert.equal(r.data.get('b64')?.toString(), bin.toString('base64'));
  });

  void test('templateSourceRefs lists each source once', () => {
    assert.deepEqual(
      templateSourceRefs({
        template: {
          templateFrom: [
            { configMap: { name: 'a', items: [] } },
            { configMap: { name: 'a', items: [] } },
            { secret: { name: 's', items: [] } },
          ],
        },
      }),
      { configMaps: ['a'], secrets: ['s'] },
    );
  });
});
