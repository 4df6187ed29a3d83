// Opening a process's signed audit trail: the key from a local PEM file (development) or from the
// cluster (Secret vaultgate-audit-key, created on first start; JWKS published to a ConfigMap), records
// to stdout and optionally to a rotated file. Used by the webhook and the controller alike.
import { readFileSync } from 'node:fs';
import { CONFIGMAPS, SECRETS, type KubeClient } from '../kube/index.ts';
import {
  auditKeyFromPem,
  createSigner,
  keyStoreFromKubeClient,
  loadOrCreateAuditKey,
  publishJwks,
  type AuditKey,
} from './keys.ts';
import { fileSink, stdoutSink, teeSink } from './sinks.ts';
import { AuditTrail } from './trail.ts';

export interface AuditTrailConfig {
  /** Replica id in every record (each replica keeps its own chain). */
  replica: string;
  /** Namespace of the key Secret and the JWKS ConfigMap (needs `client`). */
  namespace?: string;
  /** Or a local Ed25519 PEM key (`vaultgate audit keygen`). */
  keyFile?: string;
  /** Optional file sink next to stdout. */
  file?: string;
  /** fdatasync the file sink after every batch, before its decisions are answered. */
  fsync?: boolean;
}

export async function openAuditTrail(config: AuditTrailConfig, client?: KubeClient): Promise<AuditTrail> {
  let key: AuditKey;
  if (config.keyFile) key = await auditKeyFromPem(readFileSync(config.keyFile, 'utf8'));
  else if (client && config.namespace) {
    const store = keyStoreFromKubeClient(client, { secrets: SECRETS, configMaps: CONFIGMAPS });
    ({ key } = await loadOrCreateAuditKey(store, { namespace: config.namespace }));
    await publishJwks(store, { namespace: config.namespace }, key);
  } else {
    throw new Error('the audit trail needs a key: --audit-key-file, or a cluster connection and --audit-namespace');
  }
  const sink = config.file
    ? teeSink(stdoutSink(), fileSink({ path: config.file, ...(config.fsync ? { fsync: true } : {}) }))
    : stdoutSink();
  return AuditTrail.open({ replica: config.replica, signer: createSigner(key), sink });
}
