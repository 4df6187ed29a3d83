// A secret found in any form a template (or careless code) can give it (issue #21 item 3): not only the
// value itself but upper/lower case, reversed, its characters split and joined with any separator of up
// to 3 characters, base64 (standard and URL, of the value and of its case variants), hex, quoted
// (JSON/Go escapes) and truncated (any 6-character piece of the value, of its reverse, of its hex). A
// message a user can read (status, Event, log line, metric, audit record, plan) must hold none of them.
// Shared by the engine's leak test (template-leak.test.ts), the reconcilers' (eso-leak.test.ts) and the
// PushSecret audit test.
//
// Give it the distinctive part of a canary (e.g. `Zq9x7WvKp2`, not `canary-Zq9x7WvKp2`): error messages
// may name the field that held it (`.canary`), and that is not a leak.

/** Shortest piece of a secret that counts as a leak (a truncated or partial value). */
export const MIN_PIECE = 6;

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

function pieces(s: string, n: number): string[] {
  if (s.length <= n) return [s];
  const out: string[] = [];
  for (let i = 0; i + n <= s.length; i++) out.push(s.slice(i, i + n));
  return out;
}

export interface CanaryForm {
  form: string;
  test: (text: string) => boolean;
}

/** Every form of `secret` to look for. */
export function canaryForms(secret: string): CanaryForm[] {
  const forms: CanaryForm[] = [];
  const reversed = [...secret].reverse().join('');
  const includesCi = (needle: string) => (text: string) => text.toLowerCase().includes(needle.toLowerCase());
  // Exact, upper/lower case, truncated (any piece), reversed: case-insensitive pieces of the value and its reverse.
  for (const [name, s] of [
    ['piece', secret],
    ['reversed piece', reversed],
  ] as const) {
    for (const p of pieces(s, MIN_PIECE))
      forms.push({ form: `${name} ${JSON.stringify(p)} (any case)`, test: includesCi(p) });
  }
  // Split and joined with any separator (1 to 3 characters, the same between every two characters).
  for (const [name, s] of [
    ['split/joined', secret],
    ['reversed split/joined', reversed],
  ] as const) {
    for (const p of pieces(s, MIN_PIECE)) {
      const chars = [...p].map(escapeRe);
      const re = new RegExp(`${chars[0]!}([\\s\\S]{1,3}?)${chars.slice(1).join('\\1')}`, 'i');
      forms.push({ form: `${name} ${JSON.stringify(p)}`, test: (text) => re.test(text) });
    }
  }
  // Encodings of the value and of its case variants.
  for (const v of new Set([secret, secret.toUpperCase(), secret.toLowerCase(), reversed])) {
    const buf = Buffer.from(v, 'utf8');
    for (const [enc, text] of [
      ['base64', buf.toString('base64')],
      ['base64url', buf.toString('base64url')],
    ] as const) {
      // Whole, and truncated (the first 8 characters encode the first 6 bytes).
      forms.push({ form: `${enc} of ${JSON.stringify(v)}`, test: (t) => t.includes(text.replace(/=+$/, '')) });
      if (text.length > 8)
        forms.push({ form: `${enc} prefix of ${JSON.stringify(v)}`, test: (t) => t.includes(text.slice(0, 8)) });
    }
    const hex = buf.toString('hex');
    for (let i = 0; i + 2 * MIN_PIECE <= hex.length || i === 0; i += 2) {
      const h = hex.slice(i, i + 2 * MIN_PIECE);
      forms.push({ form: `hex ${h}`, test: includesCi(h) });
      if (i + 2 * MIN_PIECE >= hex.length) break;
    }
  }
  // Quoted: JSON and Go %q escape non-ASCII and control characters.
  const quoted = JSON.stringify(secret).slice(1, -1);
  if (quoted !== secret) forms.push({ form: 'JSON-quoted', test: (t) => t.includes(quoted) });
  return forms;
}

/** The forms of any of `secrets` that `text` contains (empty: none). */
export function canaryLeaks(text: string, secrets: readonly string[]): string[] {
  const out: string[] = [];
  for (const s of secrets) for (const f of formsOf(s)) if (f.test(text)) out.push(f.form);
  return out;
}

const cache = new Map<string, CanaryForm[]>();
function formsOf(secret: string): CanaryForm[] {
  let f = cache.get(secret);
  if (!f) cache.set(secret, (f = canaryForms(secret)));
  return f;
}
