// The audit signing key (Ed25519) and its public half as a JWKS.
//
// In a cluster the private key lives in a Secret (created on first start by whichever replica gets
// there first; the others read it back after a 409), and the public keys are published as a JWKS in a
// ConfigMap that anyone may read to verify the trail. Old public keys stay in the JWKS after a key
// change so older records still verify. The private key never leaves this module as text except into
// the Secret (or the file `vaultgate audit keygen` writes): not in logs, records or errors.
import {
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign as cryptoSign,
  type KeyObject,
} from 'node:crypto';
import { calculateJwkThumbprint, type JSONWebKeySet, type JWK } from 'jose';
import { JWS_TYPE } from './record.ts';

export const DEFAULT_KEY_SECRET = 'vaultgate-audit-key';
export const DEFAULT_JWKS_CONFIGMAP = 'vaultgate-audit-jwks';
export const KEY_SECRET_FIELD = 'ed25519.pem';
export const JWKS_CONFIGMAP_FIELD = 'jwks.json';

export interface AuditKey {
  /** RFC 7638 thumbprint of the public key: the JWS `kid`. */
  kid: string;
  /** Public key as a JWK (kty OKP, crv Ed25519, alg EdDSA, use sig, kid). */
  publicJwk: JWK;
  /** Kept off JSON and inspection output: a KeyObject stringifies as {}. */
  privateKey: KeyObject;
}

/** Signs audit payloads into a compact JWS; the trail only needs this. */
export interface AuditSigner {
  kid: string;
  sign(payload: Uint8Array): string | Promise<string>;
}

export async function auditKeyFromPrivateKey(privateKey: KeyObject): Promise<AuditKey> {
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new Error(`the audit key must be Ed25519, not ${privateKey.asymmetricKeyType ?? privateKey.type}`);
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' }) as JWK;
  const pub: JWK = { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
  const kid = await calculateJwkThumbprint(pub, 'sha256');
  return { kid, publicJwk: { ...pub, alg: 'EdDSA', use: 'sig', kid }, privateKey };
}

export async function generateAuditKey(): Promise<AuditKey> {
  return auditKeyFromPrivateKey(generateKeyPairSync('ed25519').privateKey);
}

/** PKCS#8 PEM → key. The error never quotes the input. */
export async function auditKeyFromPem(pem: string): Promise<AuditKey> {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new Error('the audit key is not a readable PKCS#8 PEM private key');
  }
  return auditKeyFromPrivateKey(key);
}

export function privateKeyPem(key: AuditKey): string {
  return key.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
}

/**
 * A compact-JWS signer (RFC 7515 / RFC 8037 EdDSA, header {alg, kid, typ}), synchronous over node:crypto:
 * ~30 µs per signature, no thread-pool hop (jose's CompactSign goes through WebCrypto: several times that).
 * Any JWS library verifies the result (audit verify uses jose).
 */
export function createSigner(key: AuditKey): AuditSigner {
  const header = Buffer.from(JSON.stringify({ alg: 'EdDSA', kid: key.kid, typ: JWS_TYPE })).toString('base64url');
  return {
    kid: key.kid,
    sign: (payload) => {
      const input = `${header}.${Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength).toString('base64url')}`;
      return `${input}.${cryptoSign(null, Buffer.from(input), key.privateKey).toString('base64url')}`;
    },
  };
}

/** A JWKS with these public keys added to (or replacing same-kid entries of) an existing one. */
export function mergeJwks(existing: JSONWebKeySet | undefined, ...keys: JWK[]): JSONWebKeySet {
  const out = new Map<string, JWK>();
  for (const k of existing?.keys ?? []) if (typeof k.kid === 'string') out.set(k.kid, k);
  for (const k of keys) if (typeof k.kid === 'string') out.set(k.kid, k);
  return { keys: [...out.values()] };
}

export function parseJwks(text: string): JSONWebKeySet {
  const v = JSON.parse(text) as unknown;
  if (typeof v !== 'object' || v === null || !Array.isArray((v as JSONWebKeySet).keys))
    throw new Error('not a JWKS: expected {"keys": [...]}');
  return v as JSONWebKeySet;
}

// ---- Kubernetes I/O ---------------------------------------------------------------------------

/** The few calls needed (kube/kube-client.ts KubeClient satisfies it with SECRETS / CONFIGMAPS). */
export interface AuditKeyStore {
  getSecret(namespace: string, name: string): Promise<{ data?: Record<string, string> } | undefined>;
  /** Rejects with an error whose `code` is 409 when the name is taken. */
  createSecret(namespace: string, secret: KubeObjectBody): Promise<unknown>;
  getConfigMap(
    namespace: string,
    name: string,
  ): Promise<(KubeObjectBody & { data?: Record<string, string> }) | undefined>;
  createConfigMap(namespace: string, cm: KubeObjectBody): Promise<unknown>;
  /** PUT with metadata.resourceVersion: rejects with code 409 on a concurrent change. */
  replaceConfigMap(namespace: string, cm: KubeObjectBody): Promise<unknown>;
}

