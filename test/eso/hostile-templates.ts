// Templates a hostile tenant can write (anyone who may create an ExternalSecret or PushSecret in their own
// namespace), issue #20: each must end in bounded time and memory with a result or a clear error that
// names no value. Shared by the engine's budget tests, the render pool's tests and `vaultgate template`'s.
// Measured on the engine before the budgets (in-process, main thread): pfx-mac-iterations 25.7 s
// (4 M iterations), append-80k 61 s, string-doubling 1.1–1.7 GB then a V8 heap abort.

/** A secret value planted in the data: no error message may contain it. */
export const CANARY = 'canary-Secret-Value-9f3a7c';

/** DER TLV. */
function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...items: Buffer[]): Buffer => der(0x30, Buffer.concat(items));
const int = (n: number): Buffer => {
  const bytes: number[] = [];
  let v = n;
  do {
    bytes.unshift(v & 0xff);
    v = Math.floor(v / 256);
  } while (v > 0);
  if (bytes[0]! & 0x80) bytes.unshift(0);
  return der(0x02, Buffer.from(bytes));
};
const OID_DATA = Buffer.from('06092a864886f70d010701', 'hex');
const SHA1_ALG = Buffer.from('300906052b0e03021a0500', 'hex');

/** A ~130-byte PFX whose MAC asks for `iterations` key-derivation rounds (the 25.7 s file). */
export function pfxWithMacIterations(iterations: number): Buffer {
  const content = der(0x04, seq());
  const authSafe = seq(OID_DATA, der(0xa0, content));
  const mac = seq(seq(SHA1_ALG, der(0x04, Buffer.alloc(20))), der(0x04, Buffer.alloc(8, 7)), int(iterations));
  return seq(int(3), authSafe, mac);
}

export interface HostileCase {
  name: string;
  template: string;
  /** The render's data (values are secret: the canary is among them). Text, as Vault's KV gives it. */
  data?: Record<string, string>;
  /** What the render must end with: an error matching this, or (undefined) either a result or an error. */
  error?: RegExp;
  /** Bounded only by the render pool's deadline (or another task's fix), not by the engine's own budgets. */
  needsDeadline?: true;
}

const billionLaughs = [
  'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
  ...Array.from({ length: 8 }, (_, i) => {
    const prev = i === 0 ? 'a' : `l${i}`;
    return `l${i + 1}: &l${i + 1} [*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev},*${prev}]`;
  }),
].join('\n');

