// The last line of defence behind value-free error messages (issue #21 item 3): does a message a user
// will read (status, Event, log line) hold one of the values read or rendered in this reconcile, in a
// form code can give it without meaning to: another case, reversed, its characters split and joined by
// punctuation or spaces, quoted or escaped, base64 or hex encoded, or a long enough piece of it.
//
// Compared on letters and digits only, lower-cased, so separators, quotes and case do not matter; base64
// and hex runs in the message are decoded and compared too. Linear in the message and the values: the
// message's windows go into a map by rolling hash once, and each value's windows are looked up in it.

/** A piece of a value this long (letters and digits) counts as the value: a truncated secret is a secret. */
export const PIECE = 12;
/** Values with fewer letters and digits than this are compared whole only (shorter ones are ordinary words). */
export const MIN_LENGTH = 8;

const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
const HEX_RUN = /\b(?:[0-9a-fA-F]{2}){8,}\b/g;

const NOT_LETTER_OR_DIGIT = /[^\p{L}\p{N}]+/gu;
const NOT_ASCII_LETTER_OR_DIGIT = /[^a-z0-9]+/g;
const NON_ASCII = /[^\x00-\x7f]/;

function letters(text: string): string {
  const lower = text.toLowerCase();
  return lower.replace(NON_ASCII.test(lower) ? NOT_LETTER_OR_DIGIT : NOT_ASCII_LETTER_OR_DIGIT, '');
}

/** The message and what its base64 and hex runs decode to, each reduced to letters and digits. */
function haystacks(message: string): string[] {
  const out = [letters(message)];
  for (const m of message.match(BASE64_RUN) ?? []) {
    for (const enc of ['base64', 'base64url'] as const) out.push(letters(Buffer.from(m, enc).toString('utf8')));
  }
  for (const m of message.match(HEX_RUN) ?? []) out.push(letters(Buffer.from(m, 'hex').toString('utf8')));
  return out.filter((h) => h.length >= MIN_LENGTH);
}

/** Polynomial hash of `s[from, from + PIECE)` (code units), and the factor that removes its first unit when rolling. */
const BASE = 1_000_003;
let DROP = 1;
for (let i = 1; i < PIECE; i++) DROP = Math.imul(DROP, BASE);

function hashAt(s: string, from: number): number {
  let h = 0;
  for (let i = from; i < from + PIECE; i++) h = (Math.imul(h, BASE) + s.charCodeAt(i)) | 0;
  return h;
}

/** True when `message` holds one of `values` in any of the forms above. */
export function holdsSecretForm(message: string, values: readonly string[]): boolean {
  const hay = haystacks(message);
  if (hay.length === 0) return false;
  // Windows of the message and of its reverse (a reversed value is the value read against the reversed
  // message), by hash; a hit is confirmed by comparing the text.
  const windows = new Map<number, string[]>();
  const seen = new Uint8Array(1 << 16); // a hash's low 16 bits: most windows of a value miss here, without a map lookup
  const both = hay.flatMap((h) => [h, [...h].reverse().join('')]);
  for (const h of both) {
    for (let i = 0; i + PIECE <= h.length; i++) {
      const k = hashAt(h, i);
      seen[k & 0xffff] = 1;
      const list = windows.get(k);
      if (list) list.push(h.slice(i, i + PIECE));
      else windows.set(k, [h.slice(i, i + PIECE)]);
    }
  }
  for (const v of values) {
    const n = letters(v);
    if (n.length < MIN_LENGTH) continue;
    if (n.length < PIECE) {
      const reversed = [...n].reverse().join('');
      if (hay.some((h) => h.includes(n) || h.includes(reversed))) return true;
      continue;
    }
    let h = hashAt(n, 0);
    for (let i = 0; ; i++) {
      if (seen[h & 0xffff] === 1 && windows.get(h)?.includes(n.slice(i, i + PIECE))) return true;
      if (i + PIECE >= n.length) break;
      h = (Math.imul(h - Math.imul(n.charCodeAt(i), DROP), BASE) + n.charCodeAt(i + PIECE)) | 0;
    }
  }
  return false;
}

/** Shown instead of an error message that would have quoted secret data. */
export const WITHHELD_MESSAGE = 'the error message is withheld because it would contain secret data';

/**
 * `message`, or a fixed text when it contains one of `secrets` (or its base64), or one in another form
 * (case, reversed, split and joined, quoted, base64/hex, a long piece: holdsSecretForm): error messages
 * are built without values, and this catches one that is not. Values shorter than 4 characters cannot be
 * told apart from ordinary words and are not checked.
 */
export function withoutSecrets(message: string, secrets: readonly string[]): string {
  for (const s of secrets) {
    if (s.length < 4) continue;
    if (message.includes(s) || message.includes(Buffer.from(s).toString('base64'))) return WITHHELD_MESSAGE;
    for (const line of s.split('\n'))
      if (line.trim().length >= 8 && message.includes(line.trim())) return WITHHELD_MESSAGE;
  }
  return holdsSecretForm(message, secrets) ? WITHHELD_MESSAGE : message;
}
