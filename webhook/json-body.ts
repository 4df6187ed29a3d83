// The admission routes' JSON body reader: express.json({ limit, type: () => true }) for the bodies the
// apiserver sends, without body-parser's generic machinery. For a 20-rule VaultPolicy review (2.4 KB)
// body-parser's path (type-is, content-type parsing, raw-body with an AsyncResource and an iconv-lite
// decoder stream, on-finished) costs ~9 µs more CPU per request than this reader: 80 against 71 µs
// for an HTTPS express app doing nothing else, on the benchmark machine. Same answers: strict JSON (an object or array, else a parse error), an empty body is {},
// a leading BOM is dropped (iconv-lite's stripBOM), no body at all leaves req.body undefined, and the
// same error objects (`type` entity.too.large → 413, entity.parse.failed → 400, request.aborted,
// request.size.invalid). A Content-Encoding or a charset parameter other than UTF-8 goes to
// body-parser itself, so those rare requests are answered exactly as before.
import { finished } from 'node:stream';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/** An error shaped like body-parser's http-errors: the webhook's error handler reads `type` and `status`. */
export class BodyReadError extends Error {
  readonly status: number;
  readonly statusCode: number;
  readonly expose = true;
  constructor(
    status: number,
    message: string,
    readonly type: string,
  ) {
    super(message);
    this.status = status;
    this.statusCode = status;
  }
}

/** body-parser json's FIRST_NON_WHITESPACE_REGEXP: JSON whitespace is space, tab, LF and CR only. */
const FIRST_NON_WHITESPACE = /^[\x20\x09\x0a\x0d]*([^\x20\x09\x0a\x0d]|$)/;

/** body-parser's strict json parse: an empty body is {}, anything but an object or array is refused. */
export function parseStrictJson(text: string): unknown {
  if (text.length === 0) return {};
  const first = text[0];
  if (first !== '{' && first !== '[') {
    const m = FIRST_NON_WHITESPACE.exec(text)?.[1];
    if (m !== '{' && m !== '[')
      throw new BodyReadError(
        400,
        `Unexpected token ${JSON.stringify(m ?? '')} in JSON: only an object or an array is accepted`,
        'entity.parse.failed',
      );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new BodyReadError(400, err instanceof Error ? err.message : 'invalid JSON', 'entity.parse.failed');
  }
}

/**
 * At most this many JSON values in one body, counted before it is parsed. JSON.parse costs about a
 * microsecond per value and up to three per key of a large object (V8 dictionary objects), against
 * ~6 ms per MiB of long strings: a 7 MiB body of tiny values took 0.6–1.7 s to parse, 16 of them in
 * flight would answer the last after the apiserver's 5 s timeout. 50,000 is above any object the
 * apiserver sends us within vaultgate's size limits (an ExternalSecret with its 1,000 data entries,
 * UPDATE with managedFields: ~30,000) and parses in ≤ 150 ms in the worst shape.
 */
export const MAX_JSON_VALUES = 50_000;

/**
 * An upper bound on the number of JSON values in a body, stopping once it passes `limit`: every value
 * after an array's or object's first follows a comma, and every array and object opens with a bracket,
 * so values ≤ commas + brackets + 1. First counted with native byte searches (memchr: a 7 MiB body in
 * a few milliseconds), strings included; only a body that count puts over the limit is scanned again
 * with its strings skipped (their commas and brackets are text: raw HCL is full of them), which costs
 * tens of milliseconds for 7 MiB at most, each string jumped over by a byte search for its closing quote.
 */
export function jsonValuesAtLeast(buf: Buffer, limit: number): number {
  let n = 1;
  for (const byte of [0x2c, 0x5b, 0x7b]) {
    let at = buf.indexOf(byte);
    while (at !== -1) {
      if (++n > limit) return valuesOutsideStrings(buf, limit);
      at = buf.indexOf(byte, at + 1);
    }
  }
  return n;
}

function valuesOutsideStrings(buf: Buffer, limit: number): number {
  let n = 1;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (c === 0x22) {
      let end = buf.indexOf(0x22, i + 1);
      while (end !== -1) {
        let backslashes = 0;
        while (buf[end - 1 - backslashes] === 0x5c) backslashes++;
        if (backslashes % 2 === 0) break;
        end = buf.indexOf(0x22, end + 1);
      }
      if (end === -1) return n; // an unterminated string: JSON.parse refuses the body
      i = end;
    } else if (c === 0x2c || c === 0x5b || c === 0x7b) {
      if (++n > limit) return n;
    }
  }
  return n;
}