export const HOSTILE_TEMPLATES: readonly HostileCase[] = [
  // the table
  // Given base64 (as text from Vault would be), decoded in the template.
  {
    name: 'pkcs12key on a PFX declaring 4,000,000 MAC iterations',
    template: '{{ .pfx | b64dec | pkcs12key }}',
    data: { pfx: pfxWithMacIterations(4_000_000).toString('base64') },
    error: /key-derivation iterations|pkcs12/,
  },
  {
    name: 'append in a range loop, 80k times',
    template: '{{ $l := list }}{{ range until 80000 }}{{ $l = append $l . }}{{ end }}{{ len $l }}',
    error: /work budget|exceeded 2s/,
  },
  {
    name: 'a string doubled in a loop, then sha256sum',
    template: '{{ $s := .password }}{{ range until 40 }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ sha256sum $s }}',
    error: /exceeds|budget|memory/,
  },
  // more of each family
  {
    name: 'string doubled with cat',
    template: '{{ $s := .password }}{{ range until 40 }}{{ $s = cat $s $s }}{{ end }}{{ len $s }}',
    error: /exceeds|budget|memory/,
  },
  {
    name: 'string doubled through replace',
    template: '{{ $s := .password }}{{ range until 40 }}{{ $s = replace "a" "aa" $s }}{{ end }}{{ len $s }}',
    error: /exceeds|budget|memory/,
  },
  {
    name: 'list doubled with concat',
    template: '{{ $l := list 1 }}{{ range until 40 }}{{ $l = concat $l $l }}{{ end }}{{ len $l }}',
    error: /exceeds|budget|memory/,
  },
  {
    name: 'prepend in a loop',
    template: '{{ $l := list }}{{ range until 200000 }}{{ $l = prepend $l . }}{{ end }}{{ len $l }}',
    error: /work budget|steps|exceeded 2s/,
  },
  {
    name: 'map growth with set, then toJson',
    template:
      '{{ $d := dict }}{{ range $i := until 900000 }}{{ $_ := set $d (toString $i) $.password }}{{ end }}{{ toJson $d | len }}',
    error: /steps|budget|exceeds|exceeded 2s/,
  },
  {
    name: 'nested range over until 1000, three deep',
    template: '{{ range until 1000 }}{{ range until 1000 }}{{ range until 1000 }}x{{ end }}{{ end }}{{ end }}',
    error: /steps|exceeds/,
  },
  { name: 'until a billion', template: '{{ len (until 1000000000) }}', error: /exceeds|elements/ },
  { name: 'seq a billion', template: '{{ len (seq 1000000000) }}', error: /exceeds|elements/ },
  { name: 'untilStep a billion', template: '{{ len (untilStep 0 1000000000 1) }}', error: /exceeds|elements/ },
  { name: 'repeat a billion', template: '{{ repeat 1000000000 "x" }}', error: /exceeds/ },
  { name: 'indent a billion', template: '{{ indent 1000000000 .password }}', error: /exceeds/ },
  { name: 'printf with a ten-million width', template: '{{ printf "%9999999d" 1 | len }}', error: /exceeds/ },
  {
    name: 'repeat 1 MiB inside a 1,000-iteration loop, hashed',
    template: '{{ range until 1000 }}{{ repeat 1000000 "x" | sha256sum | trunc 1 }}{{ end }}',
    error: /work budget/,
  },
  {
    name: 'sha256sum of a growing string',
    template:
      '{{ $s := "" }}{{ range until 100000 }}{{ $s = printf "%s%s" $s "0123456789" }}{{ end }}{{ sha256sum $s }}',
    error: /work budget|exceeds/,
  },
  {
    name: 'recursion through define/template',
    template: '{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}',
    error: /depth/,
  },
  {
    name: 'recursion doubling its argument',
    template: '{{ define "r" }}{{ template "r" (printf "%s%s" . .) }}{{ end }}{{ template "r" .password }}',
    error: /exceeds|depth|budget/,
  },
  {
    name: 'a deeply nested dict, then toJson',
    template: '{{ $d := dict }}{{ range until 200000 }}{{ $d = dict "a" $d }}{{ end }}{{ toJson $d | len }}',
  },
  {
    name: 'a deeply nested dict, then deepCopy',
    template: '{{ $d := dict }}{{ range until 200000 }}{{ $d = dict "a" $d }}{{ end }}{{ deepCopy $d | len }}',
    error: /depth|exceeds|steps|budget/,
  },
  // deepCopy of a 2,000-deep dict costs 0.9–3.5 ms (a quiet machine to a busy one) and the work budget
  // charges it as one value: 9–35 s in all, past the 2 s deadline on any machine (2,000 copies once
  // finished in 1.9 s on a quiet one).
  {
    name: 'deepCopy of a 2,000-deep dict, 10,000 times',
    template:
      '{{ $d := dict }}{{ range until 2000 }}{{ $d = dict "a" $d }}{{ end }}{{ range until 10000 }}{{ $_ := deepCopy $d }}{{ end }}',
    error: /exceeded 2s/,
    needsDeadline: true,
  },
  // One call, quadratic inside (Sprig's uniq compares every pair): no budget between calls can stop it.
  {
    name: 'uniq of 200,000 distinct elements (one quadratic call)',
    template: '{{ len (uniq (until 200000)) }}',
    error: /exceeded 2s/,
    needsDeadline: true,
  },
  {
    name: 'fromYaml of a billion laughs',
    template: '{{ fromYaml .yaml | toJson | len }}',
    data: { yaml: billionLaughs },
  },
  {
    name: 'derivePassword over 40 users',
    template:
      '{{ range $i := until 40 }}{{ derivePassword 1 "long" $.password (printf "user-%d" $i) "example.com" }}{{ end }}',
    error: /derivePassword: more than 32 new|exceeded 2s/,
    needsDeadline: true,
  },
  {
    name: 'regexFind with nested quantifiers',
    template: '{{ regexFind "(a+)+$" .as }}',
    data: { as: `${'a'.repeat(46)}!` },
    needsDeadline: true,
  },
];
