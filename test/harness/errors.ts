// Harness failures that say what failed. node:test carries an error out of a test file's process with v8
// serialisation, which keeps an Error's message but turns anything else (a DOMException from a timed-out
// fetch, a plain object) into `{}`. So a harness step that fails rethrows an Error naming the step.
import { inspect } from 'node:util';

/** The error as text, whatever was thrown. */
export function describeError(err: unknown): string {
  if (err instanceof Error && err.message) return err.message;
  return inspect(err, { depth: 2, breakLength: Infinity });
}

/** An Error for `step` (which process or stage), with the original as its cause and optional log tails. */
export function stepFailed(step: string, err: unknown, details = ''): Error {
  return new Error(`${step} failed: ${describeError(err)}${details ? `\n${details}` : ''}`, { cause: err });
}
