// encoding/pem as Go reads and writes blocks: ESO's filterPEM and Sprig's buildCustomCert depend on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pemDecode, pemEncode } from '../../golang/pem.ts';

test('encode wraps base64 at 64 columns with headers first; decode returns the block and the rest', () => {
  const bytes = Buffer.alloc(60, 7);
  const pem = pemEncode('TEST', bytes, new Map([['Proc-Type', '4,ENCRYPTED']]));
  const lines = pem.split('\n');
  assert.equal(lines[0], '-----BEGIN TEST-----');
  assert.equal(lines[1], 'Proc-Type: 4,ENCRYPTED');
  assert.equal(lines[2], '');
  assert.equal(lines[3]?.length, 64);
  assert.equal(lines.at(-2), '-----END TEST-----');
  const { block, rest } = pemDecode(`junk before\n${pem}after`);
  assert.equal(block?.type, 'TEST');
  assert.deepEqual(block?.bytes, bytes);
  assert.equal(block?.headers.get('Proc-Type'), '4,ENCRYPTED');
  assert.equal(rest, 'after');
});

test('a block whose END type differs, or whose body is not base64, is skipped as Go skips it', () => {
  const bad = '-----BEGIN A-----\nAAAA\n-----END B-----\n';
  assert.equal(pemDecode(bad).block, undefined);
  const notB64 = '-----BEGIN A-----\n@@@@\n-----END A-----\n';
  assert.equal(pemDecode(notB64).block, undefined);
  const good = pemEncode('C', Buffer.from('hi'));
  assert.equal(pemDecode(bad + good).block?.type, 'C', 'the next valid block is found');
});
