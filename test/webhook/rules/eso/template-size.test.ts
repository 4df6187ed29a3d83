// Rule eso.template.too-large: all template text of one ESO object together is bounded, counted before any
// template is parsed, and the denial names the field where the total passes the limit, never the text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_TEMPLATE_TEXT, templateSizeFindings } from '../../../../webhook/rules/eso/template-size.ts';

const half = 'a'.repeat(MAX_TEMPLATE_TEXT / 2);

test('at the limit exactly: admitted; one character over: denied at the field that passes it', () => {
  const at = { spec: { target: { template: { data: { a: half, b: half } } } } };
  assert.deepEqual(templateSizeFindings('ExternalSecret', at), []);
  const over = { spec: { target: { template: { data: { a: half, b: `${half}x` } } } } };
  const [f] = templateSizeFindings('ExternalSecret', over);
  assert.equal(f?.rule, 'eso.template.too-large');
  assert.equal(f?.severity, 'deny');
  assert.equal(f?.field, 'spec.target.template.data.b');
  assert.match(f?.message ?? '', new RegExp(`hold ${MAX_TEMPLATE_TEXT + 1} characters together`));
  assert.ok(!(f?.message ?? '').includes('aaaa'), 'the text is never repeated');
});

test('templates add up across places: data, templateFrom literals and rewrite transforms', () => {
  const o = {
    spec: {
      target: { template: { data: { a: half }, templateFrom: [{ literal: 'b'.repeat(MAX_TEMPLATE_TEXT / 4) }] } },
      dataFrom: [{ rewrite: [{ transform: { template: 'c'.repeat(MAX_TEMPLATE_TEXT / 4 + 1) } }] }],
    },
  };
  const [f] = templateSizeFindings('ExternalSecret', o);
  assert.equal(f?.field, 'spec.dataFrom[0].rewrite[0].transform.template');
});

test("other kinds' paths: ClusterExternalSecret under externalSecretSpec, PushSecret's template and dataTo", () => {
  const ces = { spec: { externalSecretSpec: { target: { template: { data: { 'tls.crt': `${half}${half}x` } } } } } };
  assert.equal(
    templateSizeFindings('ClusterExternalSecret', ces)[0]?.field,
    'spec.externalSecretSpec.target.template.data["tls.crt"]',
  );
  const ps = {
    spec: { template: { data: { a: half } }, dataTo: [{ rewrite: [{ transform: { template: `${half}x` } }] }] },
  };
  assert.equal(templateSizeFindings('PushSecret', ps)[0]?.field, 'spec.dataTo[0].rewrite[0].transform.template');
});

test('text outside template places, and kinds without templates, do not count', () => {
  const big = 'z'.repeat(MAX_TEMPLATE_TEXT * 2);
  assert.deepEqual(templateSizeFindings('ExternalSecret', { spec: { data: [{ secretKey: big }] } }), []);
  assert.deepEqual(templateSizeFindings('SecretStore', { spec: { target: { template: { data: { a: big } } } } }), []);
});
