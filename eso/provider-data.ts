// ESO's getProviderSecretData for the Vault provider: dataFrom[] (extract, find) first, in order, each
// merged over the previous; then data[] on top (controllers/externalsecret/externalsecret_controller_secret.go).
// A missing remote secret fails the sync with deletionPolicy Retain (the default) and is skipped with
// Delete or Merge, so those policies can notice that everything is gone.
import type {
  ExternalSecretDataRemoteRef,
  ExternalSecretFind,
  ExternalSecretSpec,
  SecretStoreRef,
} from '../schemas/types.ts';
import { compileGoRegexp } from '../golang/index.ts';
import { rewriteMap, type RewriteOperation } from './rewrite.ts';
import { convertKeys, decodeMap, decodeValue } from './strategies.ts';
import { secretMap, secretValue } from './values.ts';
import { EsoDataError } from './errors.ts';
import { ReconcileError } from '../kube/reconcile-error.ts';

/** Reads from one store with its own identity. Keys are ESO remote keys, resolved by the source. */
export interface SecretSource {
  /** KV data of `key` (ESO's NoSecretError → undefined). */
  read(key: string, version?: string): Promise<Record<string, unknown> | undefined>;
  /** KV v2 custom_metadata as ESO's readSecretMetadata returns it ({} when there is none), undefined if the secret is absent. */
  readMetadata(key: string): Promise<Record<string, string> | undefined>;
  /** One level of names under `path` ('' = the mount root); sub-folders end with '/'. undefined when nothing is there. */
  list(path: string): Promise<string[] | undefined>;
  readonly kvVersion: 1 | 2;
}

export class NoSecretError extends EsoDataError {
  override readonly name = 'NoSecretError';
  constructor(readonly where: string) {
    super(`secret does not exist at provider using ${where}`, 'ProviderSecretNotFound');
  }
}

export interface ProviderData {
  data: Map<string, Buffer>;
  /** Entries skipped because the remote secret is gone (only with deletionPolicy Delete/Merge). */
  missing: string[];
}

export type SourceFor = (ref: SecretStoreRef | undefined) => Promise<SecretSource>;
/** The keys of dataFrom[index]'s generatorRef (controller/reconcilers/externalsecret-generators.ts). */
export type GenerateFor = (index: number) => Promise<Map<string, Buffer>>;

export async function providerSecretData(
  spec: ExternalSecretSpec,
  sourceFor: SourceFor,
  generate?: GenerateFor,
): Promise<ProviderData> {
  const deletionPolicy = spec.target?.deletionPolicy ?? 'Retain';
  const data = new Map<string, Buffer>();
  const missing: string[] = [];
  const tolerate = (e: unknown, where: string): boolean => {
    if (e instanceof NoSecretError && deletionPolicy !== 'Retain') {
      missing.push(where);
      return true;
    }
    return false;
  };

  for (const [i, ref] of (spec.dataFrom ?? []).entries()) {
    const where = `spec.dataFrom[${i}]`;
    if (ref.sourceRef?.generatorRef) {
      // ESO's handleGenerateSecrets: the generator's keys through rewrite, no conversion or decoding.
      if (!generate) throw new EsoDataError(`${where}.sourceRef.generatorRef: generators are not served here`);
      for (const [k, v] of rewriteMap(ref.rewrite ?? [], await generate(i))) data.set(k, v);
      continue;
    }
    const source = await sourceFor(ref.sourceRef?.storeRef ?? spec.secretStoreRef);
    let m: Map<string, Buffer>;
    try {
      if (ref.extract) m = await extract(source, ref.extract, where);
      else if (ref.find) m = await find(source, ref.find);
      else throw new EsoDataError(`${where}: one of extract or find is required`);
    } catch (e) {
      if (tolerate(e, where)) continue;
      throw e;
    }
    const rewrite = (ref.rewrite ?? []) as RewriteOperation[];
    m = rewriteMap(rewrite, m);
    const strategies = ref.extract ?? ref.find;
    // ESO converts keys only when no rewrite ran (a rewrite is how users choose names themselves).
    if (rewrite.length === 0) m = convertKeys(strategies?.conversionStrategy, m);
    m = decodeMap(strategies?.decodingStrategy, m);
    checkNullBytes(strategies?.nullBytePolicy, m, where);
    for (const [k, v] of m) data.set(k, v);
  }

  for (const [i, item] of (spec.data ?? []).entries()) {
    const where = `spec.data[${i}]`;
    const source = await sourceFor(item.sourceRef?.storeRef ?? spec.secretStoreRef);
    try {
      let v = await single(source, item.remoteRef, where);
      v = decodeValue(item.remoteRef.decodingStrategy, v);
      checkNullBytes(item.remoteRef.nullBytePolicy, new Map([[item.secretKey, v]]), where);
      data.set(item.secretKey, v);
    } catch (e) {
      if (tolerate(e, where)) continue;
      throw e;
    }
  }
  return { data, missing };
}

