// `$ref` between our schema files, resolved once where a schema is loaded (the CRD and type generator,
// the admission validator), so a shape is written once: a ClusterExternalSecret's externalSecretSpec
// *is* the ExternalSecret spec (`{"$ref": "externalsecret.schema.json#/properties/spec"}`), and cannot
// drift from it. Only file-relative references with a JSON pointer; sibling keywords of a `$ref`
// (a description, say) override the referenced ones. The result has no `$ref` left, which is what a
// CRD's openAPIV3Schema needs.

export type SchemaLoader = (file: string) => Record<string, unknown>;

function pointer(doc: unknown, ptr: string, ref: string): unknown {
  let node = doc;
  for (const raw of ptr.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node))
      throw new Error(`schema $ref ${ref}: ${JSON.stringify(key)} not found`);
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** A copy of `schema` with every `{"$ref": "<file>#<pointer>"}` replaced by what it points to. */
export function resolveRefs(
  schema: Record<string, unknown>,
  load: SchemaLoader,
  seen: readonly string[] = [],
): Record<string, unknown> {
  const walk = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(walk);
    if (node === null || typeof node !== 'object') return node;
    const obj = node as Record<string, unknown>;
    const ref = obj.$ref;
    if (typeof ref === 'string') {
      const [file = '', ptr = ''] = ref.split('#');
      if (!file.endsWith('.schema.json') || (ptr !== '' && !ptr.startsWith('/')))
        throw new Error(`schema $ref ${ref}: only "<file>.schema.json#/json/pointer" is supported`);
      if (seen.includes(ref)) throw new Error(`schema $ref cycle: ${[...seen, ref].join(' → ')}`);
      // Only the part pointed at is resolved (a file may point into itself).
      const target = resolveRefs(pointer(load(file), ptr, ref) as Record<string, unknown>, load, [...seen, ref]);
      const { $ref: _ref, ...siblings } = obj;
      return { ...target, ...(walk(siblings) as Record<string, unknown>) };
    }
    return Object.fromEntries(
      Object.entries(obj).map(([k, v]) => [k, k === 'enum' || k === 'default' || k === 'examples' ? v : walk(v)]),
    );
  };
  return walk(schema) as Record<string, unknown>;
}
