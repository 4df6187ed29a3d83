// What a user of rolloutRestartTargets would notice about one credential consumed by real pods (#23), as
// one function per consumer (a Deployment of the one-node cluster whose pods run a probe: pg-probe.ts,
// tls-probe.ts, token-probe.ts, one JSON line per check). RolloutWatch samples, once a second, the
// credential in the Secret (by a name that is no secret: a role, a serial, a ServiceAccount), the
// Deployment's ReplicaSets, when each rollout completed, and when each credential was revoked;
// checkConsumer() then asserts: no failed check in any pod; one restart (one new ReplicaSet, whose pods
// all ran with the new credential) per rotation; the replaced credentials, and only they, revoked, each
// after the rollout that replaced it completed; the current one never; one PreviousLeaseRevoked Event
// "(its rollout completed)" per replaced credential. assertNoSecretIn() is the canary check.
import assert from 'node:assert/strict';
import { TEMPLATE_ANNOTATION } from '../../controller/rollouts/plan.ts';
import type { ControlPlane } from './control-plane.ts';
import type { ContainerLog } from './node/pod-logs.ts';
import type { ProbeLine } from './pg-probe.ts';

export interface Consumer {
  cp: ControlPlane;
  namespace: string;
  /** The Deployment; its pods are labelled app=<app>. */
  app: string;
  replicas: number;
  /** The VaultDynamicSecret (its Events). */
  object: string;
  /** The credential in the Secret now, by a name that is no secret, or undefined. */
  current: () => Promise<string | undefined>;
  /** Which of these credentials are revoked now. */
  revoked: (ids: string[]) => Promise<Set<string>>;
}

interface Deployment {
  metadata: { generation: number };
  spec: { replicas: number; template: { metadata?: { annotations?: Record<string, string> } } };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
}
interface Owned {
  metadata: { name: string; creationTimestamp: string; ownerReferences?: Array<{ name: string }> };
}
interface KubeEvent {
  reason?: string;
  note?: string;
  message?: string;
  count?: number;
  series?: { count?: number };
  involvedObject?: { name?: string };
}

/** Every replica runs the current template and is ready; no pod of an older template counts any more. */
export function rolledOut(d: Deployment): boolean {
  const s = d.status ?? {};
  const want = d.spec.replicas;
  return (
    (s.observedGeneration ?? 0) >= d.metadata.generation &&
    s.updatedReplicas === want &&
    s.readyReplicas === want &&
    s.availableReplicas === want &&
    s.replicas === want
  );
}

async function get<T>(cp: ControlPlane, path: string): Promise<T> {
  const res = await cp.request('GET', path);
  assert.equal(res.status, 200, `GET ${path}: ${res.text.slice(0, 300)}`);
  return res.body as T;
}

export class RolloutWatch {
  /** Each credential in the order it appeared in the Secret, with when (ms). */
  readonly credentials: Array<{ id: string; at: number }> = [];
  /** ReplicaSet → creation time (ms). */
  readonly replicaSets = new Map<string, number>();
  /** Newest ReplicaSet → first sample at which the Deployment was rolled out on it. */
  readonly rolloutDone = new Map<string, number>();
  readonly revokedAt = new Map<string, number>();
  /** Samples at which the credential in the Secret was revoked: must stay empty. */
  readonly currentRevoked: string[] = [];
  /** Each value the pod template's restart annotation took. */
  readonly templates: string[] = [];

  constructor(
    readonly c: Consumer,
    readonly started: number,
  ) {}

  get orderedReplicaSets(): string[] {
    return [...this.replicaSets.entries()].sort((a, b) => a[1] - b[1]).map(([n]) => n);
  }

