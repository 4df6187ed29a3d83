// ExternalSecret spec.syncWindows as ESO evaluates it (ESO v2.7+, pkg/controllers/externalsecret:
// isPeriodicRefreshAllowedByWindows): windows only gate *periodic* refreshes; a spec or metadata change,
// a force-sync or a hand-edited Secret still syncs at once. "deny" blocks while any window is open,
// "allow" permits only while one is. A window opened at the latest firing of its cron schedule before
// `at` and stays open for its duration. A schedule that does not parse is ignored (ESO: a typo must not
// block syncs forever); admission refuses one, so that only matters for objects stored before.
//
// The schedules are robfig/cron v3.0.1's standard parser (5 fields, names, ranges, steps, `?`, the
// @yearly/@annually/@monthly/@weekly/@daily/@midnight/@hourly descriptors and `@every <duration>`),
// ported with its Next(), in UTC (ESO's container clock). No library: the npm cron parsers differ from
// robfig on day-of-month/day-of-week and on steps, and the port is checked against robfig itself
// (test/eso/sync-windows.test.ts, the Go cron oracle).
import { parseGoDuration } from '../golang/index.ts';
import { NEVER, ReconcileError } from '../kube/reconcile-error.ts';

export interface SyncWindowEntry {
  schedule: string;
  duration: string;
}
export interface SyncWindows {
  kind: 'allow' | 'deny';
  windows: SyncWindowEntry[];
}

/** A parsed schedule: `next(t)` is the first firing strictly after t (ms since the epoch), or undefined (none within 5 years). */
export interface Schedule {
  next(t: number): number | undefined;
}

interface Field {
  bits: Set<number>;
  star: boolean;
}
interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MINUTES: Bounds = { min: 0, max: 59 };
const HOURS: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTHS: Bounds = {
  min: 1,
  max: 12,
  names: { jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12 },
};
const DOW: Bounds = { min: 0, max: 6, names: { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 } };

/** The rule a schedule breaks, as admission names it (webhook/rules/eso/externalsecret-rules.ts). */
export const SYNC_WINDOW_RULE = 'eso.es.sync-window';
/** Where a schedule stands when its caller does not say which window it is. */
const SCHEDULE_FIELD = 'spec.syncWindows.windows[].schedule';

/**
 * A schedule robfig/cron refuses. Caused by the user's spec, so not retried (the same text fails the same
 * way): the message names the field and the rule; `detail` is robfig's own text, which admission shows.
 */
export class CronError extends ReconcileError {
  override readonly name: string = 'CronError';
  constructor(
    readonly detail: string,
    readonly field: string = SCHEDULE_FIELD,
  ) {
    super('InvalidSpec', `${field}: schedule is not a cron expression (rule ${SYNC_WINDOW_RULE}): ${detail}`, NEVER);
  }
}

const range = (min: number, max: number, step = 1): Set<number> => {
  const s = new Set<number>();
  for (let i = min; i <= max; i += step) s.add(i);
  return s;
};
const one = (n: number): Field => ({ bits: new Set([n]), star: false });
const all = (b: Bounds): Field => ({ bits: range(b.min, b.max), star: true });

/** Go's strconv.Atoi then robfig's non-negative check. */
function parseUint(expr: string): number {
  if (!/^[+-]?[0-9]+$/.test(expr))
    throw new CronError(
      `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`,
    );
  const n = Number(expr);
  if (n < 0) throw new CronError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, names?: Record<string, number>): number {
  const named = names?.[expr.toLowerCase()];
  return named ?? parseUint(expr);
}

function getRange(expr: string, b: Bounds): Field {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = (rangeAndStep[0] ?? '').split('-');
  const singleDigit = lowAndHigh.length === 1;
  let start: number;
  let end: number;
  let star = false;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = b.min;
    end = b.max;
    star = true;
  } else {
    start = parseIntOrName(lowAndHigh[0] ?? '', b.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1] ?? '', b.names);
    else throw new CronError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = parseUint(rangeAndStep[1] ?? '');
    if (singleDigit) end = b.max;
    if (step > 1) star = false;
  } else if (rangeAndStep.length > 2) {
    throw new CronError(`too many slashes: ${expr}`);
  }
  if (start < b.min) throw new CronError(`beginning of range (${start}) below minimum (${b.min}): ${expr}`);
  if (end > b.max) throw new CronError(`end of range (${end}) above maximum (${b.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`);
  return { bits: range(start, end, step), star };
}

function getField(text: string, b: Bounds): Field {
  const out: Field = { bits: new Set(), star: false };
  for (const expr of text.split(',').filter((e) => e !== '')) {
    const f = getRange(expr, b);
    for (const n of f.bits) out.bits.add(n);
    out.star ||= f.star;
  }
  return out;
}

