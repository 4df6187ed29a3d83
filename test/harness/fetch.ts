// fetch with a deadline whose failures say what failed. A timed-out fetch rejects with a DOMException
// (TimeoutError), which node:test serialises from a test file's process as `{}`: a harness step that
// timed out then failed with no message at all ("e2e 5: faults" did). Every harness fetch goes through here.
export class HarnessFetchError extends Error {
  constructor(what: string, url: string, cause: unknown, timeoutMs: number) {
    const c = cause as { name?: string; message?: string; cause?: { code?: string; message?: string } };
    const why =
      c?.name === 'TimeoutError' || c?.name === 'AbortError'
        ? `no answer within ${timeoutMs} ms`
        : `${c?.message ?? String(cause)}${c?.cause?.code ? ` (${c.cause.code})` : c?.cause?.message ? ` (${c.cause.message})` : ''}`;
    super(`${what}: ${url}: ${why}`);
    this.name = 'HarnessFetchError';
  }
}

export async function harnessFetch(
  what: string,
  url: string,
  init: RequestInit & { timeoutMs?: number } = {},
): Promise<Response> {
  const { timeoutMs = 10_000, ...rest } = init;
  try {
    return await fetch(url, { ...rest, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new HarnessFetchError(what, url, err, timeoutMs);
  }
}