/** Whether the request can take the lean path: identity encoding and a UTF-8 (or unspecified) charset. */
function plainUtf8(req: Request): boolean {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  const type = req.headers['content-type'];
  if (type === undefined || !type.includes(';')) return true; // no charset parameter: body-parser defaults to utf-8
  const lower = type.toLowerCase();
  return lower === 'application/json; charset=utf-8' || lower === 'application/json;charset=utf-8';
}

/** type-is hasBody: a Transfer-Encoding, or a numeric Content-Length (0 included). */
function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length']));
}

/** Drain the rest of a refused body, then answer (body-parser's dump: the connection stays usable). */
function failAfterDrain(req: Request, next: NextFunction, err: BodyReadError): void {
  if (req.complete || req.destroyed) {
    next(err);
    return;
  }
  finished(req, () => next(err));
  req.resume();
}

/**
 * One body being read. A class with inline listeners rather than named closures: the webhook runs
 * under tsx, whose esbuild keepNames wraps every named closure in an Object.defineProperty call.
 */
class BodyRead {
  readonly #chunks: Buffer[] = [];
  #received = 0;
  #done = false;

  constructor(
    private readonly req: Request,
    private readonly next: NextFunction,
    private readonly expected: number | undefined,
    private readonly limitBytes: number,
    private readonly maxValues: number | undefined,
  ) {
    req.on('data', (chunk: Buffer) => {
      this.#data(chunk);
    });
    req.on('end', () => {
      this.#end();
    });
    req.on('error', () => {
      this.#finish(new BodyReadError(400, 'request could not be read', 'request.aborted'));
    });
    req.on('aborted', () => {
      this.#finish(new BodyReadError(400, 'request aborted', 'request.aborted'));
    });
  }

  #data(chunk: Buffer): void {
    if (this.#done) return;
    this.#received += chunk.length;
    if (this.#received > this.limitBytes)
      this.#finish(new BodyReadError(413, 'request entity too large', 'entity.too.large'));
    else this.#chunks.push(chunk);
  }

  #end(): void {
    if (this.#done) return;
    if (this.expected !== undefined && this.#received !== this.expected) {
      this.#finish(new BodyReadError(400, 'request size did not match content length', 'request.size.invalid'));
      return;
    }
    const chunks = this.#chunks;
    const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#received);
    if (this.maxValues !== undefined && jsonValuesAtLeast(raw, this.maxValues) > this.maxValues) {
      this.#finish(new BodyReadError(413, `request has more than ${this.maxValues} JSON values`, 'entity.too.complex'));
      return;
    }
    let text = raw.toString('utf8');
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    let body: unknown;
    try {
      body = parseStrictJson(text);
    } catch (err) {
      this.#finish(err instanceof BodyReadError ? err : new BodyReadError(400, 'invalid JSON', 'entity.parse.failed'));
      return;
    }
    this.#finish(undefined, body);
  }

  #finish(err: BodyReadError | undefined, body?: unknown): void {
    if (this.#done) return;
    this.#done = true;
    this.#chunks.length = 0;
    if (err) {
      failAfterDrain(this.req, this.next, err);
      return;
    }
    (this.req as { body?: unknown }).body = body;
    this.next();
  }
}

/** `maxValues`: bodies with more JSON values (jsonValuesAtLeast) are refused unparsed, 413 `entity.too.complex`. */
export function jsonBody(opts: { limit: string; limitBytes: number; maxValues?: number }): RequestHandler {
  const max = opts.maxValues;
  const generic = express.json({
    limit: opts.limit,
    type: () => true,
    // body-parser hands the decoded bytes here before it parses them: the same bound for a compressed body.
    ...(max === undefined
      ? {}
      : {
          verify: (_req: unknown, _res: unknown, buf: Buffer) => {
            if (jsonValuesAtLeast(buf, max) > max)
              throw new BodyReadError(413, `request has more than ${max} JSON values`, 'entity.too.complex');
          },
        }),
  });
  return function readJsonBody(req: Request, res: Response, next: NextFunction): void {
    if (!plainUtf8(req)) {
      generic(req, res, next);
      return;
    }
    if (!('body' in req)) (req as { body?: unknown }).body = undefined;
    if (!hasBody(req)) {
      next();
      return;
    }
    const lengthHeader = req.headers['content-length'];
    const expected = lengthHeader === undefined ? undefined : Number.parseInt(lengthHeader, 10);
    if (expected !== undefined && expected > opts.limitBytes) {
      failAfterDrain(req, next, new BodyReadError(413, 'request entity too large', 'entity.too.large'));
      return;
    }
    new BodyRead(req, next, expected, opts.limitBytes, opts.maxValues);
  };
}
