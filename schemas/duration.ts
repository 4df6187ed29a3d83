// Go-style duration strings ("90s", "1h30m", "1.5h"), as the CRD schemas' pattern accepts them and
// Go's time.ParseDuration reads them. Vault itself also takes bare seconds; the API does not.

export const DURATION_PATTERN = /^(0|([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+)$/;

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds of a Go duration, or undefined when the text is not one. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION_PATTERN.test(text)) return undefined;
  if (text === '0') return 0;
  let total = 0;
  for (const m of text.matchAll(/([0-9]+(?:\.[0-9]+)?)(ns|us|ms|s|m|h)/g)) total += Number(m[1]) * (UNIT_MS[m[2] ?? 's'] ?? 0);
  return total;
}

/** Seconds, rounded down, as Vault stores TTLs. */
export function durationSeconds(text: string): number | undefined {
  const ms = parseDuration(text);
  return ms === undefined ? undefined : Math.floor(ms / 1000);
}
