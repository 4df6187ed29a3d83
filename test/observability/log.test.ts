import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../../observability/log.ts';

function capture(): { stream: Writable; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      chunks.push(chunk.toString());
      cb();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

test('secret-bearing fields are censored in a log line (top level and one level down)', () => {
  const out = capture();
  const log = createLogger({ level: 'info', name: 'controller', destination: out.stream });
  log.info(
    {
      token: 's.hvs-TOKEN',
      headers: { authorization: 'Bearer abc', 'x-vault-token': 'hvs.x' },
      login: { password: 'pw' },
      secret: { data: { password: 'cGFzc3dvcmQ=' } },
      key: '-----BEGIN PRIVATE KEY-----',
      namespace: 'team-a',
    },
    'wrote',
  );
  const [line] = out.lines();
  const text = JSON.stringify(line);
  for (const secret of ['s.hvs-TOKEN', 'Bearer abc', 'hvs.x', '"pw"', 'cGFzc3dvcmQ=', 'BEGIN PRIVATE KEY'])
    assert.ok(!text.includes(secret), `${secret} reached the log`);
  assert.equal(line?.token, '[REDACTED]');
  assert.equal(line?.namespace, 'team-a', 'other fields stay readable');
  assert.equal(line?.component, 'controller');
  assert.equal(line?.msg, 'wrote');
});

test('a request logged whole: its Authorization and Vault token headers are censored', () => {
  const out = capture();
  const log = createLogger({ level: 'info', destination: out.stream });
  log.info(
    { req: { method: 'POST', headers: { authorization: 'Bearer nested-canary', 'x-vault-token': 'hvs.nested' } } },
    'call',
  );
  const text = JSON.stringify(out.lines()[0]);
  for (const secret of ['nested-canary', 'hvs.nested']) assert.ok(!text.includes(secret), `${secret} reached the log`);
  assert.match(text, /"method":"POST"/);
});

test('the level filters: debug lines are dropped at info', () => {
  const out = capture();
  const log = createLogger({ level: 'info', destination: out.stream });
  log.debug('hidden');
  log.warn('shown');
  assert.deepEqual(
    out.lines().map((l) => l.msg),
    ['shown'],
  );
});
