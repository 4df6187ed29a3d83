import 'reflect-metadata';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { FakeClock } from '../../kube/clock.ts';
import { createLogger } from '../../observability/log.ts';
import { CertKeeper, runCertKeeper } from '../../certs/keeper.ts';
import { bundleFacts, certFacts, isIssuedBy, isValidAt } from '../../certs/pem.ts';
import { readStoredPki, ROTATION_ANNOTATION } from '../../certs/secret-store.ts';
import { FakeCertCluster } from './fake-cluster.ts';

const DAY = 86_400_000;

function cluster(): FakeCertCluster {
  const c = new FakeCertCluster();
  c.addConfig('ValidatingWebhookConfiguration', 'vg-validate', [
    'vaultpolicies.validate.vaultgate.io',
    'eso.validate.vaultgate.io',
  ]);
  c.addConfig('MutatingWebhookConfiguration', 'vg-mutate', ['vaultpolicies.mutate.vaultgate.io']);
  c.addConfig('ValidatingWebhookConfiguration', 'someone-else', ['x.example.com'], {});
  return c;
}

function memoryLog(): { log: ReturnType<typeof createLogger>; text: () => string } {
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return { log: createLogger({ level: 'debug', destination }), text: () => chunks.join('') };
}

const secretOf = (c: FakeCertCluster) => readStoredPki(c.secrets.get('vaultgate/vg-webhook-tls'));

