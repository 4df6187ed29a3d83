// Normalised Kubernetes API errors. Only the Status reason/message and the HTTP code survive: response
// bodies and headers are never copied into messages (client-node's ApiException.message embeds both, and
// headers or echoed request bodies can carry bearer tokens or secret data).

/** Reasons are metav1.StatusReason values, plus two for failures that never reached the apiserver. */
export type KubeErrorReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'Forbidden'
  | 'Unauthorized'
  | 'BadRequest'
  | 'MethodNotAllowed'
  | 'UnsupportedMediaType'
  | 'TooManyRequests'
  | 'Timeout'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Expired'
  | 'NetworkError'
  | 'ClientTimeout'
  | 'Unknown'
  | (string & {});

const MAX_MESSAGE = 400;

export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  /** HTTP status code; 0 when the request never got an answer (network error, client timeout). */
  readonly code: number;
  readonly reason: KubeErrorReason;

  constructor(code: number, reason: KubeErrorReason, message: string) {
    super(message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message);
    this.code = code;
    this.reason = reason;
  }

  toJSON(): { code: number; reason: string; message: string } {
    return { code: this.code, reason: this.reason, message: this.message };
  }
}

const REASON_BY_CODE: Record<number, KubeErrorReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  409: 'Conflict',
  410: 'Gone',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** Build a KubeApiError from an HTTP status and a (possibly non-JSON) response body. */
export function errorFromResponse(code: number, body: unknown): KubeApiError {
  const status = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const reason =
    typeof status.reason === 'string' && status.reason ? status.reason : (REASON_BY_CODE[code] ?? 'Unknown');
  const message = typeof status.message === 'string' && status.message ? status.message : `HTTP ${code}`;
  return new KubeApiError(code, reason, message);
}

/** Wrap anything thrown by the transport: error messages from sockets carry no secrets, but cap them. */
export function toKubeError(err: unknown): KubeApiError {
  if (err instanceof KubeApiError) return err;
  const e = err as { name?: string; code?: string; message?: string } | undefined;
  if (e?.name === 'TimeoutError') return new KubeApiError(0, 'ClientTimeout', 'request timed out (client side)');
  if (e?.name === 'AbortError') return new KubeApiError(0, 'ClientTimeout', 'request aborted');
  return new KubeApiError(0, 'NetworkError', `network error: ${e?.code ?? e?.message ?? String(err)}`);
}

export const isNotFound = (e: unknown): boolean => e instanceof KubeApiError && e.code === 404;
export const isConflict = (e: unknown): boolean => e instanceof KubeApiError && e.code === 409;
export const isAlreadyExists = (e: unknown): boolean => e instanceof KubeApiError && e.reason === 'AlreadyExists';
export const isGone = (e: unknown): boolean =>
  e instanceof KubeApiError && (e.code === 410 || e.reason === 'Gone' || e.reason === 'Expired');
