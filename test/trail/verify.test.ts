// Verification of rotated trail files: given in any order a shell glob yields, the chain is checked oldest
// first; files handed over in the wrong order do not verify.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { AuditTrail } from '../../trail/trail.ts';
import { fileSink } from '../../trail/sinks.ts';
import { createSigner, mergeJwks } from '../../trail/keys.ts';
import { orderRotatedFiles, verifyAuditFiles } from '../../trail/verify.ts';
import { policyUpdate, readAll, trailFixture } from './fixture.ts';

const fx = trailFixture('vaultgate-audit-verify-');

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
    const path = join(fx.dir, 'order.log');
    const sink = fileSink({ path, maxBytes: 4096 });
    const trail = await AuditTrail.open({ replica: 'w0', signer: createSigner(fx.key), sink });
    for (let i = 0; i < 30; i++) await trail.append(policyUpdate(i));
    await trail.close();
    const r = await verifyAuditFiles(readAll([...sink.files()].reverse()), mergeJwks(undefined, fx.key.publicJwk));
    assert.equal(r.ok, false);
  });
});
