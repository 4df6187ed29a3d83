// A minimal PostgreSQL client (protocol 3.0: startup, SCRAM-SHA-256 or md5 password authentication,
// one simple query, terminate) on node:net and node:crypto only, so that a pod of the vaultgate image
// (Node, no node_modules) can log in with a credential: see pg-probe.ts. One connection per call, as a
// client that logs in afresh would; never throws for a refused login or a failed query (the result says
// so, with PostgreSQL's SQLSTATE), and never puts the password in a result.
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

export interface PgLogin {
  host: string;
  port: number;
  user: string;
  password: string;
  database?: string;
  /** Whole exchange, connect to the last row (default 5 s). */
  timeoutMs?: number;
}

export type PgResult = { ok: true; rows: (string | null)[][] } | { ok: false; code: string; message: string };

/** Bound on one server message: the queries asked are tiny, anything larger is not a server we talk to. */
const MAX_MESSAGE = 1 << 20;
const PROTOCOL_3_0 = 196608;

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const cstr = (s: string): Buffer => Buffer.from(`${s}\0`, 'utf8');

function startupMessage(user: string, database: string): Buffer {
  const params = Buffer.concat([
    cstr('user'),
    cstr(user),
    cstr('database'),
    cstr(database),
    cstr('application_name'),
    cstr('vaultgate-pg-probe'),
    Buffer.from([0]),
  ]);
  const head = Buffer.alloc(8);
  head.writeInt32BE(params.length + 8, 0);
  head.writeInt32BE(PROTOCOL_3_0, 4);
  return Buffer.concat([head, params]);
}

/** ErrorResponse fields: S severity, C SQLSTATE, M message (PostgreSQL docs, "Error and Notice Message Fields"). */
function errorFields(body: Buffer): { code: string; message: string } {
  const f: Record<string, string> = {};
  let i = 0;
  while (i < body.length && body[i] !== 0) {
    const end = body.indexOf(0, i + 1);
    if (end < 0) break;
    f[String.fromCharCode(body[i]!)] = body.subarray(i + 1, end).toString('utf8');
    i = end + 1;
  }
  return { code: f.C ?? '?????', message: f.M ?? 'unknown error' };
}

/** Reads whole messages off a socket, in order. */
class MessageReader {
  #buf = Buffer.alloc(0);
  #waiting: (() => void) | undefined;
  #failure: Error | undefined;

