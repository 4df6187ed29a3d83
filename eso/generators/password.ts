// ESO's Password generator (pkg/generator/password/password.go on sethvargo/go-password's Generate):
// `length` characters (0: 24), `digits` and `symbols` of them (each default 25 % of length, rounded
// down), the rest letters (lower case, plus upper case unless noUpper); without allowRepeat no character
// appears twice. Each character is drawn with crypto-random integers and inserted at a crypto-random
// position, in go-password's order (letters, digits, symbols), so the distribution is ESO's.
import { randomInt } from 'node:crypto';
import type { PasswordSpec } from '../../schemas/types.generated.ts';

/** The generator's spec as its schema declares it (schemas/types.generated.ts). */
export type PasswordSpecInput = PasswordSpec;

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
/** go-password's Symbols, ESO's defaultSymbolChars. */
export const DEFAULT_SYMBOLS = '~!@#$%^&*()_+`-={}|[]\\:"<>?,./';
const DEFAULT_LENGTH = 24;
/** A bound ESO does not have: a tenant's manifest must not make the controller build a gigabyte string. */
export const MAX_PASSWORD_LENGTH = 4096;

interface Resolved {
  length: number;
  digits: number;
  symbols: number;
  letters: string;
  symbolSet: string;
  allowRepeat: boolean;
}

function resolve(s: PasswordSpecInput): Resolved {
  const length = s.length && s.length > 0 ? s.length : DEFAULT_LENGTH;
  // Go: int(float32(passLen) * 0.25).
  const quarter = Math.trunc(length * 0.25);
  return {
    length,
    digits: s.digits ?? quarter,
    symbols: s.symbols ?? quarter,
    letters: s.noUpper ? LOWER : LOWER + UPPER,
    // go-password's NewGenerator: an empty Symbols means its default.
    symbolSet: s.symbolCharacters ? s.symbolCharacters : DEFAULT_SYMBOLS,
    allowRepeat: s.allowRepeat === true,
  };
}

/** Why this spec cannot generate (go-password's errors, and vaultgate's length bound), or undefined. */
export function passwordProblem(s: PasswordSpecInput): { field: string; message: string } | undefined {
  const r = resolve(s);
  if (r.length > MAX_PASSWORD_LENGTH)
    return { field: 'length', message: `length must be at most ${MAX_PASSWORD_LENGTH}` };
  if (r.digits < 0 || r.symbols < 0)
    return { field: r.digits < 0 ? 'digits' : 'symbols', message: 'must not be negative' };
  const chars = r.length - r.digits - r.symbols;
  if (chars < 0) return { field: 'length', message: 'number of digits and symbols must be less than total length' };
  if (!r.allowRepeat) {
    if (chars > r.letters.length)
      return {
        field: 'length',
        message: 'number of letters exceeds available letters and repeats are not allowed',
      };
    if (r.digits > DIGITS.length)
      return { field: 'digits', message: 'number of digits exceeds available digits and repeats are not allowed' };
    // go-password counts bytes; a repeated symbol character counts once (it can be drawn only once).
    if (r.symbols > new Set(Buffer.from(r.symbolSet, 'utf8')).size)
      return {
        field: 'symbols',
        message: 'number of symbols exceeds available symbols and repeats are not allowed',
      };
  }
  return undefined;
}

export type RandomInt = (maxExclusive: number) => number;

/**
 * A password as ESO generates it (bytes: ESO's map value). Throws (a message without any value) when
 * `passwordProblem` says so, or when symbols that are also letters or digits run out without repeats
 * (go-password loops forever there; a tenant's spec must not hang the controller).
 */
export function generatePassword(s: PasswordSpecInput, random: RandomInt = (n) => randomInt(n)): Buffer {
  const problem = passwordProblem(s);
  if (problem) throw new Error(`spec.${problem.field}: ${problem.message}`);
  const r = resolve(s);
  // go-password indexes bytes (string(s[n])): a multi-byte symbol set yields its bytes, as in ESO.
  const chars: number[] = [];
  const used = new Set<number>();
  const draw = (set: Buffer, count: number): void => {
    const fresh = new Set([...set].filter((b) => !used.has(b)));
    for (let i = 0; i < count;) {
      if (!r.allowRepeat && fresh.size === 0)
        throw new Error('spec.symbols: number of symbols exceeds available symbols and repeats are not allowed');
      const ch = set[random(set.length)]!;
      if (!r.allowRepeat && used.has(ch)) continue;
      chars.splice(chars.length === 0 ? 0 : random(chars.length + 1), 0, ch);
      used.add(ch);
      fresh.delete(ch);
      i++;
    }
  };
  draw(Buffer.from(r.letters, 'latin1'), r.length - r.digits - r.symbols);
  draw(Buffer.from(DIGITS, 'latin1'), r.digits);
  draw(Buffer.from(r.symbolSet, 'utf8'), r.symbols);
  return Buffer.from(chars);
}