  async sample(): Promise<void> {
    const { cp, namespace: ns, app } = this.c;
    const tick = Date.now();
    const id = await this.c.current();
    if (id && this.credentials.at(-1)?.id !== id) this.credentials.push({ id, at: tick });
    const rss = await get<{ items: Owned[] }>(
      cp,
      `/apis/apps/v1/namespaces/${ns}/replicasets?labelSelector=app%3D${app}`,
    );
    for (const rs of rss.items)
      if (!this.replicaSets.has(rs.metadata.name))
        this.replicaSets.set(rs.metadata.name, Date.parse(rs.metadata.creationTimestamp));
    const d = await get<Deployment>(cp, `/apis/apps/v1/namespaces/${ns}/deployments/${app}`);
    const template = d.spec.template.metadata?.annotations?.[TEMPLATE_ANNOTATION] ?? '(none)';
    if (this.templates.at(-1) !== template) this.templates.push(template);
    const newest = this.orderedReplicaSets.at(-1);
    if (newest && rolledOut(d) && !this.rolloutDone.has(newest)) this.rolloutDone.set(newest, tick);
    const revoked = await this.c.revoked(this.credentials.map((x) => x.id));
    for (const r of revoked) if (!this.revokedAt.has(r)) this.revokedAt.set(r, tick);
    if (id && revoked.has(id)) this.currentRevoked.push(`${new Date(tick).toISOString()} ${id}`);
  }

  /** `rotations` rotations, each replaced credential revoked, the last rollout complete. */
  settled(rotations: number): boolean {
    const newest = this.orderedReplicaSets.at(-1);
    return (
      this.credentials.length > rotations &&
      this.replicaSets.size >= this.credentials.length &&
      this.credentials.slice(0, -1).every((x) => this.revokedAt.has(x.id)) &&
      newest !== undefined &&
      this.rolloutDone.has(newest)
    );
  }
}

