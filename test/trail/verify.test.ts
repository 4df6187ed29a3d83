// Verification of rotated trail files: given in any order a shell glob yields, the chain is checked oldest
// first; files handed over in the wrong order do not verify.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditTrail } from '../../trail/trail.ts';
import { fileSink } from '../../trail/sinks.ts';
import { createSigner, generateAuditKey, mergeJwks, type AuditKey } from '../../trail/keys.ts';
import { orderRotatedFiles, verifyAuditFiles } from '../../trail/verify.ts';
import { auditVaultWrite } from '../../trail/events.ts';

let dir: string;
let key: AuditKey;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vaultgate-audit-verify-'));
  key = await generateAuditKey();
});
after(() => rmSync(dir, { recursive: true, force: true }));

const ev = (i: number) =>
  auditVaultWrite({
    action: 'update',
    object: 'policy',
    vaultName: `vaultgate.ns.policy-${i}`,
    reason: 'spec changed',
  });
const readAll = (files: string[]) => files.map((f) => ({ name: f, text: readFileSync(f, 'utf8') }));

void describe('verifying rotated files', () => {
  void test('a shell-glob order (x, x.1, x.2) is put oldest first', () => {
    assert.deepEqual(orderRotatedFiles(['a.log', 'a.log.1', 'a.log.2', 'b.log']), [
      'a.log.2',
      'a.log.1',
      'a.log',
      'b.log',
    ]);
  });

  void test('files given in the wrong order are caught as out-of-order / missing', async () => {
    const path = join(dir, 'order.log');
    const sink = fileSink({ path, maxBytes: 4096 });
    const trail = await AuditTrail.open({ replica: 'w0', signer: createSigner(key), sink });
    for (let i = 0; i < 30; i++) await trail.append(ev(i));
    await trail.close();
    const r = await verifyAuditFiles(readAll([...sink.files()].reverse()), mergeJwks(undefined, key.publicJwk));
    assert.equal(r.ok, false);
  });
});
