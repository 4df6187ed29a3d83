// Go's time formatting for Sprig's date functions: time.Time.Format with Go's reference layout
// ("2006-01-02 15:04:05.999999999 -0700 MST"), time.LoadLocation through the IANA database Node ships
// (Intl). "Local" is UTC: the controller's image has no local zone, like ESO's.
import type { GoFunc } from './func.ts';
import { GoNum, GoTime, goString, utf8Text } from './values.ts';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** time.LoadLocation: a fixed zone for `name` at `ms`, or undefined if the name is not known. */
export function loadLocation(name: string, ms: number): { name: string; offsetSeconds: number } | undefined {
  if (name === '' || name === 'UTC' || name === 'Local') return { name: 'UTC', offsetSeconds: 0 };
  try {
    const parts = new Intl.DateTimeFormat('en-US', { timeZone: name, timeZoneName: 'longOffset' }).formatToParts(
      new Date(ms),
    );
    const off = parts.find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
    const m = /GMT([+-])(\d{2}):(\d{2})/.exec(off);
    const offsetSeconds = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60) : 0;
    const short =
      new Intl.DateTimeFormat('en-US', { timeZone: name, timeZoneName: 'short' })
        .formatToParts(new Date(ms))
        .find((p) => p.type === 'timeZoneName')?.value ?? '';
    // Go prints the zone's abbreviation from tzdata; Intl gives one for some zones and GMT±h for others.
    const abbr = /^[A-Z]{2,5}$/.test(short) && short !== 'GMT' ? short : offsetAbbrev(offsetSeconds);
    return {
      name:
        offsetSeconds === 0 && (short === 'GMT' || short === 'UTC')
          ? name.startsWith('Etc/') || name === 'GMT'
            ? short
            : 'GMT'
          : abbr,
      offsetSeconds,
    };
  } catch {
    return undefined;
  }
}