interface Spec {
  minute: Field;
  hour: Field;
  dom: Field;
  month: Field;
  dow: Field;
}

const DESCRIPTORS: Record<string, () => Spec> = {
  '@yearly': () => ({ minute: one(0), hour: one(0), dom: one(1), month: one(1), dow: all(DOW) }),
  '@annually': () => ({ minute: one(0), hour: one(0), dom: one(1), month: one(1), dow: all(DOW) }),
  '@monthly': () => ({ minute: one(0), hour: one(0), dom: one(1), month: all(MONTHS), dow: all(DOW) }),
  '@weekly': () => ({ minute: one(0), hour: one(0), dom: all(DOM), month: all(MONTHS), dow: one(0) }),
  '@daily': () => ({ minute: one(0), hour: one(0), dom: all(DOM), month: all(MONTHS), dow: all(DOW) }),
  '@midnight': () => ({ minute: one(0), hour: one(0), dom: all(DOM), month: all(MONTHS), dow: all(DOW) }),
  '@hourly': () => ({ minute: one(0), hour: all(HOURS), dom: all(DOM), month: all(MONTHS), dow: all(DOW) }),
};

/**
 * robfig/cron's standard parser (Minute | Hour | Dom | Month | Dow | Descriptor). Throws CronError naming
 * `field` (the window's schedule) with robfig's text as its detail.
 */
export function parseSchedule(text: string, field?: string): Schedule {
  try {
    return parseRobfig(text);
  } catch (e) {
    throw e instanceof CronError && field !== undefined ? new CronError(e.detail, field) : e;
  }
}

function parseRobfig(text: string): Schedule {
  if (text.length === 0) throw new CronError('empty spec string');
  if (text.startsWith('TZ=') || text.startsWith('CRON_TZ=')) {
    // ESO's CRD pattern refuses a time zone prefix (six fields); windows are UTC.
    throw new CronError(`time zone prefixes are not supported in sync windows (they are evaluated in UTC): ${text}`);
  }
  if (text.startsWith('@')) {
    const d = DESCRIPTORS[text];
    if (d) return specSchedule(d());
    if (text.startsWith('@every ')) {
      const parsed = parseGoDuration(text.slice('@every '.length));
      if (!parsed.ok) throw new CronError(`failed to parse duration ${text}: ${parsed.error}`);
      return everySchedule(parsed.ms);
    }
    throw new CronError(`unrecognized descriptor: ${text}`);
  }
  const fields = text.split(/[ \t\n\v\f\r]+/).filter((f) => f !== '');
  if (fields.length !== 5)
    throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const [minute, hour, dom, month, dow] = fields as [string, string, string, string, string];
  return specSchedule({
    minute: getField(minute, MINUTES),
    hour: getField(hour, HOURS),
    dom: getField(dom, DOM),
    month: getField(month, MONTHS),
    dow: getField(dow, DOW),
  });
}

/** robfig's ConstantDelaySchedule: at least 1 s, whole seconds; next = t + delay - t's sub-second part. */
function everySchedule(ms: number): Schedule {
  const d = ms < 1000 ? 1000 : ms - (ms % 1000);
  return { next: (t) => t + d - (((t % 1000) + 1000) % 1000) };
}

function dayMatches(s: Spec, d: Date): boolean {
  const domMatch = s.dom.bits.has(d.getUTCDate());
  const dowMatch = s.dow.bits.has(d.getUTCDay());
  if (s.dom.star || s.dow.star) return domMatch && dowMatch;
  return domMatch || dowMatch;
}

/** robfig SpecSchedule.Next in UTC (seconds field fixed at 0, as the 5-field parser sets it). */
function specSchedule(s: Spec): Schedule {
  return {
    next(from: number): number | undefined {
      // Start at the next whole second.
      let t = new Date(Math.floor(from / 1000) * 1000 + 1000);
      let added = false;
      const yearLimit = t.getUTCFullYear() + 5;
      const utc = (y: number, mo: number, d: number, h = 0, mi = 0): Date => new Date(Date.UTC(y, mo, d, h, mi));
      wrap: for (;;) {
        if (t.getUTCFullYear() > yearLimit) return undefined;
        while (!s.month.bits.has(t.getUTCMonth() + 1)) {
          if (!added) {
            added = true;
            t = utc(t.getUTCFullYear(), t.getUTCMonth(), 1);
          }
          t = utc(t.getUTCFullYear(), t.getUTCMonth() + 1, 1);
          if (t.getUTCMonth() === 0) continue wrap;
        }
        while (!dayMatches(s, t)) {
          if (!added) {
            added = true;
            t = utc(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate());
          }
          t = utc(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 1);
          if (t.getUTCDate() === 1) continue wrap;
        }
        while (!s.hour.bits.has(t.getUTCHours())) {
          if (!added) {
            added = true;
            t = utc(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate(), t.getUTCHours());
          }
          t = new Date(t.getTime() + 3_600_000);
          if (t.getUTCHours() === 0) continue wrap;
        }
        while (!s.minute.bits.has(t.getUTCMinutes())) {
          if (!added) {
            added = true;
            t = new Date(Math.floor(t.getTime() / 60_000) * 60_000);
          }
          t = new Date(t.getTime() + 60_000);
          if (t.getUTCMinutes() === 0) continue wrap;
        }
        while (t.getUTCSeconds() !== 0) {
          if (!added) {
            added = true;
            t = new Date(Math.floor(t.getTime() / 1000) * 1000);
          }
          t = new Date(t.getTime() + 1000);
          if (t.getUTCSeconds() === 0) continue wrap;
        }
        return t.getTime();
      }
    },
  };
}