void describe('certs/keeper', () => {
  void test('first pass creates the Secret and injects the CA into our configurations only', async () => {
    const c = cluster();
    const clock = new FakeClock(Date.parse('2030-01-01T00:00:00Z'));
    const keeper = new CertKeeper({
      client: c,
      namespace: 'vaultgate',
      secretName: 'vg-webhook-tls',
      service: 'vg-webhook',
      clock,
    });
    const pass = await keeper.reconcileOnce();
    assert.deepEqual(
      pass.actions.map((a) => a.type),
      ['create', 'inject', 'inject'],
    );
    const s = secretOf(c)!;
    const leaf = certFacts(s.cert!);
    assert.ok(leaf.dnsNames.includes('vg-webhook.vaultgate.svc'));
    const ca = bundleFacts(s.caBundle)[0]!;
    assert.ok(isIssuedBy(leaf, ca));
    const [v1, v2, m1, other] = c.caBundles();
    assert.equal(v1, s.caBundle);
    assert.equal(v2, s.caBundle);
    assert.equal(m1, s.caBundle);
    assert.equal(other, '', 'an unlabelled configuration is left alone');
    const ann = JSON.parse(c.secrets.get('vaultgate/vg-webhook-tls')!.metadata.annotations![ROTATION_ANNOTATION]!) as {
      phase: string;
    };
    assert.equal(ann.phase, 'steady');
    // second pass records the publication; third has nothing to do (and writes nothing)
    assert.deepEqual(
      (await keeper.reconcileOnce()).actions.map((a) => a.type),
      ['record-published'],
    );
    const writes = c.writes;
    assert.deepEqual((await keeper.reconcileOnce()).actions, []);
    assert.equal(c.writes, writes);
  });

  void test('three years of passes: leaves renew, CAs rotate, and no served leaf is ever untrusted or expired', async () => {
    const c = cluster();
    const start = Date.parse('2030-01-01T00:00:00Z');
    const clock = new FakeClock(start);
    const keeper = new CertKeeper({
      client: c,
      namespace: 'vaultgate',
      secretName: 'vg-webhook-tls',
      service: 'vg-webhook',
      clock,
      policy: { leafValidityDays: 30, caValidityDays: 300, caRenewBeforeMs: 30 * DAY },
    });
    const violations: string[] = [];
    let leafFp = '';
    const seen = { leaves: 0, cas: new Set<string>(), retired: 0 };
    c.onWrite = ({ kind }) => {
      const s = secretOf(c);
      if (!s?.cert) return;
      const leaf = certFacts(s.cert);
      const bundles = c.caBundles().slice(0, 3);
      if (kind === 'Secret' && leaf.fingerprint !== leafFp) {
        // a replica may load this leaf any moment now: every configuration must already trust its issuer,
        // unless this is the very first leaf (nothing trusted anything before)
        if (leafFp && !bundles.every((b) => bundleFacts(b).some((ca) => isIssuedBy(leaf, ca))))
          violations.push(`leaf ${leaf.fingerprint} issued before its CA was published`);
        leafFp = leaf.fingerprint;
        seen.leaves++;
      }
      if (kind !== 'Secret') {
        // a caBundle change must keep trusting the leaf the replicas serve
        const cfgBundle = bundles.find((b) => b !== '');
        if (cfgBundle && !bundleFacts(cfgBundle).some((ca) => isIssuedBy(leaf, ca)))
          violations.push("caBundle dropped the serving leaf's CA");
      }
      for (const ca of bundleFacts(s.caBundle)) seen.cas.add(ca.fingerprint);
    };
    let passes = 0;
    while (clock.now() < start + 3 * 365 * DAY) {
      const pass = await keeper.reconcileOnce();
      passes++;
      const s = secretOf(c)!;
      if (!isValidAt(certFacts(s.cert!), clock.now()))
        violations.push(`leaf expired at ${new Date(clock.now()).toISOString()}`);
      if (pass.actions.some((a) => a.type === 'retire-cas')) seen.retired++;
      const wait = pass.actions.length ? 2_000 : Math.max(1_000, (pass.nextAt ?? clock.now() + DAY) - clock.now());
      await clock.advance(wait); // trust nextAt: a leaf that expired meanwhile is a violation above
    }
    assert.deepEqual(violations, []);
    assert.ok(seen.leaves >= 50, `leaves issued: ${seen.leaves}`);
    assert.ok(seen.cas.size >= 4, `CAs used: ${seen.cas.size}`);
    assert.ok(seen.retired >= 3, `retirements: ${seen.retired}`);
    assert.equal(bundleFacts(secretOf(c)!.caBundle).length <= 2, true);
    assert.ok(passes < 5_000, `passes: ${passes}`);
  });

  void test('a concurrent writer (leader hand-over) makes the pass back off, and the next one converges', async () => {
    const c = cluster();
    const clock = new FakeClock();
    const a = new CertKeeper({
      client: c,
      namespace: 'vaultgate',
      secretName: 'vg-webhook-tls',
      service: 'vg-webhook',
      clock,
    });
    const b = new CertKeeper({
      client: c,
      namespace: 'vaultgate',
      secretName: 'vg-webhook-tls',
      service: 'vg-webhook',
      clock,
    });
    const [pa, pb] = await Promise.all([a.reconcileOnce(), b.reconcileOnce()]);
    assert.equal([pa, pb].filter((p) => p.actions.length === 0).length, 1, 'exactly one of the two creates');
    const leaf = secretOf(c)!.cert;
    await b.reconcileOnce();
    await a.reconcileOnce();
    assert.equal(secretOf(c)!.cert, leaf, "the winner's pair is kept");
    assert.ok(
      c
        .caBundles()
        .slice(0, 3)
        .every((x) => x === secretOf(c)!.caBundle),
    );
  });

  void test('no private key ever reaches the logs', async () => {
    const c = cluster();
    const clock = new FakeClock();
    const { log, text } = memoryLog();
    const keeper = new CertKeeper({
      client: c,
      namespace: 'vaultgate',
      secretName: 'vg-webhook-tls',
      service: 'vg-webhook',
      clock,
      log,
      policy: { leafValidityDays: 3, caValidityDays: 10, caRenewBeforeMs: DAY },
    });
    for (let i = 0; i < 40; i++) {
      await keeper.reconcileOnce();
      await clock.advance(DAY / 4);
    }
    const s = secretOf(c)!;
    const out = text();
    assert.match(out, /cert keeper step/);
    assert.doesNotMatch(out, /PRIVATE KEY/);
    for (const secret of [s.key!, s.caKey!]) {
      const body = secret
        .split('\n')
        .filter((l) => l && !l.startsWith('-----'))
        .join('');
      assert.ok(!out.includes(body.slice(0, 40)), 'key material in logs');
    }
  });

  void test('runCertKeeper loops until the signal aborts, and retries after API errors', async () => {
    const c = cluster();
    const clock = new FakeClock();
    let failNext = 2;
    const flaky = Object.create(c) as FakeCertCluster;
    flaky.getSecret = async (ns, name) => {
      if (failNext-- > 0) throw new Error('connect ECONNREFUSED');
      return c.getSecret(ns, name);
    };
    const ctl = new AbortController();
    const done = runCertKeeper(
      {
        client: flaky,
        namespace: 'vaultgate',
        secretName: 'vg-webhook-tls',
        service: 'vg-webhook',
        clock,
        intervalMs: 60_000,
        settleMs: 1_000,
      },
      ctl.signal,
    );
    // fake time drives the keeper's sleeps; key generation runs on libuv's thread pool in real time,
    // so each step also yields to real I/O
    for (let i = 0; i < 1_000 && !secretOf(c)?.published; i++) {
      await clock.advance(500);
      await new Promise<void>((r) => setTimeout(r, 1));
    }
    assert.ok(secretOf(c)?.published, 'created, injected and recorded after two failed passes');
    ctl.abort();
    await done;
    assert.equal(clock.pending, 0, 'no timer left behind');
  });
});
