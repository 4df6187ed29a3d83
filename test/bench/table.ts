// The benches' side-by-side tables: a Markdown table with the first column left-aligned and the figures
// right-aligned, a figure with its digits ('–' when the system did not run), and the ratio of two figures.

export const fmt = (v: number, digits = 0): string => (Number.isFinite(v) ? v.toFixed(digits) : '–');

/** a / b to two digits; '= (0)' when both are 0, '–' when there is no ratio. */
export const ratio = (a: number, b: number): string =>
  b > 0 && Number.isFinite(a) ? (a / b).toFixed(2) : a === 0 && b === 0 ? '= (0)' : '–';

export function table(rows: Array<[string, ...string[]]>, header: string[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