/** ESO's isWithinSyncWindow: the latest firing before `at` (found as Next(at - duration - 1 s)) opened a window still open at `at`. */
export function isWithinWindow(schedule: Schedule, durationMs: number, at: number): boolean {
  const prev = schedule.next(at - durationMs - 1000);
  return prev !== undefined && prev <= at && at <= prev + durationMs;
}

interface ParsedWindow {
  schedule: Schedule;
  durationMs: number;
}

function parsedWindows(sw: SyncWindows): ParsedWindow[] {
  const out: ParsedWindow[] = [];
  for (const [i, w] of sw.windows.entries()) {
    try {
      const d = parseGoDuration(w.duration);
      if (d.ok)
        out.push({ schedule: parseSchedule(w.schedule, `spec.syncWindows.windows[${i}].schedule`), durationMs: d.ms });
    } catch (e) {
      if (!(e instanceof CronError)) throw e; // ignored, as ESO does
    }
  }
  return out;
}

/** Whether the windows allow a periodic refresh at `at` (no windows: always). */
export function periodicRefreshAllowed(sw: SyncWindows | undefined, at: number): boolean {
  if (!sw || sw.windows.length === 0) return true;
  const active = parsedWindows(sw).some((w) => isWithinWindow(w.schedule, w.durationMs, at));
  if (sw.kind === 'deny') return !active;
  if (sw.kind === 'allow') return active;
  return true;
}

/**
 * The first instant at or after `at` when the windows allow a periodic refresh, to requeue for it
 * (ESO requeues with backoff instead). undefined when none is found within a year (an allow list
 * whose schedules never fire).
 */
export function nextAllowedAt(sw: SyncWindows | undefined, at: number): number | undefined {
  if (periodicRefreshAllowed(sw, at)) return at;
  const windows = sw ? parsedWindows(sw) : [];
  const limit = at + 366 * 86_400_000;
  let t = at;
  for (let i = 0; i < 10_000 && t <= limit; i++) {
    let candidate: number | undefined;
    if (sw?.kind === 'allow') {
      // The next opening of any window.
      for (const w of windows) {
        const n = w.schedule.next(t);
        if (n !== undefined && (candidate === undefined || n < candidate)) candidate = n;
      }
    } else {
      // Just after the last of the windows open now closes.
      for (const w of windows) {
        const prev = w.schedule.next(t - w.durationMs - 1000);
        if (prev !== undefined && prev <= t && t <= prev + w.durationMs)
          candidate = Math.max(candidate ?? 0, prev + w.durationMs + 1);
      }
    }
    if (candidate === undefined) return undefined;
    t = candidate;
    if (periodicRefreshAllowed(sw, t)) return t;
  }
  return undefined;
}

/** Admission: each window's problem (schedule or duration), with robfig's and Go's texts. */
export interface SyncWindowProblem {
  index: number;
  field: 'schedule' | 'duration';
  message: string;
  /** ESO accepts it, but it cannot be what was meant. */ warning?: boolean;
}

export function syncWindowProblems(sw: { windows?: unknown }): SyncWindowProblem[] {
  const out: SyncWindowProblem[] = [];
  (Array.isArray(sw.windows) ? sw.windows : []).forEach((w: unknown, index) => {
    const entry = (w ?? {}) as { schedule?: unknown; duration?: unknown };
    if (typeof entry.schedule === 'string') {
      try {
        parseSchedule(entry.schedule);
      } catch (e) {
        if (!(e instanceof CronError)) throw e;
        out.push({ index, field: 'schedule', message: e.detail });
      }
    }
    if (typeof entry.duration === 'string') {
      const d = parseGoDuration(entry.duration);
      if (!d.ok) out.push({ index, field: 'duration', message: d.error });
      else if (d.ms <= 0)
        out.push({
          index,
          field: 'duration',
          warning: true,
          message: `duration ${JSON.stringify(entry.duration)} is not positive: the window is never open (ESO accepts it)`,
        });
    }
  });
  return out;
}
