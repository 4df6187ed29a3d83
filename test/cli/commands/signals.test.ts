// A long-running command ends on SIGTERM (the kubelet) or SIGINT (a terminal), and says which.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { untilSignal } from '../../../cli/commands/signals.ts';

test('resolves with the name of the first signal, and stops listening', async () => {
  const before = process.listenerCount('SIGTERM');
  const waiting = untilSignal();
  process.emit('SIGINT');
  assert.equal(await waiting, 'SIGINT');
  const again = untilSignal();
  process.emit('SIGTERM');
  assert.equal(await again, 'SIGTERM');
  assert.ok(process.listenerCount('SIGTERM') <= before + 1, 'once: listeners do not pile up per signal received');
});
