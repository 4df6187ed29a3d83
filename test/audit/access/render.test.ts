// The access report as output: the JSON schema, the text form, and the HTML page being self-contained.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { buildAccessReport, ACCESS_SCHEMA_VERSION } from '../../../audit/access/report.ts';
import { desiredState } from '../../../audit/access/model.ts';
import { loadManifests } from '../../../audit/access/sources.ts';
import { renderAccessHtml, renderAccessText } from '../../../audit/access/render.ts';
import { EXAMPLE, vp, vrb } from './fixtures.ts';

const state = desiredState(loadManifests([EXAMPLE]));

void describe('output', () => {
  void test('JSON has a schemaVersion and the documented top-level keys', () => {
    const r = buildAccessReport(state, {
      source: 'test',
      query: { path: 'secret/data/payments/db', capability: 'read' },
    });
    const json = JSON.parse(JSON.stringify(r)) as Record<string, unknown>;
    assert.equal(json.schemaVersion, ACCESS_SCHEMA_VERSION);
    assert.deepEqual(Object.keys(json).sort(), [
      'findings',
      'generatedAt',
      'matrix',
      'prefix',
      'query',
      'schemaVersion',
      'source',
      'subjects',
      'summary',
    ]);
    assert.equal((json.query as { type: string }).type, 'who-can');
  });

  void test('the HTML page is self-contained: no http(s) URL in any src or href, no script', () => {
    const html = renderAccessHtml(buildAccessReport(state, { source: 'test', query: { subject: 'payments/api' } }));
    assert.doesNotMatch(html, /(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
    assert.doesNotMatch(html, /<script|<link|@import|url\(/i);
    assert.match(html, /<table>/);
    assert.match(html, /platform\/vault-operator/);
    assert.match(html, /class="cap s">sudo</);
  });

  void test('HTML escapes names and messages', () => {
    const s = desiredState([
      vp('x', 'p', [{ path: 'secret/data/x/<img src=x>', capabilities: ['read'] }]),
      vrb('x', 'b', ['sa'], ['p']),
    ]);
    const html = renderAccessHtml(buildAccessReport(s, { source: '<b>src</b>' }));
    assert.doesNotMatch(html, /<img|<b>src/);
    assert.match(html, /&lt;img src=x&gt;/);
  });

  void test('the text table lists every finding and the access rows', () => {
    const text = renderAccessText(buildAccessReport(state, { source: 'test' }));
    assert.match(text, /platform\/vault-operator\s+sys\/mounts\/\*\s+read list sudo/);
    assert.match(text, /HIGH\s+access\.sudo/);
  });
});
