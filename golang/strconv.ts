// Go's strconv integer syntax, shared by the template parser's number literals and Sprig's casts.

/**
 * strconv.ParseInt(text, 0, _)'s syntax, without its range check: a sign, then decimal, 0x/0o/0b or
 * legacy 0-octal digits, an underscore allowed after a base prefix and between digits. undefined when
 * Go refuses the text.
 */
export function parseGoInt(text: string): bigint | undefined {
  const m =
    /^([+-]?)(0[xX]_?[0-9a-fA-F]+(?:_[0-9a-fA-F]+)*|0[oO]_?[0-7]+(?:_[0-7]+)*|0[bB]_?[01]+(?:_[01]+)*|0_?[0-7]+(?:_[0-7]+)*|[1-9](?:_?[0-9])*|0)$/.exec(
      text,
    );
  if (!m) return undefined;
  let body = m[2]!.replace(/_/g, '');
  if (/^0[0-7]/.test(body)) body = `0o${body.slice(1)}`;
  const v = BigInt(body.replace(/^0([xXoObB])/, (_, base: string) => `0${base.toLowerCase()}`));
  return m[1] === '-' ? -v : v;
}

/** Whether v fits Go's int64. */
export const fitsInt64 = (v: bigint): boolean => v >= -(2n ** 63n) && v < 2n ** 63n;
