// Go's encoding/base64 decoder, with its error texts (Sprig's b64dec returns them as its result).

function originalIndex(s: string, cleanIndex: number): number {
  let k = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\r' || s[i] === '\n') continue;
    if (k === cleanIndex) return i;
    k++;
  }
  return s.length;
}

/**
 * encoding/base64 StdEncoding.DecodeString: \r and \n are ignored; anything else outside the alphabet,
 * or bad padding, is an error (its text returned as a string, as Sprig's b64dec returns it).
 */
export function goBase64(s: string): Buffer | string {
  let clean = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\r' || c === '\n') continue;
    clean += c;
  }
  const at = (pos: number): string => `illegal base64 data at input byte ${pos}`;
  const bad = /[^A-Za-z0-9+/=]/.exec(clean);
  const eq = clean.indexOf('=');
  if (bad && (eq < 0 || bad.index < eq)) return at(originalIndex(s, bad.index));
  // An incomplete final quantum is reported at its start, as Go's decoder does.
  if (eq < 0 && clean.length % 4 !== 0) return at(originalIndex(s, clean.length - (clean.length % 4)));
  if (eq >= 0) {
    const tail = clean.slice(eq);
    const quantum = eq % 4;
    if (
      quantum < 2 ||
      !/^={1,2}$/.test(tail) ||
      (quantum === 2 && tail !== '==') ||
      (quantum === 3 && tail !== '=') ||
      clean.length % 4 !== 0
    )
      return at(originalIndex(s, eq));
  }
  return Buffer.from(clean, 'base64');
}
