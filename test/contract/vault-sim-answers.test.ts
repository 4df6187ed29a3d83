// The simulator answers what a real OpenBao answered (test/contract/openbao-answers.json, recorded by
// `npm run record:openbao`): ACL decisions for the policies of test/policy/openbao-cases.ts and the error
// shapes the adapter branches on. The expected answers are OpenBao's, not policy/*.ts's: where the
// simulator (whose ACL check is policy/acl.ts) differs, the simulator is wrong.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { VaultSim } from '../sim/vault.ts';
import { ANSWERS_FILE, type AnswersFile, ask } from './openbao-exchanges.ts';

const recorded = JSON.parse(readFileSync(ANSWERS_FILE, 'utf8')) as AnswersFile;

void describe(`the Vault simulator answers as ${recorded.server.split(' (')[0]} did (${recorded.command}, ${recorded.recorded.slice(0, 10)})`, () => {
  let sim: VaultSim;
  let answers: Awaited<ReturnType<typeof ask>>;
  before(async () => {
    sim = await VaultSim.start();
    answers = await ask(sim.addr, sim.rootToken);
  });
  after(async () => {
    await sim?.stop();
  });

  void test('every recorded question is still asked (re-record after changing openbao-exchanges.ts)', () => {
    assert.deepEqual(Object.keys(answers).sort(), Object.keys(recorded.answers).sort());
  });

  for (const [key, expected] of Object.entries(recorded.answers)) {
    void test(key, () => {
      assert.deepEqual(answers[key], expected);
    });
  }
});
