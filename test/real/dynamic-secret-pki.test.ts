// Real tier (#23): a VaultDynamicSecret with credentialType Certificate keeps a certificate from OpenBao
// 2.7.2's pki engine in a kubernetes.io/tls Secret on the real kube-apiserver, with a Deployment as rollout
// target (kube-controller-manager's Deployment and ReplicaSet controllers turn each restarted template into a
// ReplicaSet; no kubelet, so 0 replicas). Over three rotations:
// - tls.crt, tls.key and ca.crt verify at every sample (key matches, issued by the CA, notAfter ahead);
// - each rotation comes at renewAtPercent of the certificate's lifetime (notBefore to notAfter), never at
//   expiry, and restarts the Deployment exactly once (one new pod template, one ReplicaSet); no rotation,
//   no restart;
// - a replaced serial is revoked (OpenBao's pki/cert/<serial> revocation_time) only after the rollout that
//   replaced it (its ReplicaSet) plus the grace, and before it expires; the current serial never is;
// - the controller killed with SIGKILL mid-lifecycle, with status.certificate lost as if it died between
//   writing the Secrets and writing status, comes back and issues nothing (OpenBao's pki/certs list
//   unchanged): it adopts the stored certificate, its serial and notAfter read from the PEM, and makes the
//   next rotation on time;
// - deleting the object revokes the current serial (revocation.onDelete, the default);
// - the private key appears in no status, Event, controller log or metric.
//
// Timing: OpenBao back-dates notBefore by 30 s (the role's not_before_duration default), so ttl 150s is a
// 180 s lifetime, and renewAtPercent 51 (+ up to 2 % jitter) re-issues 62-65 s after issue, 85-88 s before
// notAfter. Rotations are kept at least 60 s apart because the controller's rollout cool-down is 60 s
// (controller/rollouts/plan.ts DEFAULT_ROLLOUT_POLICY, no flag): closer rotations are coalesced into one
// restart by design. Three rotations therefore take at least ~3 min, plus the stack's start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { TEMPLATE_ANNOTATION } from '../../controller/rollouts/plan.ts';
import { CONTROLLERS } from '../harness/controller-manager.ts';
import { condition, type E2EStack, startE2E } from '../harness/e2e-stack.ts';
import type { ControllerHandle } from '../harness/e2e-processes.ts';
import { credentialSurfaces } from '../harness/credential-surfaces.ts';
import { realTier } from '../harness/real-tier.ts';
import { assertNoSecretIn } from '../harness/rollout-checks.ts';
import { createTenantStore } from '../harness/tenant-store.ts';
import { waitFor } from '../harness/wait.ts';

const tier = await realTier();
const NS = 'team-pki';
const VDS_PATH = `/apis/vaultgate.io/v1alpha1/namespaces/${NS}/vaultdynamicsecrets/web-tls`;
const SECRET_PATH = `/api/v1/namespaces/${NS}/secrets/web-tls`;
const TTL_S = 150;
const BACKDATE_S = 30; // OpenBao's default not_before_duration
const RENEW_AT_PERCENT = 51;
const JITTER_PERCENT = 2;
const MIN_VALIDITY_S = 30;
const GRACE_S = 3;
const ROTATIONS = 3;

interface Vds {
  metadata: { uid: string };
  status?: {
    certificate?: { serial: string; notBefore: string; notAfter: string; renewAt?: string };
    previous?: Array<{ id: string; reason?: string }>;
    conditions?: unknown[];
  };
}
interface Tls {
  crt: string;
  key: string;
  ca: string;
}
interface ReplicaSet {
  metadata: { creationTimestamp: string };
  spec: { template: { metadata?: { annotations?: Record<string, string> } } };
}
/** A certificate as the test saw it: when it appeared in the Secret, and its planned renewal point. */
interface Seen {
  serial: string;
  notAfter: number;
  notBefore: number;
  writtenAt: number;
  renewAt?: number;
}

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};
/** Vault's serial form (lowercase hex pairs joined by colons) of an X509Certificate's serial. */
const serialOf = (c: X509Certificate): string =>
  c.serialNumber
    .toLowerCase()
    .padStart(c.serialNumber.length + (c.serialNumber.length % 2), '0')
    .match(/../g)!
    .join(':');