/** The remote secret's data, or its custom metadata (metadataPolicy Fetch: null when it has none, as ESO's nil). */
async function fetchData(
  source: SecretSource,
  ref: ExternalSecretDataRemoteRef,
  where: string,
): Promise<Record<string, unknown> | null> {
  if (ref.metadataPolicy === 'Fetch') {
    if (source.kvVersion === 1)
      throw new EsoDataError(`${where}: cannot perform metadata fetch operations with kv version v1`);
    const meta = await source.readMetadata(ref.key);
    // ESO: "secret not found", not its NoSecretError, so deletionPolicy Delete/Merge do not skip it.
    if (!meta) throw new EsoDataError(`${where}: secret not found`);
    return Object.keys(meta).length === 0 ? null : meta;
  }
  const data = await source.read(ref.key, ref.version);
  if (!data) throw new NoSecretError(where);
  return data;
}

async function single(source: SecretSource, ref: ExternalSecretDataRemoteRef, where: string): Promise<Buffer> {
  const data = await fetchData(source, ref, where);
  if (data === null) return Buffer.alloc(0); // ESO's GetSecret returns nil bytes: an empty key
  try {
    return secretValue(data, ref.property);
  } catch (e) {
    throw e instanceof ReconcileError ? new EsoDataError(`${where}: ${e.message}`, e.reason) : e;
  }
}

async function extract(
  source: SecretSource,
  ref: ExternalSecretDataRemoteRef,
  where: string,
): Promise<Map<string, Buffer>> {
  const data = await fetchData(source, ref, where);
  if (data === null) throw new EsoDataError(`${where}: unexpected end of JSON input`); // ESO unmarshals nil bytes
  try {
    return secretMap(data, ref.property);
  } catch (e) {
    throw e instanceof ReconcileError ? new EsoDataError(`${where}: ${e.message}`, e.reason) : e;
  }
}

/** ESO's GetAllSecrets: list recursively under `path`, keep names matching the regexp or all tags. */
async function find(source: SecretSource, ref: ExternalSecretFind): Promise<Map<string, Buffer>> {
  if (source.kvVersion === 1 && ref.tags)
    throw new EsoDataError('cannot perform find by tag operations with kv version v1');
  const candidates = await listRecursive(source, ref.path ? `${ref.path}/` : '');
  const out = new Map<string, Buffer>();
  const nameRe = ref.name?.regexp !== undefined ? compileGoRegexp(ref.name.regexp) : undefined;
  for (const name of candidates) {
    if (nameRe) {
      if (!nameRe.test(name)) continue;
    } else {
      const meta = await source.readMetadata(name);
      if (!meta) throw new EsoDataError(`secret not found: ${name}`);
      const tags = Object.entries(ref.tags ?? {});
      if (!tags.every(([k, v]) => meta[k] === v)) continue;
    }
    const data = await source.read(name);
    if (data) out.set(name, secretValue(data, undefined));
  }
  return out;
}

async function listRecursive(source: SecretSource, path: string): Promise<string[]> {
  const entries = await source.list(path);
  if (entries === undefined) throw new NoSecretError(`find at path "${path}"`);
  const out: string[] = [];
  for (const e of entries) {
    const full = path + e;
    if (e.endsWith('/'))
      out.push(
        ...(await listRecursive(source, full).catch((err: unknown) => {
          if (err instanceof NoSecretError) return [];
          throw err;
        })),
      );
    else out.push(full);
  }
  return out;
}

/** nullBytePolicy Fail (ESO v2.3+ validateFetchedSecretMap): the first key in sorted order whose value has a NUL byte, in ESO's words. */
function checkNullBytes(policy: 'Ignore' | 'Fail' | undefined, m: Map<string, Buffer>, where: string): void {
  if (policy !== 'Fail') return;
  for (const k of [...m.keys()].sort()) {
    if (m.get(k)?.includes(0))
      throw new EsoDataError(
        `${where}: fetched secret value for key ${JSON.stringify(k)} contains null bytes; use a text-safe format such as PEM/base64 or leave nullBytePolicy unset for intentional binary data`,
      );
  }
}
