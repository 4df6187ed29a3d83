// ESO's VaultDynamicSecret generator request and answer (pkg/generator/vault/vault.go): method "" or GET
// reads the path, LIST lists it, any other writes `parameters` to it (the Vault client's Write: PUT);
// resultType Data takes the answer's data, Auth its auth block, Raw the whole answer; each key's value
// becomes bytes as ESO's GetByteValue. DELETE is refused at admission (webhook/rules/eso/generator-rules.ts).
// The answer's lease, if it has one, is returned apart so the caller can keep it alive.
import { EsoDataError } from '../errors.ts';
import { byteValue } from '../values.ts';

/** What sends one Vault request (vault/types.ts VaultRequester fits; eso/ does not import vault/). */
export interface GeneratorRequester {
  request<T>(req: {
    operation: string;
    method: 'GET' | 'LIST' | 'PUT';
    path: string;
    body?: Record<string, unknown>;
  }): Promise<T | undefined>;
}

export interface VaultGeneratorSpec {
  method?: string;
  parameters?: unknown;
  resultType?: 'Data' | 'Auth' | 'Raw';
  path: string;
  allowEmptyResponse?: boolean;
}

export interface VaultAnswer {
  request_id?: string;
  lease_id?: string;
  lease_duration?: number;
  renewable?: boolean;
  data?: Record<string, unknown> | null;
  auth?: Record<string, unknown> | null;
  warnings?: unknown;
  wrap_info?: unknown;
}

export interface Generated {
  /** The Secret's keys: never logged, never in a status or an error. */
  data: Map<string, Buffer>;
  /** The answer's lease (a dynamic credential), or undefined (a KV read, a token from auth/token/create). */
  lease?: { id: string; durationSeconds: number; renewable: boolean };
}

/** One request as ESO's fetchVaultSecret sends it; undefined for an empty answer (a 204, or no data). */
export async function requestVaultGenerator(
  vault: GeneratorRequester,
  spec: VaultGeneratorSpec,
): Promise<VaultAnswer | undefined> {
  const method = (spec.method ?? '').toUpperCase();
  const path = spec.path.replace(/^\/+/, '');
  if (method === '' || method === 'GET')
    return vault.request<VaultAnswer>({ operation: 'generator.vault.read', method: 'GET', path });
  if (method === 'LIST') return vault.request<VaultAnswer>({ operation: 'generator.vault.list', method: 'LIST', path });
  if (method === 'DELETE') throw new EsoDataError('spec.method: DELETE is refused by vaultgate', 'InvalidSpec');
  const body = spec.parameters;
  if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body)))
    throw new EsoDataError('spec.parameters: must be a JSON object', 'InvalidSpec');
  return vault.request<VaultAnswer>({
    operation: 'generator.vault.write',
    method: 'PUT',
    path,
    body: (body ?? {}) as Record<string, unknown>,
  });
}

/** ESO's prepareResponse, and the lease. Throws ESO's "empty response" unless allowEmptyResponse. */
export function generatedFrom(spec: VaultGeneratorSpec, answer: VaultAnswer | undefined): Generated {
  const empty = answer === undefined || (spec.resultType !== 'Raw' && spec.resultType !== 'Auth' && !answer.data);
  if (empty && !answer?.lease_id) {
    if (spec.allowEmptyResponse) return { data: new Map() };
    throw new EsoDataError('unable to get dynamic secret: empty response from Vault', 'SecretSyncedError');
  }
  const source =
    spec.resultType === 'Auth'
      ? (answer?.auth ?? {})
      : spec.resultType === 'Raw'
        ? (answer ?? {})
        : (answer?.data ?? {});
  const data = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(source)) data.set(k, byteValue(v));
  const lease =
    typeof answer?.lease_id === 'string' && answer.lease_id !== ''
      ? {
          id: answer.lease_id,
          durationSeconds: typeof answer.lease_duration === 'number' ? answer.lease_duration : 0,
          renewable: answer.renewable === true,
        }
      : undefined;
  return { data, ...(lease ? { lease } : {}) };
}