function offsetAbbrev(off: number): string {
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  const h = Math.floor(a / 3600);
  const m = Math.floor((a % 3600) / 60);
  return `${sign}${String(h).padStart(2, '0')}${m ? String(m).padStart(2, '0') : ''}`;
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

/** time.Time.Format(layout). */
export function formatGoTime(t: GoTime, layout: string): string {
  const local = new Date(t.ms + t.zone.offsetSeconds * 1000);
  const Y = local.getUTCFullYear();
  const M = local.getUTCMonth();
  const D = local.getUTCDate();
  const h = local.getUTCHours();
  const mi = local.getUTCMinutes();
  const s = local.getUTCSeconds();
  const ns = (((t.ms % 1000) + 1000) % 1000) * 1e6 + t.nanos;
  const wd = local.getUTCDay();
  const yday = Math.floor((Date.UTC(Y, M, D) - Date.UTC(Y, 0, 1)) / 864e5) + 1;
  const off = t.zone.offsetSeconds;
  const zone = (colon: boolean, seconds: boolean, short: boolean, z: boolean): string => {
    if (z && off === 0) return 'Z';
    const a = Math.abs(off);
    const sign = off < 0 ? '-' : '+';
    const hh = pad(Math.floor(a / 3600), 2);
    const mm = pad(Math.floor((a % 3600) / 60), 2);
    const ss = pad(a % 60, 2);
    if (short) return sign + hh;
    return sign + hh + (colon ? ':' : '') + mm + (seconds ? (colon ? ':' : '') + ss : '');
  };
  const tokens: Array<[string, () => string]> = [
    ['January', () => MONTHS[M]!],
    ['Jan', () => MONTHS[M]!.slice(0, 3)],
    ['Monday', () => DAYS[wd]!],
    ['Mon', () => DAYS[wd]!.slice(0, 3)],
    ['MST', () => (t.zone.name !== '' ? t.zone.name : zone(false, false, false, false))],
    ['2006', () => (Y < 0 ? `-${pad(-Y, 4)}` : pad(Y, 4))],
    ['2', () => String(D)],
    ['_2', () => String(D).padStart(2, ' ')],
    ['__2', () => String(yday).padStart(3, ' ')],
    ['002', () => pad(yday, 3)],
    ['02', () => pad(D, 2)],
    ['06', () => pad(Math.abs(Y) % 100, 2)],
    ['01', () => pad(M + 1, 2)],
    ['1', () => String(M + 1)],
    ['15', () => pad(h, 2)],
    ['03', () => pad(h % 12 === 0 ? 12 : h % 12, 2)],
    ['3', () => String(h % 12 === 0 ? 12 : h % 12)],
    ['04', () => pad(mi, 2)],
    ['4', () => String(mi)],
    ['05', () => pad(s, 2)],
    ['5', () => String(s)],
    ['PM', () => (h >= 12 ? 'PM' : 'AM')],
    ['pm', () => (h >= 12 ? 'pm' : 'am')],
    ['-07:00:00', () => zone(true, true, false, false)],
    ['-0700', () => zone(false, false, false, false)],
    ['-07:00', () => zone(true, false, false, false)],
    ['-070000', () => zone(false, true, false, false)],
    ['-07', () => zone(false, false, true, false)],
    ['Z07:00:00', () => zone(true, true, false, true)],
    ['Z0700', () => zone(false, false, false, true)],
    ['Z07:00', () => zone(true, false, false, true)],
    ['Z070000', () => zone(false, true, false, true)],
    ['Z07', () => zone(false, false, true, true)],
  ];
  let out = '';
  for (let i = 0; i < layout.length;) {
    // Fractional seconds: .000 / ,000 (fixed) or .999 (trailing zeros dropped) after a seconds field.
    const frac = /^[.,](0+|9+)/.exec(layout.slice(i));
    if (frac && /05|5$/.test(layout.slice(0, i)) && !/[0-9]/.test(layout[i + frac[0].length] ?? '')) {
      const n = frac[1]!.length;
      let digits = pad(ns, 9).slice(0, n);
      if (frac[1]![0] === '9') digits = digits.replace(/0+$/, '');
      out += digits ? layout[i]! + digits : '';
      i += frac[0].length;
      continue;
    }
    const tok = longestToken(layout, i, tokens);
    if (tok) {
      out += tok[1]();
      i += tok[0].length;
    } else {
      out += layout[i];
      i++;
    }
  }
  return out;
}

function longestToken(
  layout: string,
  i: number,
  tokens: Array<[string, () => string]>,
): [string, () => string] | undefined {
  let best: [string, () => string] | undefined;
  for (const t of tokens) {
    if (layout.startsWith(t[0], i) && (!best || t[0].length > best[0].length)) {
      // Go reads "Jan"/"Mon" only when not followed by a lowercase letter that would make another word.
      if (
        (t[0] === 'Jan' || t[0] === 'Mon') &&
        /[a-z]/.test(layout[i + 3] ?? '') &&
        !layout.startsWith(t[0] === 'Jan' ? 'January' : 'Monday', i)
      )
        continue;
      best = t;
    }
  }
  return best;
}

// ---- time.ParseInLocation(layout, value, Local) with Local = UTC (Sprig's toDate/mustToDate) ----

type Std =
  | 'LongMonth'
  | 'Month'
  | 'NumMonth'
  | 'ZeroMonth'
  | 'LongWeekDay'
  | 'WeekDay'
  | 'Day'
  | 'UnderDay'
  | 'ZeroDay'
  | 'UnderYearDay'
  | 'ZeroYearDay'
  | 'Hour'
  | 'Hour12'
  | 'ZeroHour12'
  | 'Minute'
  | 'ZeroMinute'
  | 'Second'
  | 'ZeroSecond'
  | 'LongYear'
  | 'Year'
  | 'PM'
  | 'pm'
  | 'TZ'
  | 'ISO8601TZ'
  | 'ISO8601SecondsTZ'
  | 'ISO8601ShortTZ'
  | 'ISO8601ColonTZ'
  | 'ISO8601ColonSecondsTZ'
  | 'NumTZ'
  | 'NumSecondsTz'
  | 'NumShortTZ'
  | 'NumColonTZ'
  | 'NumColonSecondsTZ'
  | 'FracSecond0'
  | 'FracSecond9';

/** Zone offsets after "-" and after "Z", longest first (Go's nextStdChunk order): text, "-" chunk, "Z" chunk. */
const ZONE_CHUNKS: ReadonlyArray<readonly [string, Std, Std]> = [
  ['070000', 'NumSecondsTz', 'ISO8601SecondsTZ'],
  ['07:00:00', 'NumColonSecondsTZ', 'ISO8601ColonSecondsTZ'],
  ['0700', 'NumTZ', 'ISO8601TZ'],
  ['07:00', 'NumColonTZ', 'ISO8601ColonTZ'],
  ['07', 'NumShortTZ', 'ISO8601ShortTZ'],
];

interface Chunk {
  prefix: string;
  std?: Std;
  suffix: string;
  digits: number;
}

const STD0X: Std[] = ['ZeroMonth', 'ZeroDay', 'ZeroHour12', 'ZeroMinute', 'ZeroSecond', 'Year'];
const isDigitAt = (s: string, i: number): boolean => i < s.length && s[i]! >= '0' && s[i]! <= '9';
const startsWithLower = (s: string): boolean => s.length > 0 && s[0]! >= 'a' && s[0]! <= 'z';

/** time's nextStdChunk: the layout text before the first element, the element, the rest. */
function nextStdChunk(layout: string): Chunk {
  const at = (i: number, std: Std, len: number, prefixEnd = i): Chunk => ({
    prefix: layout.slice(0, prefixEnd),
    std,
    suffix: layout.slice(i + len),
    digits: 0,
  });
  for (let i = 0; i < layout.length; i++) {
    const c = layout[i]!;
    const has = (s: string): boolean => layout.startsWith(s, i);
    switch (c) {
      case 'J':
        if (has('Jan')) {
          if (has('January')) return at(i, 'LongMonth', 7);
          if (!startsWithLower(layout.slice(i + 3))) return at(i, 'Month', 3);
        }
        break;
      case 'M':
        if (layout.length >= i + 3) {
          if (has('Mon')) {
            if (has('Monday')) return at(i, 'LongWeekDay', 6);
            if (!startsWithLower(layout.slice(i + 3))) return at(i, 'WeekDay', 3);
          }
          if (has('MST')) return at(i, 'TZ', 3);
        }
        break;
      case '0':
        if (layout.length >= i + 2 && layout[i + 1]! >= '1' && layout[i + 1]! <= '6')
          return at(i, STD0X[layout.charCodeAt(i + 1) - 0x31]!, 2);
        if (has('002')) return at(i, 'ZeroYearDay', 3);
        break;
      case '1':
        if (has('15')) return at(i, 'Hour', 2);
        return at(i, 'NumMonth', 1);
      case '2':
        if (has('2006')) return at(i, 'LongYear', 4);
        return at(i, 'Day', 1);
      case '_':
        if (layout[i + 1] === '2') {
          if (layout.startsWith('2006', i + 1)) return at(i, 'LongYear', 5, i + 1);
          return at(i, 'UnderDay', 2);
        }
        if (has('__2')) return at(i, 'UnderYearDay', 3);
        break;
      case '3':
        return at(i, 'Hour12', 1);
      case '4':
        return at(i, 'Minute', 1);
      case '5':
        return at(i, 'Second', 1);
      case 'P':
        if (has('PM')) return at(i, 'PM', 2);
        break;
      case 'p':
        if (has('pm')) return at(i, 'pm', 2);
        break;
      case '-':
      case 'Z': {
        // Go's nextStdChunk tries the longest zone offsets first: -070000, -07:00:00, -0700, -07:00, -07.
        const zone = ZONE_CHUNKS.find(([text]) => has(`${c}${text}`));
        if (zone) return at(i, zone[c === '-' ? 1 : 2], zone[0].length + 1);
        break;
      }
      case '.':
      case ',':
        if (i + 1 < layout.length && (layout[i + 1] === '0' || layout[i + 1] === '9')) {
          const d = layout[i + 1]!;
          let j = i + 1;
          while (j < layout.length && layout[j] === d) j++;
          if (!isDigitAt(layout, j)) {
            // Go keeps the digit count in 12 bits of the code.
            return {
              prefix: layout.slice(0, i),
              std: d === '0' ? 'FracSecond0' : 'FracSecond9',
              suffix: layout.slice(j),
              digits: (j - (i + 1)) & 0xfff,
            };
          }
        }
        break;
    }
  }
  return { prefix: layout, suffix: '', digits: 0 };
}

const LONG_DAYS = DAYS;
const SHORT_DAYS = DAYS.map((d) => d.slice(0, 3));
const SHORT_MONTHS = MONTHS.map((m) => m.slice(0, 3));

/** time's match: ASCII case-insensitive equality of s1 and the start of s2. */
function matchFold(s1: string, s2: string): boolean {
  for (let i = 0; i < s1.length; i++) {
    let c1 = s1.charCodeAt(i);
    let c2 = s2.charCodeAt(i);
    if (c1 !== c2) {
      c1 |= 0x20;
      c2 |= 0x20;
      if (c1 !== c2 || c1 < 0x61 || c1 > 0x7a) return false;
    }
  }
  return true;
}

function lookup(tab: readonly string[], val: string): [number, string] | undefined {
  for (const [i, v] of tab.entries())
    if (val.length >= v.length && matchFold(val.slice(0, v.length), v)) return [i, val.slice(v.length)];
  return undefined;
}

/** time's leadingInt (uint64 with overflow detection) and atoi. */
function leadingInt(s: string): [bigint, string] | undefined {
  let i = 0;
  let x = 0n;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) break;
    if (x > (1n << 63n) / 10n) return undefined;
    x = x * 10n + BigInt(c - 0x30);
    if (x > 1n << 63n) return undefined;
  }
  return [x, s.slice(i)];
}
function atoi(s: string): number | undefined {
  let neg = false;
  let t = s;
  if (t.length > 0 && (t[0] === '-' || t[0] === '+')) {
    neg = t[0] === '-';
    t = t.slice(1);
  }
  const r = leadingInt(t);
  if (!r || r[1].length > 0) return undefined;
  // int(q) wraps as Go's conversion does; the values that reach here are short digit runs.
  const x = Number(BigInt.asIntN(64, r[0]));
  return neg ? -x : x;
}

