// How ESO turns provider values into Secret bytes (esutils.GetByteValue) and picks a property out of a
// KV secret (vault provider getSecretValue): top-level key first, then a gjson path.
import { goJson, gjsonGet } from '../golang/index.ts';
import { EsoDataError } from './errors.ts';

export class SecretKeyMissingError extends EsoDataError {
  override readonly name = 'SecretKeyMissingError';
  constructor(readonly property: string) {
    // ESO's errSecretKeyFmt, so users searching for the message find the same meaning.
    super(`cannot find secret data for key: ${JSON.stringify(property)}`, 'SecretKeyMissing');
  }
}

/** strconv.FormatFloat(f, 'f', -1, 64): shortest repr, never an exponent. */
export function formatFloatF(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  const [mant = '0', expText = '0'] = s.toLowerCase().split('e');
  const exp = Number(expText);
  const neg = mant.startsWith('-');
  const digits = mant.replace(/^-/, '').replace('.', '');
  const pointAt =
    (mant.replace(/^-/, '').indexOf('.') < 0 ? mant.replace(/^-/, '').length : mant.replace(/^-/, '').indexOf('.')) +
    exp;
  let out: string;
  if (pointAt <= 0) out = `0.${'0'.repeat(-pointAt)}${digits}`;
  else if (pointAt >= digits.length) out = digits + '0'.repeat(pointAt - digits.length);
  else out = `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
  return (neg ? '-' : '') + out;
}

/** esutils.GetByteValue for JSON-decoded values. */
export function byteValue(v: unknown): Buffer {
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (v === null || v === undefined) return Buffer.alloc(0);
  if (typeof v === 'number') return Buffer.from(formatFloatF(v), 'utf8');
  if (typeof v === 'boolean') return Buffer.from(String(v), 'utf8');
  if (Buffer.isBuffer(v)) return v;
  return Buffer.from(goJson(v), 'utf8'); // maps and arrays: json.Marshal
}

/**
 * vault provider getSecretValue: no property → the whole secret as JSON; a top-level key → its value
 * (takes precedence over gjson syntax, for backwards compatibility); otherwise a gjson path.
 */
export function secretValue(data: Record<string, unknown>, property: string | undefined): Buffer {
  if (!property) return Buffer.from(goJson(data), 'utf8');
  if (Object.prototype.hasOwnProperty.call(data, property)) return byteValue(data[property]);
  const found = gjsonGet(data, property);
  if (!found.exists) throw new SecretKeyMissingError(property);
  return Buffer.from(found.text, 'utf8');
}

/** GetSecretMap: the (sub-)object at `property` as key → bytes; a non-object is an error as in ESO. */
export function secretMap(data: Record<string, unknown>, property: string | undefined): Map<string, Buffer> {
  const raw = secretValue(data, property).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new EsoDataError(
      `the value at ${property ? `property ${JSON.stringify(property)}` : 'the key'} is not a JSON object, so it cannot be extracted into several keys`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new EsoDataError(
      `the value at ${property ? `property ${JSON.stringify(property)}` : 'the key'} is not a JSON object, so it cannot be extracted into several keys`,
    );
  }
  const out = new Map<string, Buffer>();
  for (const [k, v] of Object.entries(parsed as Record<string, unknown>)) out.set(k, byteValue(v));
  return out;
}
