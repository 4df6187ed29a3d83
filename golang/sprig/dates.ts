// Sprig's date and duration functions that give the same output for the same input (Local is UTC).
import { fail } from '../func.ts';
import { formatGoDuration, parseGoDurationNs } from '../duration.ts';
import { loadLocation, formatGoTime } from '../time.ts';
import { GoTime, GoNum, numberValue, utf8Text, goString } from '../values.ts';

function toTime(v: unknown): GoTime | undefined {
  if (v instanceof GoTime) return v;
  if (typeof v === 'number' || (v instanceof GoNum && (v.kind === 'int64' || v.kind === 'int32')))
    return new GoTime(numberValue(v)! * 1000);
  return undefined;
}

export function dateInZone(layout: string, date: unknown, zone: string): string {
  const t = toTime(date);
  if (!t)
    fail(
      'the date is not a time value or a Unix timestamp (vaultgate does not read the clock: the output would change on every render)',
    );
  const z = loadLocation(utf8Text(zone), t!.ms) ?? { name: 'UTC', offsetSeconds: 0 };
  return goString(formatGoTime(new GoTime(t!.ms, z, t!.nanos), utf8Text(layout)));
}

export function durationOf(v: unknown): string {
  const n = typeof v === 'string' ? parseIntBase10(v) : v instanceof GoNum && v.kind === 'int64' ? v.value : 0;
  return formatGoDuration(n * 1e9);
}
const parseIntBase10 = (s: string): number => (/^[+-]?\d+$/.test(s) ? Number(s) : 0);

export function durationRound(v: unknown): string {
  let d = 0;
  if (typeof v === 'string') d = durationNs(v) ?? 0;
  else if (v instanceof GoNum && v.kind === 'int64') d = v.value;
  else if (v instanceof GoTime) fail('durationRound of a time value reads the clock: not supported by vaultgate');
  const u = Math.abs(d);
  const units: Array<[number, string]> = [
    [3.6e12 * 24 * 365, 'y'],
    [3.6e12 * 24 * 30, 'mo'],
    [3.6e12 * 24, 'd'],
    [3.6e12, 'h'],
    [6e10, 'm'],
    [1e9, 's'],
  ];
  for (const [size, name] of units) if (u > size) return `${Math.floor(u / size)}${name}`;
  return '0s';
}

/** time.ParseDuration in nanoseconds, undefined on Go's error (golang/duration.ts: the one Go duration parser). */
export function durationNs(s: string): number | undefined {
  const r = parseGoDurationNs(s);
  return r.ok ? Number(r.ns) : undefined;
}