function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigitAt(s, 0)) return undefined;
  if (!isDigitAt(s, 1)) {
    if (fixed) return undefined;
    return [s.charCodeAt(0) - 0x30, s.slice(1)];
  }
  return [(s.charCodeAt(0) - 0x30) * 10 + s.charCodeAt(1) - 0x30, s.slice(2)];
}

function getnum3(s: string, fixed: boolean): [number, string] | undefined {
  let n = 0;
  let i = 0;
  for (; i < 3 && isDigitAt(s, i); i++) n = n * 10 + s.charCodeAt(i) - 0x30;
  if (i === 0 || (fixed && i !== 3)) return undefined;
  return [n, s.slice(i)];
}

const cutspace = (s: string): string => s.replace(/^ +/, '');

function skip(value: string, prefix: string): string | undefined {
  let v = value;
  let p = prefix;
  while (p.length > 0) {
    if (p[0] === ' ') {
      if (v.length > 0 && v[0] !== ' ') return undefined;
      p = cutspace(p);
      v = cutspace(v);
      continue;
    }
    if (v.length === 0 || v[0] !== p[0]) return undefined;
    p = p.slice(1);
    v = v.slice(1);
  }
  return v;
}

function parseNanoseconds(value: string, nbytes: number): { ns: number; range: string } | undefined {
  if (value[0] !== '.' && value[0] !== ',') return undefined;
  let v = value;
  let n = nbytes;
  if (n > 10) {
    v = v.slice(0, 10);
    n = 10;
  }
  let ns = atoi(v.slice(1, n));
  if (ns === undefined) return undefined;
  if (ns < 0) return { ns: 0, range: 'fractional second' };
  for (let i = 0; i < 10 - n; i++) ns *= 10;
  return { ns, range: '' };
}

