import 'reflect-metadata';
import { test, describe, before } from 'node:test';
import assert from 'node:assert/strict';
import { generateCA, issueServingCert, serviceDnsNames, BACKDATE_MS, type CertKeyPair } from '../../certs/generate.ts';
import { certFacts, joinPemBundle } from '../../certs/pem.ts';
import { bundleId, plan, rotationPolicy, type StoredPki, type WebhookTarget } from '../../certs/rotation.ts';
import { webhookTargets } from '../../certs/ca-injector.ts';

const DAY = 86_400_000;
const MIN = 60_000;
const T0 = Date.parse('2030-01-01T00:00:00Z');
const dnsNames = serviceDnsNames({ service: 'vg', namespace: 'ns' });
// CA 300 days → renewal at 80% = day 240 (before "30 days before expiry" = day 270); leaf 30 days → renewal at day 20.
const policy = rotationPolicy({ dnsNames, leafValidityDays: 30, caValidityDays: 300, caRenewBeforeMs: 30 * DAY });

let caA: CertKeyPair;
let leafA: CertKeyPair;
let leafA2: CertKeyPair;
let caB: CertKeyPair;
let leafB: CertKeyPair;
let leafOtherSans: CertKeyPair;
let oldExpiredCa: CertKeyPair;

const bundle = (...cas: CertKeyPair[]): string => joinPemBundle(cas.map((c) => c.cert));
const fps = (...cas: CertKeyPair[]): string[] => cas.map((c) => certFacts(c.cert).fingerprint);
const targets = (...bundles: string[]): WebhookTarget[] => [
  { kind: 'ValidatingWebhookConfiguration', name: 'vg-validate', caBundles: [bundles[0] ?? '', bundles[0] ?? ''] },
  { kind: 'MutatingWebhookConfiguration', name: 'vg-mutate', caBundles: [bundles[1] ?? bundles[0] ?? ''] },
];
const types = (p: ReturnType<typeof plan>): string[] => p.actions.map((a) => a.type);

