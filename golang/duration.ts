// Go duration strings, the one parser of the project (ESO's fields, sprig's duration functions in
// templates, vaultgate's TTLs all read through it; schemas/ttl.ts narrows the grammar for vaultgate's own
// fields). parseGoDurationNs is Go's time.ParseDuration, as ESO reads `refreshInterval` (metav1.Duration)
// and `retryInterval`: an optional sign, then one or more decimal numbers each with a unit (ns, us, µs,
// ms, s, m, h); "0" alone needs no unit. parseGoDuration is the same in milliseconds. Error texts are
// Go's, so users searching them find the same meaning. formatGoDuration is time.Duration.String.

/** Nanoseconds per unit (Go's unitMap), "µs" as U+00B5 and U+03BC. */
const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const LIMIT = 1n << 63n;

export type DurationResult = { ok: true; ms: number } | { ok: false; error: string };
export type DurationNsResult = { ok: true; ns: bigint } | { ok: false; error: string };

/** Go's time.quote: printable ASCII as is (with `"` and `\` escaped), every other byte as \xNN. */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (c >= 0x80 || c < 0x20) for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    else out += ch === '"' || ch === '\\' ? `\\${ch}` : ch;
  }
  return `${out}"`;
}

/**
 * Go's time.ParseDuration, step for step (int64 nanoseconds, overflow where Go overflows, the fraction
 * through float64 as Go computes it): nanoseconds, or Go's error text.
 */
export function parseGoDurationNs(text: string): DurationNsResult {
  // Built only when returned: quoting the text costs more than parsing a valid duration.
  const invalid = (): DurationNsResult => ({ ok: false, error: `time: invalid duration ${goQuote(text)}` });
  let s = text;
  let neg = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    neg = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return { ok: true, ns: 0n };
  if (s === '') return invalid();
  let d = 0n;
  while (s !== '') {
    if (!/^[0-9.]/.test(s)) return invalid();
    const whole = /^[0-9]*/.exec(s)![0];
    s = s.slice(whole.length);
    let v = 0n;
    for (const c of whole) {
      if (v > LIMIT / 10n) return invalid();
      v = v * 10n + BigInt(c);
      if (v > LIMIT) return invalid();
    }
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s.startsWith('.')) {
      const frac = /^[0-9]*/.exec(s.slice(1))![0];
      s = s.slice(1 + frac.length);
      post = frac.length > 0;
      let overflow = false;
      for (const c of frac) {
        if (overflow) continue;
        if (f > (LIMIT - 1n) / 10n) {
          overflow = true;
          continue;
        }
        const y = f * 10n + BigInt(c);
        if (y > LIMIT) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
    }
    if (whole === '' && !post) return invalid();
    const unit = /^[^0-9.]*/.exec(s)![0];
    if (unit === '') return { ok: false, error: `time: missing unit in duration ${goQuote(text)}` };
    s = s.slice(unit.length);
    const factor = UNIT_NS[unit];
    if (factor === undefined)
      return { ok: false, error: `time: unknown unit ${goQuote(unit)} in duration ${goQuote(text)}` };
    if (v > LIMIT / factor) return invalid();
    v *= factor;
    if (f > 0n) {
      v += BigInt(Math.trunc(Number(f) * (Number(factor) / scale)));
      if (v > LIMIT) return invalid();
    }
    d += v;
    if (d > LIMIT) return invalid();
  }
  if (neg) return { ok: true, ns: -d };
  if (d > LIMIT - 1n) return invalid();
  return { ok: true, ns: d };
}

/**
 * Results of parseGoDuration for short texts. Admission parses the same few intervals ("1h", "15s") on
 * every review, and the BigInt parse costs several microseconds each time; bounded, cleared when full.
 */
const parsedMs = new Map<string, DurationResult>();
const PARSED_MAX = 512;
const PARSED_TEXT_MAX = 32;

/** Go's time.ParseDuration in milliseconds (signed), or Go's error text. */
export function parseGoDuration(text: string): DurationResult {
  const known = parsedMs.get(text);
  // A copy: a caller may change the object it gets.
  if (known !== undefined) return known.ok ? { ok: true, ms: known.ms } : { ok: false, error: known.error };
  const r = parseGoDurationNs(text);
  const result: DurationResult = r.ok ? { ok: true, ms: Number(r.ns) / 1e6 } : r;
  if (typeof text === 'string' && text.length <= PARSED_TEXT_MAX) {
    if (parsedMs.size >= PARSED_MAX) parsedMs.clear();
    parsedMs.set(text, result.ok ? { ok: true, ms: result.ms } : { ok: false, error: result.error });
  }
  return result;
}

/** time.Duration(ns).String(): "1h2m3.5s", "1.5ms", "0s". */
export function formatGoDuration(ns: number): string {
  if (ns === 0) return '0s';
  const neg = ns < 0;
  let u = Math.abs(ns);
  let out: string;
  if (u < 1e9) {
    const [unit, div] = u < 1e3 ? ['ns', 1] : u < 1e6 ? ['µs', 1e3] : ['ms', 1e6];
    out = `${trimFrac(u / div)}${unit}`;
  } else {
    const h = Math.floor(u / 3.6e12);
    u -= h * 3.6e12;
    const m = Math.floor(u / 6e10);
    u -= m * 6e10;
    const s = trimFrac(u / 1e9);
    out = h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
  }
  return (neg ? '-' : '') + out;
}

function trimFrac(x: number): string {
  return String(Number(x.toFixed(9)));
}
