// ESO v0.16.2's own documentation examples of Vault SecretStores and the Vault PushSecret
// (docs/snippets/vault-*-store.yaml, vault-pushsecret.yaml, from ESO's Go module; v1beta1 read as v1, a
// subset of it) through vaultgate's admission core: nothing is refused except what the README names (iam
// auth, a long-lived ServiceAccount token Secret, a store without an auth method), and the userPass,
// ldap and cert examples that vaultgate used to refuse are admitted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../webhook/admission/kinds.ts';
import { esoModuleDir } from '../upstream/go-oracle.ts';
import { denials, findings } from './helpers.ts';

/** Refusals the README names (ESO section), by rule. */
const README_REFUSALS: Record<string, string> = {
  'eso.store.auth-unsupported': 'iam/gcp auth and auth.kubernetes.secretRef are not supported by vaultgate',
  'eso.store.auth-required': 'vaultgate never reads Vault for a store with a token of its own',
};

function snippets(): Array<{ file: string; obj: KubeObject }> {
  const dir = join(esoModuleDir(), 'docs', 'snippets');
  return readdirSync(dir)
    .filter((f) => /^vault-.*-store\.yaml$|^vault-pushsecret\.yaml$/.test(f))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(
        readFileSync(join(dir, file), 'utf8').replaceAll('external-secrets.io/v1beta1', 'external-secrets.io/v1'),
      )
        .map((d) => d.toJS() as KubeObject | null)
        .filter(
          (o): o is KubeObject => typeof o?.apiVersion === 'string' && o.apiVersion.startsWith('external-secrets.io/'),
        )
        .map((obj) => ({ file, obj })),
    );
}

void test("ESO's Vault store and PushSecret examples: refused only for what the README names", () => {
  const all = snippets();
  assert.ok(all.length >= 9, `${all.length} examples`);
  const refused: string[] = [];
  const admitted: string[] = [];
  for (const { file, obj } of all) {
    // The mTLS example elides its CA as "..." (not base64): the one schema liberty taken here.
    const o =
      file === 'vault-mtls-store.yaml'
        ? (JSON.parse(JSON.stringify(obj).replace('"caBundle":"..."', '"caBundle":"Y2E="')) as KubeObject)
        : obj;
    const ds = denials(findings(o, undefined, 'default'));
    const unnamed = ds.filter((d) => !README_REFUSALS[d.rule]);
    assert.deepEqual(
      unnamed.map((d) => `${d.field}: ${d.message} (${d.rule})`),
      [],
      file,
    );
    (ds.length ? refused : admitted).push(file);
  }
  for (const file of [
    'vault-userpass-store.yaml',
    'vault-ldap-store.yaml',
    'vault-pushsecret.yaml',
    'vault-jwt-store.yaml',
    'vault-token-store.yaml',
    'vault-approle-store.yaml',
  ]) {
    assert.ok(admitted.includes(file), `${file} admitted (refused: ${refused.join(', ')})`);
  }
});