function parseSignedOffset(value: string): number {
  const sign = value[0];
  if (sign !== '-' && sign !== '+') return 0;
  const r = leadingInt(value.slice(1));
  if (!r || r[1] === value.slice(1)) return 0;
  if (r[0] > 23n) return 0;
  return value.length - r[1].length;
}

function parseTimeZone(value: string): number | undefined {
  if (value.length < 3) return undefined;
  if (value.length >= 4 && (value.startsWith('ChST') || value.startsWith('MeST'))) return 4;
  if (value.startsWith('GMT')) return value.length === 3 ? 3 : 3 + parseSignedOffset(value.slice(3));
  if (value[0] === '+' || value[0] === '-') {
    const n = parseSignedOffset(value);
    return n > 0 ? n : undefined;
  }
  let nUpper = 0;
  for (; nUpper < 6; nUpper++) {
    if (nUpper >= value.length) break;
    const c = value[nUpper]!;
    if (c < 'A' || c > 'Z') break;
  }
  switch (nUpper) {
    case 5:
      return value[4] === 'T' ? 5 : undefined;
    case 4:
      return value[3] === 'T' || value.startsWith('WITA') ? 4 : undefined;
    case 3:
      return 3;
    default:
      return undefined;
  }
}

const isLeap = (y: number): boolean => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const daysBefore = (m: number): number => Math.trunc((214 * m - 211) / 7) + (m >= 3 ? -2 : 0);
const daysIn = (m: number, y: number): number => (m === 2 ? (isLeap(y) ? 29 : 28) : daysBefore(m + 1) - daysBefore(m));

