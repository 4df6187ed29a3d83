// JSON as Go's encoding/json writes it, for plain JS values (Vault's KV data decoded with JSON.parse):
// sorted keys, HTML characters escaped unless `raw`, U+2028/U+2029 escaped. Template values have their
// own encoder (marshal.ts), which keeps Go's types.
export function goJson(v: unknown, raw = false, indent?: string): string {
  const sortKeys = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(sortKeys);
    if (x instanceof Uint8Array) return Buffer.from(x).toString('base64');
    if (typeof x === 'object' && x !== null)
      return Object.fromEntries(
        Object.keys(x)
          .sort()
          .map((k) => [k, sortKeys((x as Record<string, unknown>)[k])]),
      );
    return x === undefined ? null : x;
  };
  const text = JSON.stringify(sortKeys(v), null, indent) ?? 'null';
  const goText = text.replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
  return raw ? goText : goText.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}
