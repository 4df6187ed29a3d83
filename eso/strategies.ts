// ESO's decodingStrategy (runtime/decoding) and conversionStrategy (esutils.ConvertKeys), byte-for-byte.
import { EsoDataError } from './errors.ts';
export type DecodingStrategy = 'Auto' | 'Base64' | 'Base64URL' | 'None';
export type ConversionStrategy = 'Default' | 'Unicode';

const STD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL = /^[A-Za-z0-9\-_]*={0,2}$/;

/** Go's base64.{Std,URL}Encoding.DecodeString: padded, strict alphabet, \r and \n ignored. */
function strictBase64(text: string, url: boolean): Buffer | undefined {
  const clean = text.replace(/[\r\n]/g, '');
  if (clean.length % 4 !== 0 || !(url ? URL : STD).test(clean)) return undefined;
  const pad = clean.length - clean.replace(/=+$/, '').length;
  if (pad > 0 && clean.length === 0) return undefined;
  return Buffer.from(url ? clean.replace(/-/g, '+').replace(/_/g, '/') : clean, 'base64');
}

export class DecodingError extends EsoDataError {
  override readonly name = 'DecodingError';
  constructor(message: string) {
    super(message, 'DecodingFailed');
  }
}

/** Decode one value; Auto tries Base64, then Base64URL, else keeps the bytes as they are. */
export function decodeValue(strategy: DecodingStrategy | undefined, value: Buffer): Buffer {
  switch (strategy ?? 'None') {
    case 'None':
      return value;
    case 'Base64': {
      const out = strictBase64(value.toString('latin1'), false);
      if (!out) throw new DecodingError('failed to decode value with decodingStrategy Base64: illegal base64 data');
      return out;
    }
    case 'Base64URL': {
      const out = strictBase64(value.toString('latin1'), true);
      if (!out) throw new DecodingError('failed to decode value with decodingStrategy Base64URL: illegal base64 data');
      return out;
    }
    case 'Auto':
      return strictBase64(value.toString('latin1'), false) ?? strictBase64(value.toString('latin1'), true) ?? value;
    default:
      throw new DecodingError(`decoding strategy ${String(strategy)} is not supported`);
  }
}

export function decodeMap(strategy: DecodingStrategy | undefined, m: Map<string, Buffer>): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of m) out.set(k, decodeValue(strategy, v));
  return out;
}

/** One key: every rune that is not a letter, a number, '-', '.' or '_' becomes '_' (Default) or `_Uxxxx_` (Unicode). */
export function convertKey(strategy: ConversionStrategy | undefined, key: string): string {
  let out = '';
  for (const ch of key) {
    if (/[\p{L}\p{N}\-._]/u.test(ch)) {
      out += ch;
      continue;
    }
    out += strategy === 'Unicode' ? `_U${ch.codePointAt(0)!.toString(16).padStart(4, '0')}_` : '_';
  }
  return out;
}

export function convertKeys(strategy: ConversionStrategy | undefined, m: Map<string, Buffer>): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of m) {
    const key = convertKey(strategy, k);
    if (out.has(key)) throw new EsoDataError(`secret name collision during conversion: ${key}`);
    out.set(key, v);
  }
  return out;
}