/** time.Date in UTC (every field already in range), as a GoTime with `zone` attached. */
function dateUTC(
  year: number,
  month: number,
  day: number,
  hour: number,
  min: number,
  sec: number,
  nsec: number,
  zone: { name: string; offsetSeconds: number },
  shiftSeconds = 0,
): GoTime {
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, min, sec, 0);
  return new GoTime(d.getTime() - shiftSeconds * 1000 + Math.floor(nsec / 1e6), zone, nsec % 1e6);
}

const UTC_ZONE = { name: 'UTC', offsetSeconds: 0 };

/** time.Time{}: January 1, year 1, 00:00:00 UTC. */
export const ZERO_TIME: GoTime = dateUTC(1, 1, 1, 0, 0, 0, 0, UTC_ZONE);

const PARSE_ERROR = 'parsing time: the value does not match the layout (neither is shown: they may be secret)';

/**
 * time.ParseInLocation(layout, value, time.Local) where Local is UTC: Go's parse() element by element
 * (its RFC 3339 fast path gives the same times). A GoTime, or the error's text (without the value).
 */
export function parseGoTime(layoutIn: string, valueIn: string): GoTime | string {
  let layout = layoutIn;
  let value = valueIn;
  let rangeErr = '';
  let amSet = false;
  let pmSet = false;
  let year = 0;
  let month = -1;
  let day = -1;
  let yday = -1;
  let hour = 0;
  let min = 0;
  let sec = 0;
  let nsec = 0;
  let zUTC = false;
  let zoneOffset = -1;
  let zoneName = '';
  for (;;) {
    const { prefix, std, suffix, digits } = nextStdChunk(layout);
    const skipped = skip(value, prefix);
    if (skipped === undefined) return PARSE_ERROR;
    value = skipped;
    if (std === undefined) {
      if (value.length !== 0) return 'parsing time: extra text after the layout (not shown: it may be secret)';
      break;
    }
    layout = suffix;
    let bad = false;
    const num = (r: [number, string] | undefined): number => {
      if (!r) {
        bad = true;
        return 0;
      }
      value = r[1];
      return r[0];
    };
    /** Reads the fraction (`.123`) in value's first `nbytes` into nsec, as Go's parseNanoseconds. */
    const fraction = (nbytes: number): void => {
      const r = parseNanoseconds(value, nbytes);
      if (!r) bad = true;
      else {
        nsec = r.ns;
        rangeErr = r.range;
      }
      value = value.slice(nbytes);
    };
    switch (std) {
      case 'Year': {
        if (value.length < 2) {
          bad = true;
          break;
        }
        const y = atoi(value.slice(0, 2));
        value = value.slice(2);
        if (y === undefined) {
          bad = true;
          break;
        }
        year = y >= 69 ? y + 1900 : y + 2000;
        break;
      }
      case 'LongYear': {
        if (value.length < 4 || !isDigitAt(value, 0)) {
          bad = true;
          break;
        }
        const y = atoi(value.slice(0, 4));
        value = value.slice(4);
        if (y === undefined) bad = true;
        else year = y;
        break;
      }
      case 'Month':
      case 'LongMonth': {
        const r = lookup(std === 'Month' ? SHORT_MONTHS : MONTHS, value);
        if (!r) {
          bad = true;
          month = 0;
          break;
        }
        month = r[0] + 1;
        value = r[1];
        break;
      }
      case 'NumMonth':
      case 'ZeroMonth':
        month = num(getnum(value, std === 'ZeroMonth'));
        if (!bad && (month <= 0 || month > 12)) rangeErr = 'month';
        break;
      case 'WeekDay':
      case 'LongWeekDay': {
        const r = lookup(std === 'WeekDay' ? SHORT_DAYS : LONG_DAYS, value);
        if (!r) bad = true;
        else value = r[1];
        break;
      }
      case 'Day':
      case 'UnderDay':
      case 'ZeroDay':
        if (std === 'UnderDay' && value.length > 0 && value[0] === ' ') value = value.slice(1);
        day = num(getnum(value, std === 'ZeroDay'));
        break;
      case 'UnderYearDay':
      case 'ZeroYearDay':
        for (let i = 0; i < 2; i++)
          if (std === 'UnderYearDay' && value.length > 0 && value[0] === ' ') value = value.slice(1);
        yday = num(getnum3(value, std === 'ZeroYearDay'));
        break;
      case 'Hour':
        hour = num(getnum(value, false));
        if (hour < 0 || hour >= 24) rangeErr = 'hour';
        break;
      case 'Hour12':
      case 'ZeroHour12':
        hour = num(getnum(value, std === 'ZeroHour12'));
        if (hour < 0 || hour > 12) rangeErr = 'hour';
        break;
      case 'Minute':
      case 'ZeroMinute':
        min = num(getnum(value, std === 'ZeroMinute'));
        if (min < 0 || min >= 60) rangeErr = 'minute';
        break;
      case 'Second':
      case 'ZeroSecond': {
        sec = num(getnum(value, std === 'ZeroSecond'));
        if (bad) break;
        if (sec < 0 || sec >= 60) {
          rangeErr = 'second';
          break;
        }
        // A fraction after the seconds is read when the layout has no fraction element next.
        if (value.length >= 2 && (value[0] === '.' || value[0] === ',') && isDigitAt(value, 1)) {
          const next = nextStdChunk(layout).std;
          if (next === 'FracSecond0' || next === 'FracSecond9') break;
          let n = 2;
          while (n < value.length && isDigitAt(value, n)) n++;
          fraction(n);
        }
        break;
      }
      case 'PM':
      case 'pm': {
        if (value.length < 2) {
          bad = true;
          break;
        }
        const p = value.slice(0, 2);
        value = value.slice(2);
        const [pmText, amText] = std === 'PM' ? ['PM', 'AM'] : ['pm', 'am'];
        if (p === pmText) pmSet = true;
        else if (p === amText) amSet = true;
        else bad = true;
        break;
      }
      case 'ISO8601TZ':
      case 'ISO8601ShortTZ':
      case 'ISO8601ColonTZ':
      case 'ISO8601SecondsTZ':
      case 'ISO8601ColonSecondsTZ':
      case 'NumTZ':
      case 'NumShortTZ':
      case 'NumColonTZ':
      case 'NumSecondsTz':
      case 'NumColonSecondsTZ': {
        if (std.startsWith('ISO') && value.length >= 1 && value[0] === 'Z') {
          value = value.slice(1);
          zUTC = true;
          break;
        }
        let parts: [string, string, string, string];
        if (std === 'ISO8601ColonTZ' || std === 'NumColonTZ') {
          if (value.length < 6 || value[3] !== ':') {
            bad = true;
            break;
          }
          parts = [value.slice(0, 1), value.slice(1, 3), value.slice(4, 6), '00'];
          value = value.slice(6);
        } else if (std === 'NumShortTZ' || std === 'ISO8601ShortTZ') {
          if (value.length < 3) {
            bad = true;
            break;
          }
          parts = [value.slice(0, 1), value.slice(1, 3), '00', '00'];
          value = value.slice(3);
        } else if (std === 'ISO8601ColonSecondsTZ' || std === 'NumColonSecondsTZ') {
          if (value.length < 9 || value[3] !== ':' || value[6] !== ':') {
            bad = true;
            break;
          }
          parts = [value.slice(0, 1), value.slice(1, 3), value.slice(4, 6), value.slice(7, 9)];
          value = value.slice(9);
        } else if (std === 'ISO8601SecondsTZ' || std === 'NumSecondsTz') {
          if (value.length < 7) {
            bad = true;
            break;
          }
          parts = [value.slice(0, 1), value.slice(1, 3), value.slice(3, 5), value.slice(5, 7)];
          value = value.slice(7);
        } else {
          if (value.length < 5) {
            bad = true;
            break;
          }
          parts = [value.slice(0, 1), value.slice(1, 3), value.slice(3, 5), '00'];
          value = value.slice(5);
        }
        const [sign, hh, mm, ss] = parts;
        const h = getnum(hh, true);
        const m = h ? getnum(mm, true) : undefined;
        const s = m ? getnum(ss, true) : undefined;
        if (!h || !m || !s) bad = true;
        const hr = h?.[0] ?? 0;
        const mi = m?.[0] ?? 0;
        const se = s?.[0] ?? 0;
        if (hr > 24) rangeErr = 'time zone offset hour';
        if (mi > 60) rangeErr = 'time zone offset minute';
        if (se > 60) rangeErr = 'time zone offset second';
        zoneOffset = (hr * 60 + mi) * 60 + se;
        if (sign === '-') zoneOffset = -zoneOffset;
        else if (sign !== '+') bad = true;
        break;
      }
      case 'TZ': {
        if (value.length >= 3 && value.startsWith('UTC')) {
          zUTC = true;
          value = value.slice(3);
          break;
        }
        const n = parseTimeZone(value);
        if (n === undefined) {
          bad = true;
          break;
        }
        zoneName = value.slice(0, n);
        value = value.slice(n);
        break;
      }
      case 'FracSecond0': {
        const ndigit = 1 + digits;
        if (value.length < ndigit) {
          bad = true;
          break;
        }
        fraction(ndigit);
        break;
      }
      case 'FracSecond9': {
        if (value.length < 2 || (value[0] !== '.' && value[0] !== ',') || !isDigitAt(value, 1)) break;
        let i = 0;
        while (i + 1 < value.length && isDigitAt(value, i + 1)) i++;
        fraction(1 + i);
        break;
      }
    }
    if (rangeErr !== '') return `parsing time: ${rangeErr} out of range`;
    if (bad) return PARSE_ERROR;
  }
  if (pmSet && hour < 12) hour += 12;
  else if (amSet && hour === 12) hour = 0;

  if (yday >= 0) {
    let d = 0;
    let m = 0;
    if (isLeap(year)) {
      if (yday === 31 + 29) {
        m = 2;
        d = 29;
      } else if (yday > 31 + 29) yday--;
    }
    if (yday < 1 || yday > 365) return 'parsing time: day-of-year out of range';
    if (m === 0) {
      m = Math.trunc((yday - 1) / 31) + 1;
      if (daysBefore(m + 1) < yday) m++;
      d = yday - daysBefore(m);
    }
    if (month >= 0 && month !== m) return 'parsing time: day-of-year does not match month';
    month = m;
    if (day >= 0 && day !== d) return 'parsing time: day-of-year does not match day';
    day = d;
  } else {
    if (month < 0) month = 1;
    if (day < 0) day = 1;
  }
  if (day < 1 || day > daysIn(month, year)) return 'parsing time: day out of range';

  if (zUTC) return dateUTC(year, month, day, hour, min, sec, nsec, UTC_ZONE);
  if (zoneOffset !== -1) {
    // Local (UTC) when the offset and name are its own, else a fixed zone of that name and offset.
    const zone =
      zoneOffset === 0 && (zoneName === '' || zoneName === 'UTC')
        ? UTC_ZONE
        : { name: zoneName, offsetSeconds: zoneOffset };
    return dateUTC(year, month, day, hour, min, sec, nsec, zone, zoneOffset);
  }
  if (zoneName !== '') {
    // Not a name of Local's (UTC's) zones: a fixed zone, GMT±h with its offset, the clock reading kept as UTC.
    let offset = 0;
    if (zoneName.length > 3 && zoneName.startsWith('GMT')) offset = (atoi(zoneName.slice(3)) ?? 0) * 3600;
    return dateUTC(year, month, day, hour, min, sec, nsec, { name: zoneName, offsetSeconds: offset });
  }
  return dateUTC(year, month, day, hour, min, sec, nsec, UTC_ZONE);
}