void describe('certs/rotation planner', () => {
  before(async () => {
    caA = await generateCA({ now: new Date(T0), validityDays: 300 });
    leafA = await issueServingCert({ ca: caA, dnsNames, validityDays: 30, now: new Date(T0) });
    leafA2 = await issueServingCert({ ca: caA, dnsNames, validityDays: 30, now: new Date(T0 + 235 * DAY) });
    caB = await generateCA({ now: new Date(T0 + 240 * DAY), validityDays: 300 });
    leafB = await issueServingCert({ ca: caB, dnsNames, validityDays: 30, now: new Date(T0 + 241 * DAY) });
    leafOtherSans = await issueServingCert({
      ca: caA,
      dnsNames: serviceDnsNames({ service: 'old-name', namespace: 'ns' }),
      validityDays: 30,
      now: new Date(T0),
    });
    oldExpiredCa = await generateCA({ now: new Date(T0 - 400 * DAY), validityDays: 300 });
  });

  const steady = (): StoredPki => ({
    caBundle: bundle(caA),
    caKey: caA.key,
    cert: leafA.cert,
    key: leafA.key,
    published: { bundleId: bundleId([certFacts(caA.cert)]), at: T0 },
  });

  void test('nothing stored: create, then inject every configuration', () => {
    const p = plan(undefined, targets('', ''), policy, T0);
    assert.deepEqual(types(p), ['create', 'inject', 'inject']);
  });

  void test('fresh pair, caBundles not yet injected: inject only (no leaf until trust is published)', () => {
    const p = plan({ ...steady(), published: undefined }, targets('', ''), policy, T0 + MIN);
    assert.deepEqual(types(p), ['inject', 'inject']);
    assert.match(JSON.stringify(p.actions), /caBundle missing/);
  });

  void test('caBundles injected everywhere: record the publication once', () => {
    const p = plan({ ...steady(), published: undefined }, targets(bundle(caA)), policy, T0 + MIN);
    assert.deepEqual(p.actions, [{ type: 'record-published', bundleId: bundleId([certFacts(caA.cert)]) }]);
  });

  void test('steady state: no steps, next look at the leaf renewal point (2/3 of its lifetime)', () => {
    const p = plan(steady(), targets(bundle(caA)), policy, T0 + DAY);
    assert.deepEqual(p.actions, []);
    const leaf = certFacts(leafA.cert);
    assert.equal(p.nextAt, leaf.notBefore + (leaf.notAfter - leaf.notBefore) * (2 / 3));
  });

  void test('the same state planned twice gives the same steps (level-triggered)', () => {
    for (const at of [T0, T0 + 21 * DAY, T0 + 250 * DAY]) {
      const a = plan({ ...steady(), published: undefined }, targets(bundle(caA), ''), policy, at);
      const b = plan({ ...steady(), published: undefined }, targets(bundle(caA), ''), policy, at);
      assert.deepEqual(a, b);
    }
  });

  void test('leaf past 2/3 of its lifetime: renew from the (published) signer', () => {
    const p = plan(steady(), targets(bundle(caA)), policy, T0 + 21 * DAY);
    assert.deepEqual(types(p), ['issue-leaf']);
  });

  void test('leaf due but the bundle was published moments ago: wait out the publish grace', () => {
    const s = { ...steady(), published: { bundleId: bundleId([certFacts(caA.cert)]), at: T0 + 21 * DAY } };
    const p = plan(s, targets(bundle(caA)), policy, T0 + 21 * DAY + 10_000);
    assert.deepEqual(p.actions, []);
    assert.match(p.waiting ?? '', /waiting until the trust bundle/);
    assert.equal(p.nextAt, T0 + 21 * DAY + policy.publishGraceMs);
  });

  void test('CA at 80% of its lifetime: stage a successor (old + new bundle) and inject, leaf untouched', () => {
    const p = plan({ ...steady(), cert: leafA2.cert, key: leafA2.key }, targets(bundle(caA)), policy, T0 + 241 * DAY);
    assert.deepEqual(types(p), ['stage-ca', 'inject', 'inject']);
  });

  void test('CA staged, bundles still hold the old CA only: inject, never a leaf from the new CA yet', () => {
    const staged: StoredPki = { caBundle: bundle(caA, caB), caKey: caB.key, cert: leafA2.cert, key: leafA2.key };
    const now = T0 + 241 * DAY;
    const p = plan(staged, targets(bundle(caA)), policy, now);
    assert.deepEqual(types(p), ['inject', 'inject']);
    assert.match(p.waiting ?? '', /no longer signs/);
  });

  void test('CA staged and injected: record publication, still no new leaf within the grace', () => {
    const staged: StoredPki = { caBundle: bundle(caA, caB), caKey: caB.key, cert: leafA2.cert, key: leafA2.key };
    const p = plan(staged, targets(bundle(caB, caA)), policy, T0 + 241 * DAY);
    assert.deepEqual(types(p), ['record-published']);
  });

  void test('new CA published for the grace: issue the leaf from it', () => {
    const now = T0 + 241 * DAY;
    const staged: StoredPki = {
      caBundle: bundle(caA, caB),
      caKey: caB.key,
      cert: leafA2.cert,
      key: leafA2.key,
      published: { bundleId: bundleId([certFacts(caA.cert), certFacts(caB.cert)]), at: now - 2 * MIN },
    };
    const p = plan(staged, targets(bundle(caA, caB)), policy, now);
    assert.deepEqual(types(p), ['issue-leaf']);
  });

  void test('leaf from the new CA: the old CA stays for the retire grace, then goes (and bundles follow)', () => {
    const leafB0 = certFacts(leafB.cert).notBefore + BACKDATE_MS;
    const s: StoredPki = {
      caBundle: bundle(caA, caB),
      caKey: caB.key,
      cert: leafB.cert,
      key: leafB.key,
      published: { bundleId: bundleId([certFacts(caA.cert), certFacts(caB.cert)]), at: leafB0 - 5 * MIN },
    };
    const early = plan(s, targets(bundle(caA, caB)), policy, leafB0 + MIN);
    assert.deepEqual(early.actions, []);
    assert.equal(early.nextAt, leafB0 + policy.retireGraceMs);
    const later = plan(s, targets(bundle(caA, caB)), policy, leafB0 + policy.retireGraceMs);
    assert.deepEqual(types(later), ['retire-cas', 'inject', 'inject']);
    assert.deepEqual((later.actions[0] as { fingerprints: string[] }).fingerprints, fps(caA));
  });

  void test('someone removed or changed a caBundle: re-inject that configuration only', () => {
    const removed = plan(steady(), targets('', bundle(caA)), policy, T0 + DAY);
    assert.deepEqual(
      removed.actions.map((a) => [a.type, (a as { name?: string }).name]),
      [['inject', 'vg-validate']],
    );
    const changed = plan(steady(), targets(bundle(caA), bundle(caB)), policy, T0 + DAY);
    assert.deepEqual(
      changed.actions.map((a) => [a.type, (a as { name?: string }).name, (a as { reason?: string }).reason]),
      [['inject', 'vg-mutate', 'caBundle differs from the trust bundle']],
    );
  });

  void test('expired leaf: replace at once, even before publication (nothing left to protect)', () => {
    const p = plan({ ...steady(), published: undefined }, targets(bundle(caA)), policy, T0 + 31 * DAY);
    assert.ok(types(p).includes('issue-leaf'));
    assert.match(JSON.stringify(p.actions), /expired/);
  });

  void test('CA key lost but the leaf still serves: stage a new CA instead of starting over', () => {
    const p = plan({ ...steady(), caKey: undefined }, targets(bundle(caA)), policy, T0 + DAY);
    assert.deepEqual(types(p), ['stage-ca', 'inject', 'inject']);
  });

  void test('Service renamed (leaf lacks a required SAN): reissue at once', () => {
    const p = plan(
      { ...steady(), cert: leafOtherSans.cert, key: leafOtherSans.key },
      targets(bundle(caA)),
      policy,
      T0 + DAY,
    );
    assert.deepEqual(types(p), ['issue-leaf']);
    assert.match(JSON.stringify(p.actions), /lacks SANs vg, vg.ns/);
  });

  void test('mismatched leaf key, or leaf from an untrusted CA: reissue at once', () => {
    assert.deepEqual(types(plan({ ...steady(), key: caA.key }, targets(bundle(caA)), policy, T0 + DAY)), [
      'issue-leaf',
    ]);
    const foreign = plan(
      { ...steady(), cert: leafB.cert, key: leafB.key },
      targets(bundle(caA)),
      policy,
      T0 + 242 * DAY,
    );
    assert.ok(types(foreign).includes('issue-leaf'));
  });

  void test('an expired CA in the bundle is dropped', () => {
    const s = { ...steady(), caBundle: bundle(caA, oldExpiredCa) };
    const p = plan(s, targets(bundle(caA, oldExpiredCa)), policy, T0 + DAY);
    assert.deepEqual(types(p), ['retire-cas', 'inject', 'inject']);
    assert.deepEqual((p.actions[0] as { fingerprints: string[] }).fingerprints, fps(oldExpiredCa));
  });

  void test('Secret lost while configurations still trust a CA: the new bundle keeps that CA (old leaves keep working)', () => {
    const p = plan(undefined, targets(bundle(caA)), policy, T0 + DAY);
    const create = p.actions[0] as { type: string; adoptCAs: string[] };
    assert.equal(create.type, 'create');
    assert.deepEqual(
      create.adoptCAs.map((pem) => certFacts(pem).fingerprint),
      fps(caA),
    );
  });

  void test("an operator's rotation request stages a new CA once; requests older than the CA or in the future do nothing", () => {
    const created = certFacts(caA.cert).notBefore + BACKDATE_MS;
    assert.deepEqual(
      types(plan({ ...steady(), rotateRequestedAt: created + 5_000 }, targets(bundle(caA)), policy, T0 + DAY)),
      ['stage-ca', 'inject', 'inject'],
    );
    assert.deepEqual(
      types(plan({ ...steady(), rotateRequestedAt: created + 500 }, targets(bundle(caA)), policy, T0 + DAY)),
      [],
      'same second as the CA: already honoured',
    );
    assert.deepEqual(
      types(plan({ ...steady(), rotateRequestedAt: created - DAY }, targets(bundle(caA)), policy, T0 + DAY)),
      [],
    );
    assert.deepEqual(
      types(plan({ ...steady(), rotateRequestedAt: T0 + 2 * DAY }, targets(bundle(caA)), policy, T0 + DAY)),
      [],
    );
  });

  void test('configurations injected by cert-manager are not ours to touch', () => {
    const t = webhookTargets([
      {
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'a', annotations: { 'cert-manager.io/inject-ca-from': 'ns/cert' } },
        webhooks: [{ name: 'w' }],
      },
      {
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'b' },
        webhooks: [{ name: 'w', clientConfig: { caBundle: Buffer.from(caA.cert).toString('base64') } }],
      },
    ]);
    assert.deepEqual(t, [{ kind: 'MutatingWebhookConfiguration', name: 'b', caBundles: [caA.cert] }]);
  });
});
