// The record text is what every hash and signature covers: the faster canonicalJson, the payload written
// out in sorted key order and the line built around the event's canonical text must give, byte for byte,
// what the first implementation gave (kept here as the oracle), or trails written before would no longer
// verify.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  AUDIT_FORMAT,
  canonicalEventJson,
  canonicalJson,
  payloadText,
  recordHash,
  sha256Hex,
  toLine,
  type AuditEvent,
  type AuditRecord,
} from '../../trail/record.ts';

/** The first implementation, verbatim. */
function canonicalJsonV1(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJsonV1(x))).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as Record<string, unknown>;
    let out = '';
    for (const k of Object.keys(o).sort()) {
      if (o[k] === undefined) continue;
      out += `${out ? ',' : ''}${JSON.stringify(k)}:${canonicalJsonV1(o[k])}`;
    }
    return `{${out}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
const payloadTextV1 = (r: Pick<AuditRecord, 'replica' | 'chain' | 'seq' | 'ts' | 'prev' | 'event'>): string =>
  canonicalJsonV1({ v: 2, replica: r.replica, chain: r.chain, seq: r.seq, ts: r.ts, prev: r.prev, event: r.event });

// Keys that sort differently as strings and as integers, unicode, escapes, undefined members and holes.
const key = fc.oneof(fc.string(), fc.constantFrom('10', '9', '0', 'a', 'B', 'é', '\u2028', '"', '__proto__x'));
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string(),
    fc.integer(),
    fc.double({ noNaN: false }),
    fc.boolean(),
    fc.constant(null),
    fc.constant(undefined),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value;

const admission: AuditEvent = {
  type: 'admission',
  webhook: 'validating',
  uid: 'u-1',
  kind: 'external-secrets.io/v1/ExternalSecret',
  namespace: 'team-a',
  name: 'db',
  operation: 'CREATE',
  user: { username: 'system:serviceaccount:argocd:argocd-application-controller', groups: ['system:authenticated'] },
  outcome: 'denied',
  rules: ['eso.store.vault-server'],
  warnings: ['a "quoted" warning \u2028'],
  message: 'spec.provider.vault.server: not allowed',
  patch: [{ op: 'add', path: '/metadata/labels' }],
  caller: { authenticated: true, subject: 'kube-apiserver' },
};

void describe('audit record text', () => {
  void test('canonicalJson is byte-identical to the first implementation (property)', () => {
    fc.assert(
      fc.property(json, (v) => canonicalJson(v) === canonicalJsonV1(v)),
      { numRuns: 3000 },
    );
  });

  void test("an event's canonical text, admission events written in their known key order, is canonicalJson's (property)", () => {
    const admissionKey = fc.constantFrom(...Object.keys(admission), 'dryRun');
    const event = fc.oneof(
      // the keys of an admission event, any values, some left out or undefined
      fc.dictionary(admissionKey, json, { maxKeys: 15 }).map((e) => ({ ...e, type: 'admission' })),
      // and one key an admission event does not have
      fc
        .tuple(fc.dictionary(admissionKey, json, { maxKeys: 15 }), key, json)
        .map(([e, k, v]) => ({ ...e, [k]: v, type: 'admission' })),
      json,
    );
    fc.assert(
      fc.property(event, (e) => canonicalEventJson(e) === canonicalJsonV1(e)),
      { numRuns: 3000 },
    );
    assert.equal(canonicalEventJson(admission), canonicalJsonV1(admission));
    // inherited keys are not the event's own: canonicalJson leaves them out, and so does this
    const inherited = Object.assign(Object.create({ name: 'proto' }) as object, { type: 'admission', uid: 'u' });
    assert.equal(canonicalEventJson(inherited), '{"type":"admission","uid":"u"}');
  });

  void test('payloadText, written out in sorted key order, equals the canonical payload (property, and malformed records)', () => {
    const fields = fc.record({
      replica: fc.string(),
      chain: fc.string(),
      seq: fc.nat(),
      ts: fc.string(),
      prev: fc.string(),
      event: json,
    });
    fc.assert(
      fc.property(fields, (r) => payloadText(r as never) === payloadTextV1(r as never)),
      { numRuns: 2000 },
    );
    const base = {
      replica: 'bench-0',
      chain: 'c-1',
      seq: 7,
      ts: '2026-12-02T10:00:00.000Z',
      prev: '0'.repeat(64),
      event: admission,
    };
    assert.equal(payloadText(base), payloadTextV1(base));
    assert.equal(recordHash(base), sha256Hex(payloadTextV1(base)));
    for (const broken of [
      { ...base, seq: '7' },
      { ...base, chain: undefined },
      { ...base, event: undefined },
      { ...base, prev: null },
    ]) {
      assert.equal(payloadText(broken as never), payloadTextV1(broken as never));
    }
  });

  void test("the line built around the event's canonical text reads back as the same record", () => {
    const base = {
      replica: 'bench-0',
      chain: 'c-1',
      seq: 7,
      ts: '2026-12-02T10:00:00.000Z',
      prev: '0'.repeat(64),
      event: admission,
    };
    for (const jws of [undefined, 'eyJhbGciOiJFZERTQSJ9.e30.sig']) {
      const record: AuditRecord = { audit: AUDIT_FORMAT, ...base, hash: recordHash(base), ...(jws ? { jws } : {}) };
      const line = toLine(record, canonicalJson(record.event));
      assert.deepEqual(JSON.parse(line), JSON.parse(JSON.stringify(record)));
      assert.ok(
        line.startsWith('{"audit":"vaultgate/v2","replica":"bench-0","chain":"c-1","seq":7,'),
        'fields in the documented order',
      );
      assert.equal(
        recordHash(JSON.parse(line) as AuditRecord),
        record.hash,
        'a verifier recomputes the same hash from the line',
      );
    }
  });
});
