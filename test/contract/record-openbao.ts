// Re-records test/contract/openbao-answers.json from a real OpenBao (`npm run record:openbao`): starts a
// throwaway `bao server -dev` (the pinned 2.7.2 from `npm run upstream`), enables kubernetes auth, asks
// every question of openbao-exchanges.ts and writes the answers. Commit the file with the OpenBao bump.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startOpenBao } from '../harness/openbao.ts';
import { vaultRequest } from '../harness/vault.ts';
import { ensureOpenBao } from '../upstream/paths.ts';
import { ANSWERS_FILE, type AnswersFile, ask, RECORD_COMMAND } from './openbao-exchanges.ts';

/** Asks a fresh dev server every question; the server is stopped and its dir removed afterwards. */
export async function recordFromOpenBao(): Promise<AnswersFile> {
  await ensureOpenBao();
  const dir = mkdtempSync(join(tmpdir(), 'vaultgate-record-'));
  const bao = await startOpenBao({ dev: true, dir });
  try {
    const enable = await vaultRequest({ addr: bao.addr, token: bao.rootToken }, 'POST', 'sys/auth/kubernetes', {
      type: 'kubernetes',
    });
    if (enable.status >= 300) throw new Error(`sys/auth/kubernetes: HTTP ${enable.status}`);
    return {
      server: bao.version,
      recorded: new Date().toISOString(),
      command: RECORD_COMMAND,
      answers: await ask(bao.addr, bao.rootToken),
    };
  } finally {
    await bao.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = await recordFromOpenBao();
  writeFileSync(ANSWERS_FILE, `${JSON.stringify(file, null, 2)}\n`);
  process.stdout.write(`${Object.keys(file.answers).length} answers from ${file.server} written to ${ANSWERS_FILE}\n`);
}