/** The consumer's checks (module comment); returns its figures, asserts what failed. */
export async function checkConsumer(
  w: RolloutWatch,
  logs: ContainerLog[],
  o: { rotations: number; diagnostics?: () => string },
): Promise<Record<string, string | number>> {
  const { cp, namespace: ns, app, replicas, object } = w.c;
  const more = (): string => o.diagnostics?.() ?? '';
  const at = (ms: number | undefined): string => (ms === undefined ? '-' : `+${Math.round((ms - w.started) / 1000)}s`);
  const byPod = new Map<string, { users: Set<string>; ok: number; failed: ProbeLine[]; restarts: number }>();
  for (const c of logs.filter((l) => l.pod.startsWith(`${app}-`))) {
    const p = byPod.get(c.pod) ?? { users: new Set<string>(), ok: 0, failed: [], restarts: 0 };
    p.restarts = Math.max(p.restarts, c.restart);
    for (const l of c.lines) {
      if (!l.includes('"ok"')) continue;
      const line = JSON.parse(l) as ProbeLine;
      p.users.add(line.user);
      if (line.ok) p.ok++;
      else p.failed.push(line);
    }
    byPod.set(c.pod, p);
  }
  const pods = [...byPod.entries()];
  const failed = pods.flatMap(([pod, p]) => p.failed.map((l) => `${pod} ${l.at} ${l.user}: ${l.code} ${l.error}`));
  const rsNames = w.orderedReplicaSets;
  const creds = w.credentials;
  const rotations = creds.length - 1;
  const figures: Record<string, string | number> = {
    rotations,
    restarts: rsNames.length - 1,
    'template values': w.templates.length,
    pods: pods.length,
    'checks ok': pods.reduce((n, [, p]) => n + p.ok, 0),
    'checks failed': failed.length,
  };
  for (const [i, c] of creds.entries()) {
    const done = w.rolloutDone.get(rsNames[i] ?? '');
    const rev = w.revokedAt.get(c.id);
    const succ = w.rolloutDone.get(rsNames[i + 1] ?? '');
    figures[`credential ${i}`] =
      `${c.id} written ${at(c.at)}, rolled out ${at(done)}, revoked ${at(rev)}` +
      (rev !== undefined && succ !== undefined
        ? ` (${Math.round((rev - succ) / 1000)}s after its successor's rollout)`
        : '');
  }

  assert.deepEqual(failed.slice(0, 20), [], `${app}: failed checks in the pods\n${more()}`);
  assert.deepEqual(w.currentRevoked, [], `${app}: the credential in the Secret was revoked`);
  assert.ok(rotations >= o.rotations, `${app}: ${rotations} rotations\n${more()}`);
  for (const [pod, p] of pods) {
    assert.ok(p.ok >= 3, `pod ${pod} checked its credential (${p.ok} checks)`);
    assert.equal(p.users.size, 1, `pod ${pod} ran with one credential`);
    assert.equal(p.restarts, 0, `pod ${pod}'s container never restarted`);
  }
  // One restart per rotation: one template value and one ReplicaSet per credential, in order, each with
  // pods of its own credential only.
  assert.equal(w.templates.length, creds.length, `${app}: pod-template values ${w.templates.join(', ')}`);
  assert.equal(
    rsNames.length,
    creds.length,
    `${app}: ReplicaSets ${rsNames.join(', ')} for ${creds.length} credentials`,
  );
  const perRs = new Map<string, number>();
  for (const [pod, p] of pods) {
    const rs = rsNames.find((n) => pod.startsWith(`${n}-`));
    assert.ok(rs, `pod ${pod} belongs to a ReplicaSet of ${app}`);
    perRs.set(rs, (perRs.get(rs) ?? 0) + 1);
    assert.equal([...p.users][0], creds[rsNames.indexOf(rs)]?.id, `pod ${pod} of ${rs} used its rollout's credential`);
  }
  for (const rs of rsNames)
    assert.ok((perRs.get(rs) ?? 0) >= replicas, `${rs}: ${perRs.get(rs) ?? 0} pods ran, ${replicas} wanted`);
  const podsNow = await get<{ items: Owned[] }>(cp, `/api/v1/namespaces/${ns}/pods?labelSelector=app%3D${app}`);
  assert.equal(
    podsNow.items.filter((p) => p.metadata.ownerReferences?.[0]?.name === rsNames.at(-1)).length,
    replicas,
    `${app}: the pods running now are the last rollout's`,
  );

  // Revoked: the replaced credentials, each after the rollout to its successor completed; never the current one.
  const current = creds.at(-1)!.id;
  assert.equal((await w.c.revoked([current])).size, 0, `${app}: the current credential ${current} is not revoked`);
  for (const [id, when] of w.revokedAt) {
    const i = creds.findIndex((c) => c.id === id);
    assert.ok(i >= 0 && i < creds.length - 1, `${app}: revoked ${id} is a replaced credential`);
    const successorRolledOut = w.rolloutDone.get(rsNames[i + 1] ?? '');
    assert.ok(
      successorRolledOut !== undefined && when >= successorRolledOut,
      `${app}: ${id} revoked at ${at(when)}, after its replacement rolled out (${at(successorRolledOut)})`,
    );
  }
  for (const c of creds.slice(0, -1)) assert.ok(w.revokedAt.has(c.id), `${app}: replaced credential ${c.id} revoked`);
  // By the controller after the rollout (not by Vault at a max TTL, nor early): one Event each.
  const events = await get<{ items: KubeEvent[] }>(cp, `/api/v1/namespaces/${ns}/events`);
  const revocations = events.items
    .filter((e) => e.involvedObject?.name === object && e.reason === 'PreviousLeaseRevoked')
    .filter((e) => /its rollout completed/.test(e.note ?? e.message ?? ''))
    .reduce((n, e) => n + Math.max(e.count ?? 1, e.series?.count ?? 1), 0);
  figures['revocations after rollout (Events)'] = revocations;
  assert.equal(revocations, rotations, `${app}: PreviousLeaseRevoked Events after a rollout`);
  return figures;
}

/** Forms of a secret value worth looking for: the value, its base64, and for a PEM its body lines' starts. */
export function secretForms(value: string): string[] {
  const forms = [value, Buffer.from(value).toString('base64').slice(0, 60)];
  const body = value.split('\n').filter((l) => l && !l.startsWith('-----'));
  if (body.length > 1) forms.push(...body.slice(0, 2).map((l) => l.slice(0, 40))); // survives JSON escaping
  const jwtSignature = /^[\w-]+\.[\w-]+\.([\w-]{20,})$/.exec(value)?.[1];
  if (jwtSignature) forms.push(jwtSignature); // the part no one can derive from the claims
  return forms.filter((f) => f.length >= 16);
}

/** No form of any of the values in any of the texts (where → text). */
export function assertNoSecretIn(texts: Record<string, string>, values: Iterable<string>, what: string): void {
  let n = 0;
  for (const v of values) {
    n++;
    for (const form of secretForms(v))
      for (const [where, text] of Object.entries(texts)) assert.ok(!text.includes(form), `${what} is in the ${where}`);
  }
  assert.ok(n > 0, `nothing to look for (${what}): none was collected`);
}