  constructor(socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, chunk]);
      this.#wake();
    });
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }

  fail(err: Error): void {
    this.#failure ??= err;
    this.#wake();
  }

  #wake(): void {
    const w = this.#waiting;
    this.#waiting = undefined;
    w?.();
  }

  async next(): Promise<{ type: string; body: Buffer }> {
    for (;;) {
      if (this.#buf.length >= 5) {
        const len = this.#buf.readInt32BE(1);
        if (len < 4 || len > MAX_MESSAGE) throw new Error(`server message of ${len} bytes`);
        if (this.#buf.length >= len + 1) {
          const type = String.fromCharCode(this.#buf[0]!);
          const body = this.#buf.subarray(5, len + 1);
          this.#buf = this.#buf.subarray(len + 1);
          return { type, body };
        }
      }
      if (this.#failure) throw this.#failure;
      await new Promise<void>((resolve) => (this.#waiting = resolve));
    }
  }
}

/** The server's refusal (ErrorResponse) in the middle of the SCRAM exchange. */
class PgRefusal extends Error {
  constructor(readonly fields: { code: string; message: string }) {
    super(fields.message);
  }
}

const hmac = (key: Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();
const sha256 = (data: Buffer): Buffer => createHash('sha256').update(data).digest();

/**
 * SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL runs it: the user name is the startup message's, so
 * the client-first message carries an empty one; no channel binding. The password is used as given
 * (SASLprep is the identity for ASCII, which is what the database engine generates).
 */
async function scram(socket: Socket, reader: MessageReader, password: string): Promise<void> {
  const clientNonce = randomBytes(18).toString('base64');
  const clientFirstBare = `n=,r=${clientNonce}`;
  const first = Buffer.from(`n,,${clientFirstBare}`);
  const len = Buffer.alloc(4);
  len.writeInt32BE(first.length, 0);
  socket.write(message('p', Buffer.concat([cstr('SCRAM-SHA-256'), len, first])));
  const cont = await reader.next();
  if (cont.type === 'E') throw new PgRefusal(errorFields(cont.body));
  if (cont.type !== 'R' || cont.body.readInt32BE(0) !== 11) throw new Error(`expected SASLContinue, got ${cont.type}`);
  const serverFirst = cont.body.subarray(4).toString('utf8');
  const attrs = new Map(serverFirst.split(',').map((kv) => [kv.slice(0, 1), kv.slice(2)] as const));
  const nonce = attrs.get('r') ?? '';
  const salt = Buffer.from(attrs.get('s') ?? '', 'base64');
  const iterations = Number(attrs.get('i'));
  if (!nonce.startsWith(clientNonce) || salt.length === 0 || !(iterations > 0 && iterations <= 1_000_000))
    throw new Error('malformed SCRAM server-first message');
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = hmac(salted, 'Client Key');
  const withoutProof = `c=biws,r=${nonce}`;
  const authMessage = `${clientFirstBare},${serverFirst},${withoutProof}`;
  const signature = hmac(sha256(clientKey), authMessage);
  const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]!)).toString('base64');
  socket.write(message('p', Buffer.from(`${withoutProof},p=${proof}`)));
  const fin = await reader.next();
  if (fin.type === 'E') throw new PgRefusal(errorFields(fin.body));
  if (fin.type !== 'R' || fin.body.readInt32BE(0) !== 12) throw new Error(`expected SASLFinal, got ${fin.type}`);
  const expected = hmac(hmac(salted, 'Server Key'), authMessage).toString('base64');
  if (fin.body.subarray(4).toString('utf8') !== `v=${expected}`)
    throw new Error('the server did not prove it knows the password (SCRAM server signature mismatch)');
}

/** Connects, logs in as `login.user`, runs `sql` (one simple query) and disconnects. */
export async function pgQuery(login: PgLogin, sql: string): Promise<PgResult> {
  const socket = connect({ host: login.host, port: login.port });
  const reader = new MessageReader(socket);
  const timer = setTimeout(
    () => reader.fail(new Error(`no answer within ${login.timeoutMs ?? 5000} ms`)),
    login.timeoutMs ?? 5000,
  );
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve);
      socket.once('error', reject);
    });
    socket.write(startupMessage(login.user, login.database ?? 'postgres'));
    // Authentication, then parameters until ReadyForQuery.
    for (;;) {
      const m = await reader.next();
      if (m.type === 'E') return { ok: false, ...errorFields(m.body) };
      if (m.type === 'Z') break;
      if (m.type !== 'R') continue; // ParameterStatus, BackendKeyData, NoticeResponse
      const kind = m.body.readInt32BE(0);
      if (kind === 0) continue;
      if (kind === 5) {
        const md5 = (s: string | Buffer): string => createHash('md5').update(s).digest('hex');
        const inner = md5(`${login.password}${login.user}`);
        const outer = md5(Buffer.concat([Buffer.from(inner), m.body.subarray(4, 8)]));
        socket.write(message('p', cstr(`md5${outer}`)));
      } else if (kind === 10) {
        if (!m.body.subarray(4).toString('utf8').split('\0').includes('SCRAM-SHA-256'))
          throw new Error('the server offers no SCRAM-SHA-256');
        await scram(socket, reader, login.password);
      } else throw new Error(`authentication method ${kind} is not supported (SCRAM-SHA-256 and md5 are)`);
    }
    socket.write(message('Q', cstr(sql)));
    const rows: (string | null)[][] = [];
    let failure: { code: string; message: string } | undefined;
    for (;;) {
      const m = await reader.next();
      if (m.type === 'E') failure = errorFields(m.body);
      else if (m.type === 'D') {
        const row: (string | null)[] = [];
        let at = 2;
        for (let c = m.body.readInt16BE(0); c > 0; c--) {
          const n = m.body.readInt32BE(at);
          at += 4;
          row.push(n < 0 ? null : m.body.subarray(at, at + n).toString('utf8'));
          at += Math.max(n, 0);
        }
        rows.push(row);
      } else if (m.type === 'Z') break;
    }
    socket.write(message('X', Buffer.alloc(0)));
    return failure ? { ok: false, ...failure } : { ok: true, rows };
  } catch (err) {
    if (err instanceof PgRefusal) return { ok: false, ...err.fields };
    // The client's or the network's failure (ECONNREFUSED, a timeout, a malformed answer).
    const e = err as Error & { code?: string };
    return { ok: false, code: 'CLIENT', message: e.code ? `${e.code}: ${e.message}` : e.message };
  } finally {
    clearTimeout(timer);
    socket.destroy();
  }
}
