// One pino logger for every process. Redaction is the last line of defence: code must still never
// put a secret value into a log field, but if it does, these paths are censored.
import { pino, type Logger, type LoggerOptions } from 'pino';

export const REDACT_PATHS = [
  'token',
  '*.token',
  'jwt',
  '*.jwt',
  'client_token',
  '*.client_token',
  'auth.client_token',
  'secret_id',
  '*.secret_id',
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'headers["x-vault-token"]',
  '*.headers["x-vault-token"]',
  'data',
  '*.data',
  'stringData',
  '*.stringData',
  'secret.data',
  'privateKey',
  '*.privateKey',
  'key',
  '*.key',
];

export type { Logger };

export function createLogger(
  opts: { level?: string; name?: string; destination?: NodeJS.WritableStream } = {},
): Logger {
  const options: LoggerOptions = {
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    base: opts.name ? { component: opts.name } : {},
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}

/** A logger that discards everything: for tests and quiet CLI runs. */
export const silentLogger: Logger = pino({ level: 'silent' });