export interface KubeObjectBody {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels?: Record<string, string>; resourceVersion?: string };
  [k: string]: unknown;
}

/** Adapts a KubeClient-like `get/create/replace(resource, …)` API to AuditKeyStore. */
export function keyStoreFromKubeClient(
  kube: {
    get(res: unknown, name: string, namespace?: string): Promise<unknown>;
    create(res: unknown, obj: never): Promise<unknown>;
    replace(res: unknown, obj: never): Promise<unknown>;
  },
  resources: { secrets: unknown; configMaps: unknown },
): AuditKeyStore {
  return {
    getSecret: async (ns, name) =>
      (await kube.get(resources.secrets, name, ns)) as { data?: Record<string, string> } | undefined,
    createSecret: (_ns, s) => kube.create(resources.secrets, s as never),
    getConfigMap: async (ns, name) =>
      (await kube.get(resources.configMaps, name, ns)) as
        (KubeObjectBody & { data?: Record<string, string> }) | undefined,
    createConfigMap: (_ns, cm) => kube.create(resources.configMaps, cm as never),
    replaceConfigMap: (_ns, cm) => kube.replace(resources.configMaps, cm as never),
  };
}

const LABELS = { 'app.kubernetes.io/managed-by': 'vaultgate', 'app.kubernetes.io/component': 'audit' };
const isConflict = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && (e as { code?: unknown }).code === 409;

export interface KeyLocation {
  namespace: string;
  secretName?: string;
  configMapName?: string;
}

/**
 * The replica's signing key: read from the Secret, or generated and stored on first start. When two
 * replicas race, the loser's create gets 409 and it reads the winner's key, so all replicas share one.
 */
export async function loadOrCreateAuditKey(
  store: AuditKeyStore,
  loc: KeyLocation,
): Promise<{ key: AuditKey; created: boolean }> {
  const name = loc.secretName ?? DEFAULT_KEY_SECRET;
  const existing = await readKey(store, loc.namespace, name);
  if (existing) return { key: existing, created: false };
  const key = await generateAuditKey();
  try {
    await store.createSecret(loc.namespace, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name, namespace: loc.namespace, labels: LABELS },
      data: { [KEY_SECRET_FIELD]: Buffer.from(privateKeyPem(key)).toString('base64') },
    });
    return { key, created: true };
  } catch (err) {
    if (!isConflict(err))
      throw new Error(`cannot store the audit signing key in Secret ${loc.namespace}/${name}: ${errorText(err)}`);
    const winner = await readKey(store, loc.namespace, name);
    if (!winner)
      throw new Error(`Secret ${loc.namespace}/${name} exists but holds no ${KEY_SECRET_FIELD}`, { cause: err });
    return { key: winner, created: false };
  }
}

async function readKey(store: AuditKeyStore, namespace: string, name: string): Promise<AuditKey | undefined> {
  const secret = await store.getSecret(namespace, name);
  const b64 = secret?.data?.[KEY_SECRET_FIELD];
  if (!secret) return undefined;
  if (!b64) throw new Error(`Secret ${namespace}/${name} has no "${KEY_SECRET_FIELD}" entry`);
  return auditKeyFromPem(Buffer.from(b64, 'base64').toString('utf8'));
}

/** Add the public key to the JWKS ConfigMap (create it when absent; retry once on a concurrent update). */
export async function publishJwks(store: AuditKeyStore, loc: KeyLocation, key: AuditKey): Promise<JSONWebKeySet> {
  const name = loc.configMapName ?? DEFAULT_JWKS_CONFIGMAP;
  for (let attempt = 0; ; attempt++) {
    const cm = await store.getConfigMap(loc.namespace, name);
    const text = cm?.data?.[JWKS_CONFIGMAP_FIELD];
    const current = text ? parseJwks(text) : undefined;
    if (current?.keys.some((k) => k.kid === key.kid)) return current;
    const jwks = mergeJwks(current, key.publicJwk);
    const body: KubeObjectBody = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name,
        namespace: loc.namespace,
        labels: LABELS,
        ...(cm?.metadata.resourceVersion ? { resourceVersion: cm.metadata.resourceVersion } : {}),
      },
      data: { ...(cm?.data ?? {}), [JWKS_CONFIGMAP_FIELD]: `${JSON.stringify(jwks, null, 2)}\n` },
    };
    try {
      if (cm) await store.replaceConfigMap(loc.namespace, body);
      else await store.createConfigMap(loc.namespace, body);
      return jwks;
    } catch (err) {
      if (!isConflict(err) || attempt >= 3)
        throw new Error(`cannot publish the audit JWKS in ConfigMap ${loc.namespace}/${name}: ${errorText(err)}`);
    }
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err);
}