void describe(
  'VaultDynamicSecret certificates on OpenBao 2.7.2 pki and a real Deployment rollout',
  { skip: tier.skip },
  () => {
    let stack: E2EStack;
    let controller: ControllerHandle | undefined;
    const keys = new Set<string>();
    const t0 = performance.now();

    const readTls = async (): Promise<Tls | undefined> => {
      const res = await stack.cp.request('GET', SECRET_PATH);
      if (res.status !== 200) return undefined;
      const s = res.body as { type?: string; data?: Record<string, string> };
      assert.equal(s.type, 'kubernetes.io/tls');
      const dec = (k: string): string => Buffer.from(s.data?.[k] ?? '', 'base64').toString('utf8');
      return { crt: dec('tls.crt'), key: dec('tls.key'), ca: dec('ca.crt') };
    };
    const vds = async (): Promise<Vds> => (await stack.cp.request('GET', VDS_PATH)).body as Vds;
    const templateValue = async (): Promise<string | undefined> => {
      const res = await stack.cp.request('GET', `/apis/apps/v1/namespaces/${NS}/deployments/web`);
      return (res.body as ReplicaSet).spec.template.metadata?.annotations?.[TEMPLATE_ANNOTATION];
    };
    const replicaSets = async (): Promise<ReplicaSet[]> =>
      ((await stack.cp.request('GET', `/apis/apps/v1/namespaces/${NS}/replicasets`)).body as { items: ReplicaSet[] })
        .items;
    /** OpenBao's revocation time of a serial (Unix seconds), 0 when not revoked. */
    const revokedAt = async (serial: string): Promise<number> => {
      const r = await stack.vaultRoot('GET', `pki/cert/${serial}`);
      assert.equal(r.status, 200, `pki/cert/${serial}: ${JSON.stringify(r.body)}`);
      return Number((r.body as { data: { revocation_time?: number } }).data.revocation_time ?? 0);
    };
    /** Serials OpenBao has issued (the CA's own included). */
    const issuedSerials = async (): Promise<string[]> =>
      ((await stack.vaultRoot('GET', 'pki/certs?list=true')).body as { data: { keys: string[] } }).data.keys;
    /** The Secret's certificate checked as a TLS server would use it; its facts. */
    const verify = (tls: Tls, now: number): X509Certificate => {
      const crt = new X509Certificate(tls.crt);
      const ca = new X509Certificate(tls.ca);
      assert.ok(crt.checkPrivateKey(createPrivateKey(tls.key)), 'tls.key is the key of tls.crt');
      assert.ok(crt.checkIssued(ca) && crt.verify(ca.publicKey), 'tls.crt is issued and signed by ca.crt');
      assert.ok(ca.ca, 'ca.crt is a CA certificate');
      assert.ok(Date.parse(crt.validTo) > now, `tls.crt expired at ${crt.validTo}`);
      assert.equal(crt.subject.match(/CN=(.*)/)?.[1], 'web.team-pki.svc.test');
      return crt;
    };

    before(async () => {
      stack = await startE2E({
        controllerManager: { controllers: [...CONTROLLERS, 'deployment-controller', 'replicaset-controller'] },
      });
      controller = stack.controller;
      const must = async (m: string, p: string, b?: unknown): Promise<void> => {
        const r = await stack.vaultRoot(m, p, b);
        if (r.status >= 300) throw new Error(`${m} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
      };
      // The pki engine, a root CA and a role, as a Vault admin sets them up.
      await must('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '24h' } });
      await must('POST', 'pki/root/generate/internal', { common_name: 'vaultgate test root', ttl: '24h' });
      await must('POST', 'pki/roles/web', {
        allowed_domains: ['svc.test'],
        allow_subdomains: true,
        max_ttl: '10m',
        key_type: 'ec',
        key_bits: 256,
      });
      await createTenantStore(stack, {
        namespace: NS,
        role: 'team-pki-web',
        rules: [
          'path "pki/issue/web" { capabilities = ["update"] }',
          'path "pki/revoke" { capabilities = ["update"] }',
        ],
        serviceAccount: 'web',
      });
      await stack.kubectlApply({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: NS },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: {
              containers: [
                {
                  name: 'web',
                  image: 'registry.invalid/web:1',
                  volumeMounts: [{ name: 'tls', mountPath: '/tls', readOnly: true }],
                },
              ],
              volumes: [{ name: 'tls', secret: { secretName: 'web-tls' } }],
            },
          },
        },
      });
      log(`[pki] set up in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    });
    after(async () => {
      await stack?.stop();
      log(`[pki] file took ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    });

    void test(
      'three rotations at the planned fraction, one restart each, replaced serials revoked after their rollout, a SIGKILLed controller issues nothing',
      { timeout: 6 * 60_000 },
      async () => {
        await stack.kubectlApply({
          apiVersion: 'vaultgate.io/v1alpha1',
          kind: 'VaultDynamicSecret',
          metadata: { name: 'web-tls', namespace: NS },
          spec: {
            storeRef: { name: 'vault' },
            credentialType: 'Certificate',
            path: 'pki/issue/web',
            method: 'PUT',
            parameters: { common_name: 'web.team-pki.svc.test', ttl: `${TTL_S}s` },
            leasePolicy: {
              renewAtPercent: RENEW_AT_PERCENT,
              jitterPercent: JITTER_PERCENT,
              minValidity: `${MIN_VALIDITY_S}s`,
            },
            revocation: { grace: `${GRACE_S}s` },
            rolloutRestartTargets: [{ kind: 'Deployment', name: 'web' }],
          },
        });
        await waitFor(async () => ((await readTls())?.crt ? true : undefined), {
          what: 'Secret web-tls with a certificate',
          timeoutMs: 90_000,
          intervalMs: 250,
        }).catch((err: unknown) => {
          throw new Error(`${(err as Error).message}\n${stack.diagnostics()}`);
        });

        const certs: Seen[] = [];
        /** Each value the pod template's annotation took, with when it was first seen. */
        const templates: Array<{ value: string | undefined; at: number }> = [{ value: await templateValue(), at: 0 }];
        assert.equal(templates[0]!.value, undefined, 'the first certificate restarts nothing');
        let killed = 0;
        let adoptChecked = false;
        let issuedAtKill: string[] = [];
        const reasons = new Set<string>();
        let serialAtKill = '';
        const started = Date.now();
        // Until the last replaced serial is revoked (or a bound well past three rotations).
        const interval = ((TTL_S + BACKDATE_S) * (RENEW_AT_PERCENT + JITTER_PERCENT)) / 100 - BACKDATE_S;
        const deadline = started + (ROTATIONS * (interval + 10) + 60) * 1000;
        for (;;) {
          const tick = Date.now();
          const tls = await readTls();
          assert.ok(tls, 'the Secret is there at every sample');
          keys.add(tls.key);
          const crt = verify(tls, tick);
          const serial = serialOf(crt);
          const s = await vds();
          for (const p of s.status?.previous ?? []) reasons.add(`${p.id} ${p.reason ?? ''}`);
          if (certs.at(-1)?.serial !== serial) {
            certs.push({
              serial,
              notBefore: Date.parse(crt.validFrom),
              notAfter: Date.parse(crt.validTo),
              writtenAt: tick,
            });
            log(`[pki] +${Math.round((tick - started) / 1000)}s certificate ${certs.length}: ${serial}`);
          }
          const current = certs.at(-1)!;
          if (s.status?.certificate?.serial === serial && s.status.certificate.renewAt)
            current.renewAt = Date.parse(s.status.certificate.renewAt);
          assert.equal(await revokedAt(serial), 0, `the current serial ${serial} is never revoked`);
          const tv = await templateValue();
          if (templates.at(-1)!.value !== tv) {
            templates.push({ value: tv, at: tick });
            log(
              `[pki] +${Math.round((tick - started) / 1000)}s pod template changed (restart ${templates.length - 1})`,
            );
          }

          // SIGKILL mid-life of the third certificate (its predecessor revoked), status's certificate dropped
          // as if the controller had died between writing the Secrets and writing status: the restarted
          // controller adopts it from the stored PEM, then makes the third rotation itself.
          if (!killed && certs.length === 3 && (await revokedAt(certs[1]!.serial)) > 0) {
            killed = Date.now();
            serialAtKill = serial;
            await stack.procs.stop('controller', { kill: true });
            await stack.cp.kubectl([
              'patch',
              '-n',
              NS,
              'vaultdynamicsecrets.vaultgate.io/web-tls',
              '--subresource=status',
              '--type=merge',
              '-p',
              '{"status":{"certificate":null}}',
            ]);
            issuedAtKill = await issuedSerials();
            controller = await stack.startController();
            log(`[pki] +${Math.round((Date.now() - started) / 1000)}s controller killed and restarted`);
          }
          // The first status read after the restart that has a certificate again.
          if (killed && tick > killed && !adoptChecked && s.status?.certificate) {
            adoptChecked = true;
            assert.ok(
              tick < current.renewAt! - 1_000,
              'the controller came back after the renewal point: its adoption cannot be told from a rotation',
            );
            assert.equal(
              s.status.certificate.serial,
              serialAtKill,
              'the restarted controller adopted the stored serial',
            );
            assert.equal(
              Date.parse(s.status.certificate.notAfter),
              current.notAfter,
              "notAfter adopted from the stored certificate's PEM",
            );
            assert.deepEqual(await issuedSerials(), issuedAtKill, 'the restarted controller issued nothing');
          }

          const last = certs.length === ROTATIONS + 1 && (await revokedAt(certs[ROTATIONS - 1]!.serial)) > 0;
          if (last) break;
          assert.ok(
            Date.now() < deadline,
            `${certs.length - 1} rotations in ${Math.round((Date.now() - started) / 1000)}s\n${stack.diagnostics()}`,
          );
          await sleep(Math.max(0, 1000 - (Date.now() - tick)));
        }
        assert.ok(adoptChecked, 'the restarted controller wrote status.certificate back');

        const rs = await replicaSets();
        const rsCreated = (v: string | undefined): number | undefined => {
          const r = rs.find((x) => x.spec.template.metadata?.annotations?.[TEMPLATE_ANNOTATION] === v);
          return r ? Date.parse(r.metadata.creationTimestamp) : undefined;
        };
        const rotations = certs.slice(1);
        const restarts = templates.slice(1);
        log(
          `[pki] ${rotations.length} rotations, ${restarts.length} pod-template changes, ${rs.length} ReplicaSets, in ${Math.round((Date.now() - started) / 1000)}s`,
        );
        // One restart per rotation: the pod template changed once after each rotation, before the next.
        assert.equal(restarts.length, rotations.length, 'one pod-template change per rotation');
        assert.equal(rs.length, rotations.length + 1, 'one ReplicaSet per template');
        const revoked: string[] = [];
        for (const [i, next] of rotations.entries()) {
          const prev = certs[i]!;
          const restart = restarts[i]!;
          const lifetime = prev.notAfter - prev.notBefore;
          const atPercent = ((next.writtenAt - prev.notBefore) / lifetime) * 100;
          const rev = await revokedAt(prev.serial);
          const rolled = rsCreated(restart.value);
          log(
            `[pki] rotation ${i + 1}: at ${atPercent.toFixed(1)} % of the lifetime, ${Math.round((prev.notAfter - next.writtenAt) / 1000)}s before notAfter; restart +${Math.round((restart.at - next.writtenAt) / 1000)}s; revoked +${rev - Math.floor(next.writtenAt / 1000)}s after the rotation, ${Math.round(prev.notAfter / 1000) - rev}s before notAfter`,
          );
          assert.equal(
            lifetime,
            (TTL_S + BACKDATE_S) * 1000,
            'the certificate has the ttl asked (plus the back-dating)',
          );
          // Re-issued at the planned point (status.certificate.renewAt), never at expiry.
          assert.ok(prev.renewAt, `status.certificate.renewAt of certificate ${i + 1}`);
          assert.ok(
            next.writtenAt >= prev.renewAt - 1_000 && next.writtenAt <= prev.renewAt + 10_000,
            `rotation ${i + 1} at ${new Date(next.writtenAt).toISOString()}, planned ${new Date(prev.renewAt).toISOString()}`,
          );
          assert.ok(
            atPercent >= RENEW_AT_PERCENT - 1 && atPercent <= RENEW_AT_PERCENT + JITTER_PERCENT + 8,
            `rotation ${i + 1} at ${atPercent.toFixed(1)} % of the certificate's lifetime`,
          );
          assert.ok(next.writtenAt < prev.notAfter - MIN_VALIDITY_S * 1000, 'rotated before notAfter - minValidity');
          // Exactly one restart for this rotation, after it and before the next one.
          assert.ok(restart.at >= next.writtenAt, `restart ${i + 1} after rotation ${i + 1}`);
          if (rotations[i + 1])
            assert.ok(restart.at < rotations[i + 1]!.writtenAt, `restart ${i + 1} before rotation ${i + 2}`);
          // Revoked after that rollout (its ReplicaSet) plus the grace, while still valid (revoked, not expired).
          assert.ok(rev > 0, `replaced serial ${prev.serial} revoked`);
          assert.ok(rolled !== undefined, `the ReplicaSet of restart ${i + 1}`);
          assert.ok(
            rev >= Math.floor(rolled / 1000) + GRACE_S - 1,
            `serial ${prev.serial} revoked at ${rev}, its rollout's ReplicaSet created at ${rolled / 1000}`,
          );
          assert.ok(rev * 1000 < prev.notAfter, 'revoked before it expired');
          revoked.push(prev.serial);
        }
        // Only replaced serials are revoked: the current one is not, nor is anything else OpenBao issued.
        const currentSerial = certs.at(-1)!.serial;
        assert.equal(await revokedAt(currentSerial), 0);
        const ca = certs.map((c) => c.serial);
        for (const serial of await issuedSerials()) {
          if (ca.includes(serial)) continue;
          assert.equal(await revokedAt(serial), 0, `serial ${serial}, not issued for this object, is not revoked`);
        }
        assert.deepEqual(
          (await issuedSerials()).filter((x) => ca.includes(x)).sort(),
          [...ca].sort(),
          'every certificate issued was written to the Secret (none thrown away)',
        );
        log(`[pki] revoked serials: ${revoked.join(', ')}; current ${currentSerial}`);
        // Why each replaced certificate waited: its renewal point, never "Adopted" (the controller's own new
        // certificate taken for one issued before a crash, from a cache behind its status write).
        assert.deepEqual(
          [...reasons].sort(),
          certs
            .slice(0, -1)
            .map((c) => `${c.serial} Renewal`)
            .sort(),
        );
        const v = await waitFor(
          async () => {
            const x = await vds();
            return (x.status?.previous ?? []).length === 0 ? x : undefined;
          },
          { what: 'no replaced certificate left waiting in status', timeoutMs: 10_000 },
        );
        assert.equal(condition(v as unknown as Record<string, unknown>)?.status, 'True');
        // Each replaced serial revoked once: one Event each (kube's count included), none repeated per pass.
        const events = (await stack.cp.request('GET', `/api/v1/namespaces/${NS}/events`)).body as {
          items: Array<{ reason?: string; count?: number; series?: { count?: number } }>;
        };
        const revocations = events.items
          .filter((e) => e.reason === 'PreviousLeaseRevoked')
          .reduce((n, e) => n + Math.max(e.count ?? 1, e.series?.count ?? 1), 0);
        assert.equal(revocations, ROTATIONS, 'one PreviousLeaseRevoked Event per replaced serial');
      },
    );

    void test('no form of a private key in status, Events, the controller log or its metrics', async () => {
      assert.ok(keys.size >= ROTATIONS + 1, `${keys.size} private keys seen`);
      const texts = await credentialSurfaces(stack, {
        namespace: NS,
        objectPath: VDS_PATH,
        controller: controller ?? stack.controller!,
      });
      // The PEM, the first 40 characters of its body's first two lines (they survive JSON escaping), its base64's start.
      assertNoSecretIn(texts, keys, 'a private key');
      assert.match(texts.metrics, /vaultgate_dynamic_secret_operations_total\{operation="revoke",result="success"\}/);
    });

    void test('deleting the object revokes the current serial', async () => {
      const tls = await readTls();
      assert.ok(tls);
      const serial = serialOf(new X509Certificate(tls.crt));
      assert.equal(await revokedAt(serial), 0);
      const res = await stack.cp.request('DELETE', VDS_PATH);
      assert.ok(res.status === 200 || res.status === 202, res.text);
      await waitFor(async () => ((await stack.cp.request('GET', VDS_PATH)).status === 404 ? true : undefined), {
        what: 'the VaultDynamicSecret gone (finalizer released)',
        timeoutMs: 60_000,
      });
      assert.ok((await revokedAt(serial)) > 0, `the current serial ${serial} was revoked on deletion`);
    });
  },
);
