// A harness fetch that times out or cannot connect fails with a message that names the step and the URL,
// and keeps it when node:test carries the error out of a test file's process (v8 serialisation): a raw
// timed-out fetch arrives there as `{}`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { deserialize, serialize } from 'node:v8';
import { harnessFetch } from './fetch.ts';

async function silentServer(): Promise<{ url: string; close: () => void }> {
  const srv = createServer(() => undefined); // accepts, never answers
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  return { url: `http://127.0.0.1:${port}/v1/sys/init`, close: () => srv.close() };
}

const acrossProcesses = (err: unknown): unknown => deserialize(serialize(err));

void describe('harnessFetch', () => {
  void test('a raw timed-out fetch loses its message across processes (why the wrapper exists)', async () => {
    const { url, close } = await silentServer();
    try {
      const err = await fetch(url, { signal: AbortSignal.timeout(200) }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.equal((acrossProcesses(err) as { message?: string }).message, undefined);
    } finally {
      close();
    }
  });

  void test('a timeout names the step, the URL and the deadline, also after serialisation', async () => {
    const { url, close } = await silentServer();
    try {
      const err = await harnessFetch('Vault PUT /v1/sys/init', url, { method: 'PUT', timeoutMs: 200 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof Error);
      const message = (acrossProcesses(err) as Error).message;
      assert.equal(message, `Vault PUT /v1/sys/init: ${url}: no answer within 200 ms`);
    } finally {
      close();
    }
  });

  void test('a refused connection names the step and the error code', async () => {
    const { url, close } = await silentServer();
    close();
    await new Promise((r) => setTimeout(r, 50));
    const err = await harnessFetch('etcd /v3/kv/range', url, { timeoutMs: 2000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.match(
      (acrossProcesses(err) as Error).message,
      /^etcd \/v3\/kv\/range: http:\/\/127\.0\.0\.1:\d+\/v1\/sys\/init: fetch failed \(ECONNREFUSED\)$/,
    );
  });
});