// ---- time.Time's methods a template can call on a time (toDate, dateModify …) ----

/** The time's wall clock in its zone, as a UTC Date. */
const wall = (t: GoTime): Date => new Date(t.ms + t.zone.offsetSeconds * 1000);

/**
 * time.Time methods by name: those whose results vaultgate's values hold exactly (not Month/Weekday,
 * whose named types print as words but compare as ints, nor UnixNano beyond 2^53). undefined if none.
 */
export function timeMethod(t: GoTime, name: string): (() => unknown) | GoFunc | undefined {
  switch (name) {
    case 'Unix':
      return () => new GoNum('int64', Math.floor(t.ms / 1000));
    case 'UnixMilli':
      return () => new GoNum('int64', t.ms);
    case 'Year':
      return () => wall(t).getUTCFullYear();
    case 'Day':
      return () => wall(t).getUTCDate();
    case 'Hour':
      return () => wall(t).getUTCHours();
    case 'Minute':
      return () => wall(t).getUTCMinutes();
    case 'Second':
      return () => wall(t).getUTCSeconds();
    case 'Nanosecond':
      return () => (((t.ms % 1000) + 1000) % 1000) * 1e6 + t.nanos;
    case 'YearDay':
      return () => {
        const w = wall(t);
        const jan1 = new Date(0);
        jan1.setUTCFullYear(w.getUTCFullYear(), 0, 1);
        const day = new Date(0);
        day.setUTCFullYear(w.getUTCFullYear(), w.getUTCMonth(), w.getUTCDate());
        return Math.round((day.getTime() - jan1.getTime()) / 864e5) + 1;
      };
    case 'IsZero':
      return () => t.ms === ZERO_TIME.ms && t.nanos === 0;
    case 'String':
      return () => formatGoTime(t, '2006-01-02 15:04:05.999999999 -0700 MST');
    case 'UTC':
    case 'Local':
      return () => new GoTime(t.ms, UTC_ZONE, t.nanos);
    case 'Format':
      return { params: ['string'], fn: (layout: string) => goString(formatGoTime(t, utf8Text(layout))) };
    case 'Equal':
      return { params: ['time'], fn: (u: GoTime) => t.ms === u.ms && t.nanos === u.nanos };
    case 'Before':
      return { params: ['time'], fn: (u: GoTime) => t.ms < u.ms || (t.ms === u.ms && t.nanos < u.nanos) };
    case 'After':
      return { params: ['time'], fn: (u: GoTime) => t.ms > u.ms || (t.ms === u.ms && t.nanos > u.nanos) };
    case 'AddDate':
      return {
        params: ['int', 'int', 'int'],
        fn: (y: number, m: number, d: number) => {
          const w = wall(t);
          const n = new Date(0);
          n.setUTCFullYear(w.getUTCFullYear() + y, w.getUTCMonth() + m, w.getUTCDate() + d);
          n.setUTCHours(w.getUTCHours(), w.getUTCMinutes(), w.getUTCSeconds(), w.getUTCMilliseconds());
          return new GoTime(n.getTime() - t.zone.offsetSeconds * 1000, t.zone, t.nanos);
        },
      };
    default:
      return undefined;
  }
}
