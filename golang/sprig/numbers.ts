// Sprig's numeric functions (numeric.go: arithmetic, seq, until, round, shopspring/decimal's add/sub/mul/div).
import { fail } from '../func.ts';
import { typedSlice, GoNum, float64 } from '../values.ts';
import { castFloat } from './cast.ts';

export function untilStep(start: number, stop: number, step: number): number[] {
  const v: number[] = [];
  const cap = 1_000_000;
  if (stop < start) {
    if (step >= 0) return typedSlice(v, 'int');
    for (let i = start; i > stop; i += step) {
      v.push(i);
      if (v.length > cap) fail('list exceeds 1000000 elements');
    }
    return typedSlice(v, 'int');
  }
  if (step <= 0) return typedSlice(v, 'int');
  for (let i = start; i < stop; i += step) {
    v.push(i);
    if (v.length > cap) fail('list exceeds 1000000 elements');
  }
  return typedSlice(v, 'int');
}

export function seq(...params: number[]): string {
  let inc = 1;
  let list: number[];
  switch (params.length) {
    case 0:
      return '';
    case 1: {
      const end = params[0]!;
      if (end < 1) inc = -1;
      list = untilStep(1, end + inc, inc);
      break;
    }
    case 2: {
      const [start, end] = params as [number, number];
      const step = end < start ? -1 : 1;
      list = untilStep(start, end + step, step);
      break;
    }
    case 3: {
      const [start, step, end] = params as [number, number, number];
      if (end < start) {
        inc = -1;
        if (step > 0) return '';
      }
      list = untilStep(start, end + inc, step);
      break;
    }
    default:
      return '';
  }
  return list.join(' ');
}

/** shopspring/decimal arithmetic as Sprig's addf…divf use it: exact on the floats' shortest decimals. */
export function decimalOp(a: unknown, rest: unknown[], op: '+' | '-' | '*' | '/'): GoNum {
  const toDec = (x: number): { int: bigint; exp: number } => {
    if (!Number.isFinite(x)) return { int: 0n, exp: 0 };
    const [mant = '0', e = '0'] = x.toExponential().split('e');
    const digits = mant.replace('.', '').replace('-', '');
    const frac = (mant.split('.')[1] ?? '').length;
    const sign = x < 0 ? -1n : 1n;
    return { int: sign * BigInt(digits), exp: Number(e) - frac };
  };
  const fromDec = (d: { int: bigint; exp: number }): number => Number(`${d.int}e${d.exp}`);
  let acc = toDec(castFloat(a));
  for (const x of rest) {
    const b = toDec(castFloat(x));
    const e = Math.min(acc.exp, b.exp);
    const ai = acc.int * 10n ** BigInt(acc.exp - e);
    const bi = b.int * 10n ** BigInt(b.exp - e);
    if (op === '+') acc = { int: ai + bi, exp: e };
    else if (op === '-') acc = { int: ai - bi, exp: e };
    else if (op === '*') acc = { int: acc.int * b.int, exp: acc.exp + b.exp };
    else {
      if (b.int === 0n) fail('decimal division by 0');
      // DivRound to DivisionPrecision (16) decimal places, half away from zero.
      const shift = acc.exp - b.exp + 16;
      const num = acc.int * 10n ** BigInt(Math.max(shift, 0)) * 10n;
      const den = b.int * 10n ** BigInt(Math.max(-shift, 0));
      let q = num / den;
      const rem = q % 10n;
      q = q / 10n + (rem >= 5n ? 1n : rem <= -5n ? -1n : 0n);
      acc = { int: q, exp: -16 };
    }
  }
  return float64(fromDec(acc));
}

export function round(a: unknown, p: number, ...opt: unknown[]): GoNum {
  const roundOn = opt.length > 0 ? castFloat(opt[0]) : 0.5;
  const val = castFloat(a);
  const pow = 10 ** p;
  const digit = pow * val;
  const div = digit - Math.trunc(digit);
  const r = div >= roundOn ? Math.ceil(digit) : Math.floor(digit);
  return float64(r / pow);
}
