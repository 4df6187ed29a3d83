// A Vault path a tenant writes in an ESO object: refused at admission with the field and the rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { vaultPathFindings } from '../../../../webhook/rules/eso/vault-path.ts';

test('a traversal or an encoded segment is denied naming field and rule; a clean path or a non-string is not judged', () => {
  const f = vaultPathFindings('team-a/../team-b/db', 'spec.data[0].remoteRef.key', 'eso.vault-path');
  assert.equal(f.length, 1);
  assert.equal(f[0]?.field, 'spec.data[0].remoteRef.key');
  assert.equal(f[0]?.rule, 'eso.vault-path');
  assert.equal(f[0]?.severity, 'deny');
  assert.ok(vaultPathFindings('team-a/%2e%2e/x', 'f', 'r').length > 0);
  assert.deepEqual(vaultPathFindings('team-a/app/db', 'f', 'r'), []);
  assert.deepEqual(vaultPathFindings(42, 'f', 'r'), []);
});
