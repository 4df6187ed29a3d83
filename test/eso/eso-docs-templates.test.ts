// `vaultgate validate` over ESO v0.16.2's own documentation examples for templates and for the Vault
// provider (docs/snippets/*template-v2*, vault-*-external-secret*, and the YAML blocks of
// docs/guides/templating.md and docs/provider/hashicorp-vault.md, from ESO's Go module): nothing is
// refused except what the README names (the template functions vaultgate does not render). Two
// liberties, both about the documents and not about templates: a `{{ … "x" … }}` value wrapped in
// double quotes (not valid YAML; ESO's page renders it as text) is re-quoted with single quotes, and
// what an example elides with `# ...` (the store, the data) is filled with a Vault store and a dataFrom.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseDocument, stringify } from 'yaml';
import { REFUSED_TEMPLATE_FUNCTIONS } from '../../eso/function-map.ts';
import type { KubeObject } from '../../webhook/admission/kinds.ts';
import { esoModuleDir } from '../upstream/go-oracle.ts';
import { denials, findings, schemaErrors } from './helpers.ts';

const REPO = new URL('../../', import.meta.url).pathname;

function esoDocs(): string {
  return join(esoModuleDir(), 'docs');
}

/** Every ExternalSecret document of the examples, named by where it comes from. */
function examples(docs: string): Array<{ name: string; text: string }> {
  const out: Array<{ name: string; text: string }> = [];
  const add = (name: string, text: string): void => {
    text
      .replace(/\{%-?\s*(raw|endraw)\s*-?%\}/g, '')
      .split(/^---\s*$/m)
      .forEach((d, i) => {
        // v1alpha1 examples are engine-v1 templates: ESO v0.16.2 serves no v1alpha1 ExternalSecret either.
        if (/^kind:\s*ExternalSecret\s*$/m.test(d) && !d.includes('external-secrets.io/v1alpha1'))
          out.push({ name: `${name}#${i}`, text: d });
      });
  };
  const snippets = readdirSync(join(docs, 'snippets'))
    .filter((f) => /template-v2|^vault-.*external-secret/.test(f) && f.endsWith('.yaml'))
    .sort();
  for (const f of snippets) add(f, readFileSync(join(docs, 'snippets', f), 'utf8'));
  for (const md of ['guides/templating.md', 'provider/hashicorp-vault.md']) {
    [...readFileSync(join(docs, md), 'utf8').matchAll(/```ya?ml\n([\s\S]*?)```/g)].forEach((m, j) =>
      add(`${md}[${j}]`, m[1]!),
    );
  }
  return out;
}

/** The example as an object vaultgate can be asked about (see the header for the two liberties). */
function asManifest(text: string): KubeObject {
  const requoted = text
    .replace(
      /^(\s*[\w."/-]+:\s*)"(\{\{.*\}\}[^"]*)"\s*$/gm,
      (_m, key: string, body: string) => `${key}'${body.replace(/'/g, "''")}'`,
    )
    .replace('external-secrets.io/v1beta1', 'external-secrets.io/v1');
  const doc = parseDocument(requoted, { uniqueKeys: false, logLevel: 'silent' });
  assert.deepEqual(
    doc.errors.map((e) => e.message),
    [],
    `not YAML even re-quoted:\n${requoted}`,
  );
  const o = doc.toJS() as KubeObject & { metadata?: { namespace?: string }; spec: Record<string, unknown> };
  o.metadata = { ...o.metadata, namespace: 'default' };
  o.spec.secretStoreRef ??= { name: 'vault-backend', kind: 'SecretStore' };
  if (!o.spec.data && !o.spec.dataFrom) o.spec.dataFrom = [{ extract: { key: 'app' } }];
  return o;
}

const refusedByReadme = (message: string): boolean =>
  [...REFUSED_TEMPLATE_FUNCTIONS.keys()].some((f) =>
    message.includes(`template function "${f}" is not supported by vaultgate`),
  );

void test("ESO's documentation examples: only functions the README names are refused", { timeout: 600_000 }, (t) => {
  const all = examples(esoDocs());
  assert.ok(all.length >= 20, `${all.length} examples`);
  const dir = mkdtempSync(join(tmpdir(), 'eso-docs-'));
  try {
    const refused: string[] = [];
    for (const [i, ex] of all.entries()) {
      const o = asManifest(ex.text);
      assert.deepEqual(schemaErrors(o), [], ex.name);
      const ds = denials(findings(o));
      for (const d of ds) assert.ok(refusedByReadme(d.message), `${ex.name}: ${d.field}: ${d.message}`);
      if (ds.length > 0)
        refused.push(
          `${ex.name}: ${ds.map((d) => d.message.replace(/ is not supported by vaultgate.*/, '')).join('; ')}`,
        );
      writeFileSync(
        join(dir, `${String(i).padStart(2, '0')}-${basename(ex.name).replace(/[^\w.-]/g, '_')}.yaml`),
        stringify(o),
      );
    }
    t.diagnostic(`${all.length} examples; refused (named in the README): ${refused.join(' | ') || 'none'}`);
    // Today only the literal example's htpasswd (bcrypt's random salt: the Secret would never converge).
    assert.deepEqual(
      refused.map((r) => r.split(':')[0]),
      ['template-v2-literal-example.yaml#0'],
    );

    // The same through the CLI a GitOps pipeline runs: only that file is DENIED (pkcs12key/pkcs12cert pass).
    const cli = spawnSync(process.execPath, ['--import', 'tsx', join(REPO, 'cli/main.ts'), 'validate', '-f', dir], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 300_000,
    });
    const deniedFiles = [...cli.stdout.matchAll(/^DENIED .*\((.+?):\d+\)$/gm)].map((m) => basename(m[1]!));
    assert.equal(cli.status, 1, cli.stdout + cli.stderr);
    assert.equal(deniedFiles.length, 1, cli.stdout);
    assert.ok(
      deniedFiles.every((f) => f.includes('literal-example')),
      cli.stdout,
    );
    assert.match(cli.stdout, /htpasswd" is not supported by vaultgate: its output changes on every render/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
