// The value a workload's pod template carries: HMAC-SHA256, keyed by a key only the controller holds,
// over the HMACs of the data of every Secret the workload consumes. Identical data gives the identical value (a resync
// or a controller restart restarts nothing: stakater/Reloader's model), any change gives another value
// whatever the clock says (VSO #1228: two rotations in one second shared one RFC 3339 stamp). Unlike
// Reloader's unsalted SHA-1 of the data, whoever may read Deployments cannot test a guess of a password
// against it: without the key the value says nothing about the data.
//
// The key lives in a Secret of the controller's own namespace, filled once and never rewritten: a new key
// would restart every workload once. The chart creates that Secret empty (so the controller needs no right
// to create Secrets there): the first leader fills it with an update at its resourceVersion; without the
// chart it is created (POST). A replica racing gets 409 and reads the winner's key.
import { createHmac, randomBytes } from 'node:crypto';
import { isAlreadyExists, isConflict } from '../../kube/errors.ts';
import type { KubeClient } from '../../kube/kube-client.ts';
import { SECRETS } from '../../kube/resources.ts';

/** The Secret data a workload consumes: base64 values as the API returns them (never decoded here). */
export interface ConsumedSecret {
  name: string;
  data: Readonly<Record<string, string>>;
}

export const KEY_FIELD = 'hmac-key';
export const DEFAULT_KEY_SECRET = 'vaultgate-rollout-key';
const KEY_BYTES = 32;
/** Version prefix: a later change of the encoding below must not compare equal to an old value. */
const PREFIX = 'v1.';

/**
 * HMAC-SHA256 of one Secret: its name and its data, keys sorted. The encoding is JSON of nested arrays, so
 * no choice of names, keys or values can make two different Secrets encode alike.
 */
export function secretHmac(key: Buffer, secret: ConsumedSecret): string {
  const canonical = [
    secret.name,
    Object.keys(secret.data)
      .sort()
      .map((k) => [k, secret.data[k]]),
  ];
  return PREFIX + createHmac('sha256', key).update(JSON.stringify(canonical)).digest('base64url');
}

/**
 * The pod-template value: HMAC-SHA256 over every consumed Secret's HMAC, sorted by name. It changes when
 * any of them does, and is computed without the data (the Secret cache keeps no values).
 */
export function templateHmac(key: Buffer, perSecret: Readonly<Record<string, string>>): string {
  const canonical = Object.keys(perSecret)
    .sort()
    .map((name) => [name, perSecret[name]]);
  return (
    PREFIX +
    createHmac('sha256', key)
      .update(JSON.stringify(['template', canonical]))
      .digest('base64url')
  );
}

type SecretObject = {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  type?: string;
  data?: Record<string, string>;
};

/** Loads the controller's HMAC key once (creating its Secret the first time) and keeps it in memory. */
export class HmacKeyring {
  private loading?: Promise<Buffer>;

  constructor(
    private readonly client: KubeClient,
    private readonly namespace: string,
    private readonly secretName = DEFAULT_KEY_SECRET,
  ) {}

  key(): Promise<Buffer> {
    // A failed load is retried at the next call (the reconcile's backoff), never cached.
    this.loading ??= this.load().catch((err: unknown) => {
      this.loading = undefined;
      throw err;
    });
    return this.loading;
  }

  private async load(): Promise<Buffer> {
    const existing = await this.client.get<SecretObject>(SECRETS, this.secretName, this.namespace);
    if (existing && Object.keys(existing.data ?? {}).length > 0) return this.decode(existing);
    const key = randomBytes(KEY_BYTES).toString('base64');
    if (existing) {
      try {
        return this.decode(
          await this.client.replace(SECRETS, {
            apiVersion: 'v1',
            kind: 'Secret',
            ...existing,
            data: { [KEY_FIELD]: key },
          }),
        );
      } catch (err) {
        if (!isConflict(err)) throw err;
        return this.readWinner();
      }
    }
    const fresh: SecretObject = {
      metadata: {
        name: this.secretName,
        namespace: this.namespace,
        labels: { 'app.kubernetes.io/managed-by': 'vaultgate' },
      },
      type: 'Opaque',
      data: { [KEY_FIELD]: key },
    };
    try {
      return this.decode(await this.client.create(SECRETS, { apiVersion: 'v1', kind: 'Secret', ...fresh }));
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      return this.readWinner();
    }
  }

  private async readWinner(): Promise<Buffer> {
    const winner = await this.client.get<SecretObject>(SECRETS, this.secretName, this.namespace);
    if (!winner)
      throw new Error(
        `Secret ${this.namespace}/${this.secretName} (the rollout HMAC key) was deleted while being created; retrying`,
      );
    return this.decode(winner);
  }

  // A key that is not ours to fix (edited by hand) is refused, never replaced: replacing it would restart
  // every workload the controller coordinates.
  private decode(secret: SecretObject): Buffer {
    const raw = secret.data?.[KEY_FIELD];
    const key = raw ? Buffer.from(raw, 'base64') : Buffer.alloc(0);
    if (key.length < KEY_BYTES) {
      throw new Error(
        `Secret ${this.namespace}/${this.secretName} (the rollout HMAC key) has no ${KEY_BYTES}-byte "${KEY_FIELD}": ` +
          'delete it to have a new key created (every coordinated workload then restarts once)',
      );
    }
    return key;
  }
}
